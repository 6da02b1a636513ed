#!/usr/bin/env python3
"""Panini's comparison: the same benchmarks under several execution modes (or policies), run
alternately round by round (mode A, B, C, A, B, C, ...) so that host noise falls on all alike.
Prints per benchmark the median seconds of each mode, the range, and Panini's improvement metric
I = (T_mode - T_ref) / T_mode of the reference mode over each other mode (positive: the reference
is faster), and the average over the benchmarks.

  docs/results/exec_modes.py LOKA_BINARY --size quick|full --rounds 5 --workers 2 \
      --flags "--exec all-thread" "--exec all-task" "--exec auto" --ref 2 BENCH [BENCH ...]

`--flags` lists one set of extra flags per mode; `--ref` is the index of the reference mode.
"""
import argparse, json, shlex, statistics, subprocess, sys

p = argparse.ArgumentParser()
p.add_argument("loka")
p.add_argument("benches", nargs="+")
p.add_argument("--size", default="quick")
p.add_argument("--rounds", type=int, default=5)
p.add_argument("--workers", default="2")
p.add_argument("--flags", nargs="+", required=True)
p.add_argument("--ref", type=int, default=0)
p.add_argument("--out", default=None, help="append every record here (JSON lines)")
a = p.parse_args()

secs = {(b, i): [] for b in a.benches for i in range(len(a.flags))}
out = open(a.out, "a") if a.out else None
for r in range(a.rounds):
    for b in a.benches:
        for i, flags in enumerate(a.flags):
            cmd = [a.loka, "bench", "run", b, "--size", a.size, "--workers", a.workers, "--json"]
            cmd += shlex.split(flags)
            line = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.splitlines()[0]
            d = json.loads(line)
            if not d["verified"]:
                sys.exit(f"{b} {flags}: not verified: {d['telemetry'].get('check')}")
            secs[(b, i)].append(d["seconds"])
            if out:
                d["mode_flags"] = flags
                out.write(json.dumps(d) + "\n")

names = [f.replace("--exec ", "").replace("--policy ", "") for f in a.flags]
print("| bench | " + " | ".join(f"{n} (s)" for n in names) + " | " +
      " | ".join(f"I vs {n}" for i, n in enumerate(names) if i != a.ref) + " |")
print("|---|" + "---|" * (len(names) + len(names) - 1))
gains = {i: [] for i in range(len(names)) if i != a.ref}
for b in a.benches:
    med = [statistics.median(secs[(b, i)]) for i in range(len(names))]
    cells = [f"{m:.4f} ({min(secs[(b, i)]):.4f}–{max(secs[(b, i)]):.4f})" for i, m in enumerate(med)]
    g = []
    for i in gains:
        gi = (med[i] - med[a.ref]) / med[i]
        gains[i].append(gi)
        g.append(f"{gi * 100:+.0f}%")
    print(f"| {b} | " + " | ".join(cells) + " | " + " | ".join(g) + " |")
print("| **average** | " + " | ".join("" for _ in names) + " | " +
      " | ".join(f"**{statistics.mean(v) * 100:+.0f}%**" for v in gains.values()) + " |")
