"""Blind validation of the simulation engine: every measured figure in figures.tsv (the seeds'
tables and the 16-core real-hardware table) beside the simulation's prediction of it.

For each row the simulation runs the row's benchmark twice on the row's machine, under the
row's policy and under its baseline, and predicts the speed-up as baseline virtual time / policy
virtual time. Printed per row: measured, predicted, whether the directions agree and the ratio
predicted / measured; then the counts the simulation is judged by (README.md in this folder).

    python3 docs/results/validation/validate.py [--size row|quick] [--only REGEX] [--exclude REGEX]
        [--jobs N] [--out runs.jsonl] [--loka target/release/loka] [--timeout SECS]
        [--stand-in NAME=POLICY ...]

Runs are cached in --out (one JSON line per simulation run, keyed by its command line), so an
interrupted validation resumes, and the table can be printed again without running anything
(--no-run). Simulated time does not depend on the host's load, so --jobs runs several at once.

The protocol (README.md): the model is frozen in a commit before the script runs; the first
run is reported as it came out; a constant is never changed to fix a row.
"""
import argparse
import statistics
import tempfile
import concurrent.futures
import csv
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# Names in figures.tsv that are not loka policy specs (README.md, "Names that are not loka
# policy specs"), and what the simulation runs for them meanwhile. A row run with a stand-in on
# either side is marked in the table: its comparison is not the text's own. `None`: nothing in
# the simulation stands for it, and the row is listed as not comparable.
STAND_INS = {
    # The simulation's workers sit on fixed PUs: its `cls` is Wölke's thread-pinned CLS-TP.
    "cls-tp": ("cls", False),
    "lgs-uc": ("lgs:auto", True),
    "lgs-uw": ("lgs:tp", True),
    # The stock Erlang VM: loka's `erlang` policy (its wake-up and stealing rules, without the
    # VM's periodic balancing). Until 2026-12-02 (the first run) `cls` stood in for it; the
    # comparison with `cls` is still printed with `--stand-in erlang-default=cls`.
    "erlang-default": ("erlang", True),
    # The stock VM with its best options (scheduler binding, load compaction): loka's workers are
    # bound to PUs, so `erlang` is the nearest.
    "erlang-best-tuning": ("erlang", True),
    "cls-interleaved": None,
    "cls-tp-interleaved": None,
    "erlang-default-1node": None,
}


def simulated(row, name):
    """The policy the simulation runs for `name` in `row`, whether it is a stand-in, or None."""
    if "/" in name:
        return None  # another engine (message-centric): the simulation models the actor-centric one
    if name in STAND_INS:
        return STAND_INS[name]
    # Wölke's CLS let Linux migrate its threads; the simulation's `cls` cannot (no OS threads).
    return (name, name == "cls" and row["source"] == "wolke")


# The machines of the rows; `vm16` is the 16-core one-node VM of the real-hardware table
# (docs/results/do-no-harm.md), modelled as one node of 16 PUs with the generic constants.
MACHINES = {
    "opteron6376": "preset:opteron6376",
    "xeon-x7560": "preset:xeon-x7560",
    "altix-uv2000": "preset:altix-uv2000",
    "vm16": "synthetic:package:1 core:16 pu:1",
}

# A speed-up within this band of 1 counts as "no change": a direction, like the others.
NEUTRAL = 0.03
# The agreement a row needs to count as "within 25%": predicted / measured in [1/1.25, 1.25].
WITHIN = 1.25


def direction(x):
    if x > 1 + NEUTRAL:
        return "+"
    if x < 1 - NEUTRAL:
        return "-"
    return "="


def read_rows(path, only, exclude):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    if only:
        rows = [r for r in rows if re.search(only, r["id"])]
    if exclude:
        rows = [r for r in rows if not re.search(exclude, r["id"])]
    return rows


# The configuration's default seed (`Config::default`): the seed of every run without `--seeds`.
DEFAULT_SEED = 0x5EED

# Benchmarks whose simulated runs do not repeat: a plain thread sends their jobs while the
# simulation runs, so when they arrive depends on the host (matrix-search-rr: ±10% from run to
# run under `cls`). Each side runs this many seeds at least, and the median counts: one run per
# side measured that noise (docs/results/validation/fourth-run.md, "Again after decision 0104").
UNREPEATABLE = {"matrix-search-rr": 5, "matrix-search-block-rr": 5}


