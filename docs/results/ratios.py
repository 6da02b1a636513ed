"""Prints, from the records of `loka bench policies ... --out FILE`, a Markdown table of every
policy's median msgs/s as a ratio to `cls` on the same benchmark (medians over the repeats, which
`policies` runs interleaved), flags ratios under a threshold and spreads over 10 %.

usage: python3 docs/results/ratios.py FILE [THRESHOLD]     (THRESHOLD defaults to 0.95)
"""
import json
import statistics
import sys
from collections import defaultdict


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.strip())
    path = sys.argv[1]
    threshold = float(sys.argv[2]) if len(sys.argv) == 3 else 0.95
    runs = defaultdict(list)  # (bench, policy) -> msgs/s
    benches, policies = [], []
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if r.get("runtime") != "loka" or not r.get("verified"):
                continue
            policy = f"{r['engine']}/{r['policy']}" if r["engine"] != "actor-centric" else r["policy"]
            if r["bench"] not in benches:
                benches.append(r["bench"])
            if policy not in policies:
                policies.append(policy)
            runs[(r["bench"], policy)].append(r["msgs_per_sec"])
    others = [p for p in policies if p != "cls"]
    print("| bench | cls msgs/s | " + " | ".join(others) + " |")
    print("|---|---:|" + "---:|" * len(others))
    worst = {p: (9.0, "") for p in others}
    for bench in benches:
        base_runs = runs.get((bench, "cls"))
        if not base_runs:
            continue
        base = statistics.median(base_runs)
        cells = []
        for p in others:
            xs = runs.get((bench, p))
            if not xs:
                cells.append("–")
                continue
            med = statistics.median(xs)
            ratio = med / base
            spread = (max(xs) - min(xs)) / med if len(xs) > 1 else 0.0
            mark = "**" if ratio < threshold else ""
            noisy = " ±" if spread > 0.10 else ""
            cells.append(f"{mark}{ratio:.2f}{mark}{noisy}")
            if ratio < worst[p][0]:
                worst[p] = (ratio, bench)
        print(f"| {bench} | {base / 1e6:.2f} M | " + " | ".join(cells) + " |")
    print()
    print("Worst ratio per policy: " + "; ".join(
        f"`{p}` {r:.2f} ({b})" for p, (r, b) in worst.items() if b))


if __name__ == "__main__":
    main()
