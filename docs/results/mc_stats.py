#!/usr/bin/env python3
"""Cforall's statistics of message-centric runs, one row per run.

    target/release/loka bench run BENCH... --engine message-centric --victims V --json --out runs.jsonl
    python3 docs/results/mc_stats.py runs.jsonl

Prints a markdown table: victims, bench, msgs/s, gulps, average gulp size, missed gulps per
thousand gulps, steal attempts, candidates watched, queues stolen, letters stolen per million
letters posted.
"""
import json
import sys

rows = [json.loads(line) for path in sys.argv[1:] for line in open(path) if line.strip()]
print("| victims | bench | M msgs/s | gulps | avg gulp | missed / 1000 gulps | steal attempts"
      " | watched | queues stolen | letters stolen / M posted |")
print("|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    t = r["telemetry"]
    m = t.get("message_centric")
    if m is None:
        continue
    missed = 1000.0 * m["missed_gulps"] / m["gulps"] if m["gulps"] else 0.0
    stolen = 1e6 * m["letters_stolen"] / m["letters_posted"] if m["letters_posted"] else 0.0
    print(f"| {t.get('mc_victims', '?')} | {r['bench']} | {r['msgs_per_sec'] / 1e6:.2f} | {m['gulps']}"
          f" | {m['avg_gulp_size']:.1f} | {missed:.2f} | {m['steal_attempts']} | {m['steal_deferred']}"
          f" | {m['queues_stolen']} | {stolen:.0f} |")
