# usage: python3 docs/results/sampler_cost.py target/release/loka BENCH WORKERS [US=1000]
# CPU time of the handler-time sampler (`handler_sample_us`): a long benchmark run with sampling
# on; the `loka-sampler` thread's CPU time (schedstat, ns) over its own lifetime (from its start
# time in /proc to the last time it was seen, 10 ms resolution), i.e. the share of one core it
# takes, and per round at the nominal interval (rounds are at most lifetime / interval, so the
# per-round figure is an upper bound of the cost of a round).
import json, os, subprocess, sys, time
import threadcpu
L, bench, workers = sys.argv[1], sys.argv[2], sys.argv[3]
us = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
p = subprocess.Popen([L, "bench", "run", bench, "--size", "full", "--workers", workers, "--json",
                      "--handler-sample-us", str(us)], stdout=subprocess.PIPE)
best = {}
life = {}  # sampler thread -> (start, last seen), seconds since boot
tick = os.sysconf("SC_CLK_TCK")
def note_life(t, comm):
    if comm.startswith("loka-sampler"):
        try:
            stat = open(f"/proc/{p.pid}/task/{t}/stat").read().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            return
        start = int(stat[19]) / tick  # field 22: start time, ticks since boot
        now = float(open("/proc/uptime").read().split()[0])
        life[t] = (start, now)
while p.poll() is None:
    threadcpu.sample(p.pid, best, note_life)
    time.sleep(0.05)
rec = json.loads(p.stdout.read().decode().splitlines()[0])
sampler = sum(v for (t, c), v in best.items() if c.startswith("loka-sampler"))
work = sum(v for (t, c), v in best.items() if c.startswith("loka-worker"))
lifetime = sum(b - a for a, b in life.values())
rounds = lifetime / (us / 1e6)
print(f"{bench} workers={workers} every {us} us: run {rec['seconds']:.2f} s "
      f"({rec['msgs_per_sec']/1e6:.2f} M msgs/s, verified {rec['verified']}); sampler "
      f"{sampler*1e3:.1f} ms CPU over its {lifetime:.2f} s = {100*sampler/max(lifetime,1e-9):.3f}% "
      f"of one core, about {sampler/max(rounds,1)*1e6:.1f} us per round; workers {work:.2f} s CPU")
