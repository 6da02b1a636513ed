#!/bin/bash
# Overhead of an attached observer: the eight micro benchmarks, alternating off/on, medians of 5.
# on = the run serves --observe /tmp/ovh.sock and a client asks for a snapshot every second.
set -u
L=${L:-target/release/loka}
W=${W:-1}
SIZE=${SIZE:-full}
N=${N:-5}
OUT=${OUT:-ovh-w$W.jsonl}
: > $OUT
(while true; do $L top --json --socket /tmp/ovh.sock >/dev/null 2>&1; sleep 1; done) &
POLLER=$!
trap "kill $POLLER" EXIT
for i in $(seq 1 $N); do
  for b in pingpong counting threadring fjthrput fjcreate fib chameneos big; do
    for side in off on; do
      extra=$([ $side = on ] && echo "--observe /tmp/ovh.sock" || echo "")
      $L bench run $b --size $SIZE --workers $W --json $extra | python3 -c "import sys,json; d=json.loads(sys.stdin.readline()); print(json.dumps({'side':'$side','bench':d['bench'],'mps':d['msgs_per_sec'],'s':d['seconds'],'verified':d['verified']}))" >> $OUT
    done
  done
done
python3 - $OUT <<'PY'
import sys, json, statistics as st
rows=[json.loads(l) for l in open(sys.argv[1])]
print("| bench | off (M msgs/s) | on | on/off | off range | on range | run seconds |")
print("|---|---|---|---|---|---|---|")
for b in dict.fromkeys(r['bench'] for r in rows):
    a=[r['mps']/1e6 for r in rows if r['bench']==b and r['side']=='off']
    c=[r['mps']/1e6 for r in rows if r['bench']==b and r['side']=='on']
    s=st.median([r['s'] for r in rows if r['bench']==b])
    print(f"| {b} | {st.median(a):.2f} | {st.median(c):.2f} | {st.median(c)/st.median(a):.3f} | {min(a):.1f}–{max(a):.1f} | {min(c):.1f}–{max(c):.1f} | {s:.2f} |")
PY
