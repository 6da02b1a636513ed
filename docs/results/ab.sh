#!/bin/bash
# A/B of two loka binaries on the eight Savina micro benchmarks, alternating A and B run by run
# (A B A B …) so that host noise falls on both alike; prints medians, ratios (B/A) and ranges.
#
#   docs/results/ab.sh BEFORE_BINARY AFTER_BINARY [ROUNDS=5] [OUT=ab.jsonl]
#   environment: SIZE=quick|full (default quick), WORKERS (default 2), BENCHES (default: the
#   eight micro benchmarks), A_ARGS / B_ARGS (extra flags for one side, e.g.
#   B_ARGS="--engine message-centric" to compare two engines with one binary)
#
# Typical use: build the commit before a change, copy target/release/loka to /tmp/loka-before,
# build the change, copy it to /tmp/loka-after, then `SIZE=full docs/results/ab.sh /tmp/loka-before /tmp/loka-after`.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 BEFORE_BINARY AFTER_BINARY [ROUNDS] [OUT]" >&2
  exit 2
fi
A=$1; B=$2; N=${3:-5}; OUT=${4:-ab.jsonl}
SIZE=${SIZE:-quick}; WORKERS=${WORKERS:-2}
BENCHES=${BENCHES:-"pingpong counting threadring fjthrput fjcreate fib chameneos big"}
A_ARGS=${A_ARGS:-}; B_ARGS=${B_ARGS:-}
: > "$OUT"
for _ in $(seq 1 "$N"); do
  for b in $BENCHES; do
    for side in A B; do
      exe=$([ "$side" = A ] && echo "$A" || echo "$B")
      extra=$([ "$side" = A ] && echo "$A_ARGS" || echo "$B_ARGS")
      # shellcheck disable=SC2086 # extra flags are split on purpose
      "$exe" bench run "$b" --size "$SIZE" --workers "$WORKERS" $extra --json |
        python3 -c "import sys,json; d=json.loads(sys.stdin.readline()); print(json.dumps({'side':'$side','bench':d['bench'],'mps':d['msgs_per_sec'],'verified':d['verified']}))" >> "$OUT"
    done
  done
done
python3 - "$OUT" <<'PY'
import sys, json, statistics as st
rows = [json.loads(l) for l in open(sys.argv[1])]
benches = list(dict.fromkeys(r['bench'] for r in rows))
print("| bench | before (M msgs/s) | after (M msgs/s) | after/before | before range | after range |")
print("|---|---|---|---|---|---|")
for b in benches:
    a = [r['mps'] / 1e6 for r in rows if r['bench'] == b and r['side'] == 'A']
    c = [r['mps'] / 1e6 for r in rows if r['bench'] == b and r['side'] == 'B']
    bad = [r for r in rows if r['bench'] == b and not r['verified']]
    flag = " (UNVERIFIED RUNS)" if bad else ""
    print(f"| {b} | {st.median(a):.2f} | {st.median(c):.2f} | {st.median(c)/st.median(a):.3f}{flag} "
          f"| {min(a):.1f}–{max(a):.1f} | {min(c):.1f}–{max(c):.1f} |")
PY
