"""Runs `loka bench run` for each (benchmark, policy) and prints a Markdown table of the medians of
the results and of their scheduler telemetry.

usage: python3 docs/results/policy_table.py [--view locality|hierarchical] TOPOLOGY WORKERS REPEAT BENCH... -- POLICY...
Needs target/release/loka (cargo build --release -p loka-cli). Each record is also appended to
/tmp/policy-table-<topology>.jsonl.
"""
import json
import statistics
import subprocess
import sys

VIEWS = {
    # column title -> function of (median telemetry getter, records)
    "locality": [
        ("exec on home PU %", lambda m, execs: f"{100 * m('exec_home_pu') / max(execs, 1):.1f}"),
        ("exec on home node %", lambda m, execs: f"{100 * (m('exec_home_pu') + m('exec_home_node')) / max(execs, 1):.1f}"),
        ("steals", lambda m, execs: f"{m('steals'):,.0f}"),
        ("steals by level g0/g1/g2/g3", lambda m, execs: "/".join(str(int(m(("steals_by_level", i)))) for i in range(4))),
        ("HPU pushes", lambda m, execs: f"{m('hpu_pushes'):,.0f}"),
        ("queue wait p99 ns", lambda m, execs: f"{m('queue_wait_ns_p99'):,.0f}"),
        ("hubs released", lambda m, execs: f"{m('hubs_released'):.0f}"),
        ("migrations", lambda m, execs: f"{m('migrations'):,.0f}"),
    ],
    "hierarchical": [
        ("migrations", lambda m, execs: f"{m('migrations'):,.0f}"),
        ("foreign exec", lambda m, execs: f"{m('foreign_exec'):,.0f}"),
        ("bring-home steals", lambda m, execs: f"{m('bring_home_steals'):,.0f}"),
        ("hubs", lambda m, execs: f"{m('hubs'):,.0f}"),
        ("steals", lambda m, execs: f"{m('steals'):,.0f}"),
        ("exec on home node %", lambda m, execs: f"{100 * (m('exec_home_pu') + m('exec_home_node')) / max(execs, 1):.1f}"),
        ("balance rounds", lambda m, execs: f"{m('balance_rounds'):,.0f}"),
        ("balance pulls", lambda m, execs: f"{m('balance_migrations'):,.0f}"),
    ],
}


def value(telemetry, key):
    if isinstance(key, tuple):
        name, i = key
        seq = telemetry.get(name, [])
        return seq[i] if i < len(seq) else 0
    return telemetry.get(key, 0)


def main(argv):
    view = "locality"
    if argv[:1] == ["--view"]:
        view, argv = argv[1], argv[2:]
    topo, workers, repeat = argv[0], argv[1], int(argv[2])
    sep = argv.index("--")
    benches, policies = argv[3:sep], argv[sep + 1:]
    columns = VIEWS[view]
    log = open(f"/tmp/policy-table-{topo.replace(':', '_').replace('/', '_')}.jsonl", "a")
    print("| bench | policy | msgs/s | s | " + " | ".join(c for c, _ in columns) + " | verified |")
    print("|---|---|---|---|" + "---|" * len(columns) + "---|")
    for bench in benches:
        for policy in policies:
            cmd = ["target/release/loka", "bench", "run", bench, "--policy", policy,
                   "--topology", topo, "--workers", workers, "--repeat", str(repeat), "--json"]
            run = subprocess.run(cmd, capture_output=True, text=True)
            if run.returncode != 0:
                print(f"FAILED: {' '.join(cmd)}: {run.stderr.strip()}", file=sys.stderr)
                continue
            recs = [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
            for r in recs:
                log.write(json.dumps(r) + "\n")
            tel = [r["telemetry"] for r in recs]
            m = lambda key: statistics.median(value(t, key) for t in tel)
            execs = m("exec_home_pu") + m("exec_home_node") + m("exec_remote_node")
            cells = [f(m, execs) for _, f in columns]
            rate = statistics.median(r["msgs_per_sec"] for r in recs)
            secs = statistics.median(r["seconds"] for r in recs)
            ok = all(r["verified"] for r in recs)
            print(f"| {bench} | {policy} | {rate:,.0f} | {secs:.4f} | " + " | ".join(cells) + f" | {ok} |")


if __name__ == "__main__":
    main(sys.argv[1:])
