"""Prints the simulation's predictions from a `loka bench policies --engine sim --out FILE` (or
`loka bench run --out FILE`) JSON-lines file as a Markdown table: per benchmark, the `cls` virtual
time and, for each other policy, the predicted speed-up over `cls` (cls virtual time / policy
virtual time), each with the share of activations on the actor's home node in brackets; then
each policy's worst row, and, when `auto` is among the policies, `auto` against the best of the
others on every row. Benchmarks whose simulation is not reproducible (jobs sent by a plain thread
while the actors run: the round-robin Matrix Search variants, docs/simulation.md) are marked and
left out of the counts: one run of theirs moves by ±10% from the next whatever the policy.

usage: python3 docs/results/sim_table.py FILE POLICY...   (the first POLICY is the baseline)
"""
import json
import sys

# Fed by a plain thread while they run, so one run's virtual time is not the next's.
NOT_REPRODUCIBLE = ("matrix-search-rr", "matrix-search-block-rr")


def main():
    path, policies = sys.argv[1], sys.argv[2:]
    runs = {}
    order = []
    for line in open(path):
        r = json.loads(line)
        policy = r["policy"].removeprefix("sim/")
        if r["bench"] not in order:
            order.append(r["bench"])
        runs[(r["bench"], policy)] = r

    def home(r):
        t = r["telemetry"]
        execs = max(t["exec_home_pu"] + t["exec_home_node"] + t["exec_remote_node"], 1)
        return 100 * (t["exec_home_pu"] + t["exec_home_node"]) / execs

    base = policies[0]
    print(f"| bench | {base} virtual time | " + " | ".join(policies[1:]) + " |")
    print("|---|---:|" + "---:|" * (len(policies) - 1))
    for bench in order:
        b = runs.get((bench, base))
        if b is None:
            continue
        flag = "" if b["verified"] else " (not verified)"
        if bench in NOT_REPRODUCIBLE:
            flag += " (not reproducible)"
        cells = [f"{b['virtual_seconds'] * 1e3:.3f} ms ({home(b):.0f}%){flag}"]
        for p in policies[1:]:
            r = runs.get((bench, p))
            if r is None:
                cells.append("–")
                continue
            speedup = b["virtual_seconds"] / r["virtual_seconds"]
            flag = "" if r["verified"] else " (not verified)"
            cells.append(f"{speedup:.2f}× ({home(r):.0f}%){flag}")
        print(f"| {bench} | " + " | ".join(cells) + " |")
    summary(runs, order, policies)


def summary(runs, order, policies):
    """Each policy's worst speed-up over the baseline, and `auto` against the best of the rest."""
    base = policies[0]

    def speedup(bench, p):
        b, r = runs.get((bench, base)), runs.get((bench, p))
        return None if b is None or r is None else b["virtual_seconds"] / r["virtual_seconds"]

    order = [bench for bench in order if bench not in NOT_REPRODUCIBLE]
    print()
    worst = []
    for p in policies[1:]:
        rows = [(s, bench) for bench in order if (s := speedup(bench, p)) is not None]
        if rows:
            s, bench = min(rows)
            below = sum(1 for s, _ in rows if s < 0.9)
            worst.append(f"`{p}` {s:.2f} ({bench}; {below} of {len(rows)} rows below 0.9)")
    print("Worst row per policy: " + "; ".join(worst) + ".")
    if "auto" in policies[1:]:
        short = []
        for bench in order:
            a = speedup(bench, "auto")
            others = [1.0] + [s for p in policies[1:] if p != "auto" and (s := speedup(bench, p))]
            if a is not None and a < 0.95 * max(others):
                short.append(f"{bench} {a / max(others):.2f}")
        print(f"`auto` below 0.95× the best of `{base}` and every other policy on "
              f"{len(short)} of {len(order)} rows" + (": " + ", ".join(short) if short else "") + ".")


main()
