# usage: python3 docs/results/observe_cost.py target/release/loka BENCH WORKERS
# CPU time the system spends serving snapshots: a client asks for one every 50 ms during a long
# benchmark run; the serving threads' CPU time (from /proc) divided by the snapshots received.
import os, socket, subprocess, sys, threading, time
import threadcpu
L, bench, workers = sys.argv[1], sys.argv[2], sys.argv[3]
sock = f"/tmp/obs-cost-{os.getpid()}.sock"
p = subprocess.Popen([L, "bench", "run", bench, "--size", "full", "--workers", workers, "--json", "--observe", sock], stdout=subprocess.PIPE)
while not os.path.exists(sock):
    time.sleep(0.01)
s = socket.socket(socket.AF_UNIX); s.connect(sock); s.sendall(b"watch 50\n")
lines = [0]; nbytes = [0]
def reader():
    f = s.makefile("rb")
    for line in f:
        lines[0] += 1; nbytes[0] += len(line)
threading.Thread(target=reader, daemon=True).start()
tick = os.sysconf("SC_CLK_TCK"); best = {}
while p.poll() is None:
    threadcpu.sample(p.pid, best)
    time.sleep(0.1)
out = p.stdout.read().decode()
import json
rec = json.loads(out.splitlines()[0])
serve = sum(v for (t, c), v in best.items() if c.startswith("loka-observe"))
work = sum(v for (t, c), v in best.items() if c.startswith("loka-worker"))
n = max(lines[0], 1)
print(f"{bench} workers={workers}: run {rec['seconds']:.2f} s, {lines[0]} snapshots, {nbytes[0]/n:.0f} bytes each; "
      f"serving threads {serve*1e3:.0f} ms CPU = {serve/n*1e6:.0f} us per snapshot; workers {work:.2f} s CPU; "
      f"at one snapshot a second: {serve/n/1.0*100:.4f}% of one core")
