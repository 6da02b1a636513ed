#!/bin/bash
# Idle and loaded send-to-handler latency, loka against tokio side by side: the two probes
# (crates/loka/examples/latency.rs, peers/rust/tokio/src/bin/latency.rs) run in turns, loka then
# tokio, ROUNDS times at each worker count, so that host noise falls on both alike; prints the
# median over the rounds of each run's p50 and p99 (µs), and loka/tokio.
#
#   docs/results/latency.sh [ROUNDS=5] [OUT=latency.jsonl]
#   environment: LOKA (default target/release/examples/latency), TOKIO (default
#   peers/rust/target/release/peer-tokio-latency), WORKERS (default "1 2"), SAMPLES (default
#   3000), LOKA_ARGS / TOKIO_ARGS (extra flags for one side)
#
# At 1 worker tokio runs its current-thread runtime (one thread of its own, the driver outside
# it); at more, its multi-thread runtime with that many workers.
#
#   cargo build --release -p loka --example latency
#   (cd peers/rust && cargo build --release -p peer-tokio)
#   docs/results/latency.sh 5
set -euo pipefail
N=${1:-5}; OUT=${2:-latency.jsonl}
LOKA=${LOKA:-target/release/examples/latency}
TOKIO=${TOKIO:-peers/rust/target/release/peer-tokio-latency}
WORKERS=${WORKERS:-"1 2"}; SAMPLES=${SAMPLES:-3000}
LOKA_ARGS=${LOKA_ARGS:-}; TOKIO_ARGS=${TOKIO_ARGS:-}
for exe in "$LOKA" "$TOKIO"; do
  [ -x "$exe" ] || { echo "latency.sh: $exe not built (see the header of $0)" >&2; exit 2; }
done
: > "$OUT"
for _ in $(seq 1 "$N"); do
  for w in $WORKERS; do
    rt=$([ "$w" = 1 ] && echo current-thread || echo multi-thread)
    # shellcheck disable=SC2086 # extra flags are split on purpose
    "$LOKA" --workers "$w" --samples "$SAMPLES" $LOKA_ARGS |
      python3 -c "import sys,json
for l in sys.stdin:
    d=json.loads(l); print(json.dumps({'side':'loka','workers':$w,'mode':d['mode'],'p50':d['p50_ns'],'p99':d['p99_ns']}))" >> "$OUT"
    # shellcheck disable=SC2086
    "$TOKIO" --runtime "$rt" --workers "$w" --samples "$SAMPLES" $TOKIO_ARGS |
      python3 -c "import sys,json
for l in sys.stdin:
    d=json.loads(l); print(json.dumps({'side':'tokio','workers':$w,'mode':d['mode'],'p50':d['p50_ns'],'p99':d['p99_ns']}))" >> "$OUT"
  done
done
python3 - "$OUT" <<'EOF'
import json, sys, statistics
rows = [json.loads(l) for l in open(sys.argv[1])]
keys = sorted({(r['workers'], r['mode']) for r in rows})
print(f"{'workers':>7} {'mode':>5} | {'loka p50':>9} {'tokio p50':>9} {'ratio':>6} | {'loka p99':>9} {'tokio p99':>9} {'ratio':>6}   (µs; medians of the runs; ratio tokio/loka, > 1: loka faster)")
for w, mode in keys:
    med = lambda side, q: statistics.median(r[q] for r in rows if r['workers'] == w and r['mode'] == mode and r['side'] == side) / 1000
    l50, t50, l99, t99 = med('loka', 'p50'), med('tokio', 'p50'), med('loka', 'p99'), med('tokio', 'p99')
    print(f"{w:>7} {mode:>5} | {l50:>9.1f} {t50:>9.1f} {t50 / l50:>6.2f} | {l99:>9.1f} {t99:>9.1f} {t99 / l99:>6.2f}")
EOF