def seeds_of(row, seeds):
    """The seeds each side of `row` runs: `seeds`, extended for an unrepeatable benchmark."""
    n = max(len(seeds), UNREPEATABLE.get(row["bench"], 1))
    return [DEFAULT_SEED] + list(range(1, n))


def seed_file(seed):
    """A configuration file that sets only the seed (written once, in the temporary folder)."""
    path = os.path.join(tempfile.gettempdir(), f"loka-validate-seed-{seed}.toml")
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write(f"seed = {seed}\n")
    return path


def command(args, row, policy, seed=DEFAULT_SEED):
    inp = row["input"].split()[0].rstrip(":") if row["input"] else "quick"
    size = "quick" if args.size == "quick" or inp == "quick" else "full"
    cmd = [
        args.loka, "bench", "run", row["bench"], "--engine", "sim", "--json",
        "--size", size, "--topology", MACHINES[row["machine"]],
        "--workers", row["workers"], "--policy", policy, "--timeout", str(args.timeout),
    ]
    if seed != DEFAULT_SEED:
        cmd += ["--config", seed_file(seed)]
    env = {}
    if size == "full" and row["bench"].startswith("bencherl-") and inp in ("short", "intermediate"):
        # BenchErl's inputs scale with the machine's cores (crates/loka-bench/src/bencherl).
        env = {"LOKA_BENCHERL_INPUT": inp, "LOKA_BENCHERL_CORES": row["workers"]}
    return cmd, env


def key(cmd, env):
    """A run's identity: its environment and arguments, without the binary's path and the time
    limit (neither changes a simulated run's result)."""
    args = list(cmd[1:])
    if "--timeout" in args:
        i = args.index("--timeout")
        del args[i : i + 2]
    if "--config" in args:
        # The seed's file is named by its seed: the key says the seed, not the folder.
        i = args.index("--config")
        args[i : i + 2] = ["--seed", os.path.basename(args[i + 1]).split("-")[-1][: -len(".toml")]]
    return " ".join(f"{k}={v}" for k, v in sorted(env.items())) + " " + " ".join(args)


def normalized(k):
    """`key` of a cached line written with the binary's path and the time limit in it."""
    words = k.split(" ")
    if "bench" in words:
        i = words.index("bench")
        if i > 0 and words[i - 1].startswith("/") or i > 0 and words[i - 1].endswith("loka"):
            del words[i - 1]
    if "--timeout" in words:
        i = words.index("--timeout")
        del words[i : i + 2]
    return " ".join(words)


