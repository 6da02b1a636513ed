#!/bin/bash
# The multi-core sweep, as one script for a machine lent for a few minutes: what the machine is,
# what its cores charge each other (core_latency.c), every policy and engine against `cls` on
# the fourteen benchmarks of do-no-harm.md's "Sixteen cores" table, and the 1 -> N worker sweep
# against the peers. Every result goes to $OUT (default ./device-out) as it is produced, so a
# run stopped at its time limit keeps what it finished.
#
#   docs/results/device16.sh            # after `make build peers`
#   environment: LOKA (default target/release/loka), PEERS (default peers), WORKERS (default:
#   the machine's PUs), POLICIES_S and SCALE_S (time limits, seconds), OUT
set -u
LOKA=${LOKA:-target/release/loka}
PEERS=${PEERS:-peers}
OUT=${OUT:-device-out}
W=${WORKERS:-$(nproc)}
mkdir -p "$OUT"
log() { printf '%s %s\n' "$(date -u +%T)" "$*" | tee -a "$OUT/steps.log"; }

log "machine"
{ date -u; uname -a; nproc; lscpu; cat /sys/devices/system/node/online 2>/dev/null;
  grep -m1 "model name" /proc/cpuinfo; } > "$OUT/machine.txt" 2>&1
"$LOKA" topo >> "$OUT/machine.txt" 2>&1

log "core latency"
cc -O2 -pthread -o /tmp/core_latency docs/results/core_latency.c 2>>"$OUT/steps.log" \
  || cp .dev/core_latency /tmp/core_latency
/tmp/core_latency > "$OUT/core_latency.tsv" 2>&1
grep summary "$OUT/core_latency.tsv"

log "policies, $W workers"
timeout ${POLICIES_S:-150} "$LOKA" bench policies pingpong counting threadring fjthrput fjcreate fib chameneos \
  big bencherl-big bencherl-ehb matrix-search matrix-search-rr cforall-executor \
  cforall-balance-multi --size quick --workers "$W" --repeat 3 --json \
  --out "$OUT/policies.jsonl" > /dev/null 2>> "$OUT/steps.log"
log "policies rc $?"
python3 docs/results/ratios.py "$OUT/policies.jsonl" 2>&1 | tail -20

# The peers the scaling comparison asks for (tokio, actix, CAF); the smallest and the largest
# counts first, so that a run stopped at its limit still has both ends.
for part in "a 1,$W" "b 2,4,8"; do
  set -- $part; name=$1; counts=$2
  log "scale with peers, counts $counts"
  PEERS_PREBUILT=1 timeout ${SCALE_S:-90} "$LOKA" bench scale pingpong counting threadring \
    fjthrput fjcreate fib chameneos big --worker-counts "$counts" \
    --peers tokio,tokio-current-thread,actix,actix-1thread,caf --peers-dir "$PEERS" --repeat 1 \
    --size quick --peer-cap 20 --out "$OUT/scale-$name.jsonl" > "$OUT/scale-$name.txt" 2>&1
  log "scale rc $?"
  tail -18 "$OUT/scale-$name.txt"
done
