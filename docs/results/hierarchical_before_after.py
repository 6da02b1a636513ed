"""Compares two simulation runs of the same benchmarks (`loka bench run --engine sim --out FILE`,
one FILE per binary) as a Markdown table: per benchmark, `cls`'s virtual time (from AFTER) and the
speed-up over `cls` of `hierarchical`, `hierarchical:auto` and `auto` in BEFORE and AFTER, with the
wake-ups of parked workers (`unparks`) under `hierarchical`. A benchmark whose `cls` virtual time
differs between the two files is marked "(varies)": the simulation of it is not deterministic
(matrix-search-rr: its jobs come from a plain thread, folded in when the host's timing says).

usage: python3 docs/results/hierarchical_before_after.py BEFORE.jsonl AFTER.jsonl
"""
import json
import sys

POLICIES = ["hierarchical", "hierarchical:auto", "auto"]


def load(path):
    runs = {}
    for line in open(path):
        r = json.loads(line)
        runs[(r["bench"], r["policy"].removeprefix("sim/"))] = r
    return runs


def main():
    old, new = load(sys.argv[1]), load(sys.argv[2])
    benches = []
    for bench, _ in new:
        if bench not in benches:
            benches.append(bench)
    heads = " | ".join(f"{p} before → after" for p in POLICIES)
    print(f"| bench | cls virtual time | {heads} | wake-ups under hierarchical |")
    print("|---|---:|" + "---:|" * len(POLICIES) + "---:|")
    for bench in benches:
        cls, cls_old = new.get((bench, "cls")), old.get((bench, "cls"))
        if cls is None:
            continue
        same = cls_old is None or abs(cls_old["virtual_seconds"] - cls["virtual_seconds"]) < 1e-9
        note = "" if same else " (varies)"

        def speedup(r):
            return f"{cls['virtual_seconds'] / r['virtual_seconds']:.2f}×" if r else "–"

        cells = [f"{speedup(old.get((bench, p)))} → {speedup(new.get((bench, p)))}" for p in POLICIES]
        o, n = old.get((bench, "hierarchical")), new.get((bench, "hierarchical"))
        wakes = f"{o['telemetry']['unparks']:,} → {n['telemetry']['unparks']:,}" if o and n else "–"
        print(
            f"| {bench}{note} | {cls['virtual_seconds'] * 1e3:.3f} ms | "
            + " | ".join(cells)
            + f" | {wakes} |"
        )


main()