def run_one(cmd, env):
    full_env = dict(os.environ, **env)
    p = subprocess.run(cmd, capture_output=True, text=True, env=full_env)
    if p.returncode != 0 or not p.stdout.strip():
        err = (p.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": err}
    d = json.loads(p.stdout.splitlines()[0])
    return {"virtual_seconds": d["virtual_seconds"], "verified": d["verified"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--figures", default=os.path.join(HERE, "figures.tsv"))
    ap.add_argument(
        "--size", default="row", choices=["row", "quick"],
        help="row: each row's own input (the texts' sizes: Matrix Search at full size takes tens "
        "of minutes); quick: every row at the quick size (a first look, not the comparison)",
    )
    ap.add_argument("--only", default="", help="rows whose id matches this regex")
    ap.add_argument("--exclude", default="", help="leave out rows whose id matches this regex")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", default="validation-runs.jsonl")
    ap.add_argument("--loka", default="target/release/loka")
    ap.add_argument("--timeout", type=int, default=3600, help="CPU seconds per simulation run")
    ap.add_argument("--no-run", action="store_true", help="print the table from --out only")
    ap.add_argument(
        "--seeds", type=int, default=1,
        help="run each side with this many seeds (the default seed, then 1, 2, ...) and predict "
        "from the medians of their virtual times: a schedule's draws move some rows by 10%% or more",
    )
    ap.add_argument(
        "--stand-in", action="append", default=[], metavar="NAME=POLICY",
        help="run POLICY for the text's variant NAME instead of the built-in stand-in",
    )
    args = ap.parse_args()
    for item in args.stand_in:
        name, sep, policy = item.partition("=")
        if not sep or name not in STAND_INS or not policy:
            ap.error(f"--stand-in {item}: expected NAME=POLICY with NAME one of {', '.join(STAND_INS)}")
        STAND_INS[name] = (policy, True)

    rows = read_rows(args.figures, args.only, args.exclude)
    def sides(r):
        pair = [simulated(r, r["policy"]), simulated(r, r["baseline"])]
        return None if None in pair else pair

    comparable = [r for r in rows if r["bench"] != "-" and r["machine"] in MACHINES and sides(r)]
    cache = {}
    if os.path.exists(args.out):
        for line in open(args.out):
            d = json.loads(line)
            cache[normalized(d["key"])] = d

    if args.seeds < 1:
        ap.error(f"--seeds {args.seeds}: at least 1")
    seeds = [DEFAULT_SEED] + list(range(1, args.seeds))
    wanted = {}
    for r in comparable:
        for policy, _ in sides(r):
            for seed in seeds_of(r, seeds):
                cmd, env = command(args, r, policy, seed)
                k = key(cmd, env)
                if k not in cache:
                    wanted[k] = (cmd, env)
    if wanted and not args.no_run:
        print(f"{len(wanted)} simulation runs to do ({len(cache)} cached)", file=sys.stderr)
        with open(args.out, "a") as out, concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            futures = {pool.submit(run_one, cmd, env): k for k, (cmd, env) in wanted.items()}
            for fut in concurrent.futures.as_completed(futures):
                d = dict(fut.result(), key=futures[fut])
                cache[d["key"]] = d
                out.write(json.dumps(d) + "\n")
                out.flush()
                print(f"  done: {d['key']}", file=sys.stderr)

    print("| id | machine | bench | policy / baseline | measured | predicted | direction | predicted / measured |")
    print("|---|---|---|---|---:|---:|---|---:|")
    agree = within = counted = stand_ins = 0
    missing = []
    for r in comparable:
        (pol, pol_stand_in), (base, base_stand_in) = sides(r)
        runs = [[cache.get(key(*command(args, r, p, s))) for s in seeds_of(r, seeds)] for p in (pol, base)]
        got = [d for side in runs for d in side]
        if any(d is None or "error" in d for d in got):
            why = next((d["error"] for d in got if d and "error" in d), "not run")
            missing.append((r["id"], why))
            continue
        measured = float(r["measured"])
        time = [statistics.median(d["virtual_seconds"] for d in side) for side in runs]
        predicted = time[1] / time[0]
        same = direction(measured) == direction(predicted)
        ratio = predicted / measured
        close = 1 / WITHIN <= ratio <= WITHIN
        counted += 1
        agree += same
        within += close
        stand_in = "".join(
            (f" [{name} run as {sim}]" if name != sim else f" [{name}: threads pinned here, not in the text]")
            for name, sim, flagged in ((r["policy"], pol, pol_stand_in), (r["baseline"], base, base_stand_in))
            if flagged
        )
        stand_ins += bool(stand_in)
        flags = "" if all(d["verified"] for d in got) else " (not verified)"
        print(
            f"| {r['id']} | {r['machine']} | {r['bench']} | {r['policy']} / {r['baseline']}{stand_in} "
            f"| {measured:.2f} | {predicted:.2f}{flags} | {'agree' if same else 'DISAGREE'} "
            f"{direction(measured)}{direction(predicted)} | {ratio:.2f}{'' if close else ' *'} |"
        )
    print()
    if counted:
        print(
            f"directions agree: {agree} of {counted} ({100 * agree / counted:.0f}%); "
            f"within 25%: {within} of {counted} ({100 * within / counted:.0f}%); "
            f"rows with a stand-in for the text's variant: {stand_ins}"
        )
    skipped = [r["id"] for r in rows if r not in comparable]
    if skipped:
        print(
            f"not comparable (no loka benchmark, another engine, or nothing in the simulation "
            f"for the text's variant): {len(skipped)}: {', '.join(skipped)}"
        )
    for rid, why in missing:
        print(f"no prediction for {rid}: {why}")


if __name__ == "__main__":
    main()
