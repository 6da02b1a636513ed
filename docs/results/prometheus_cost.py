# usage: python3 docs/results/prometheus_cost.py target/release/examples/prometheus SECONDS scrape|none
# CPU time of the Prometheus export: the example serves for SECONDS with its collector publishing
# every second; a scraper fetches /metrics every 50 ms (or never); per-thread CPU from schedstat.
import os, re, subprocess, sys, time, urllib.request, collections
exe, seconds, scrape = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "scrape"
# stderr: the example's supervised panics, expected.
p = subprocess.Popen([exe, "0", str(seconds)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
url = re.search(r"(http://\S+/metrics)", p.stdout.readline()).group(1)
cpu = {}; scrapes = 0; size = 0
def sample():
    try:
        for t in os.listdir(f"/proc/{p.pid}/task"):
            comm = open(f"/proc/{p.pid}/task/{t}/comm").read().strip()
            ns = int(open(f"/proc/{p.pid}/task/{t}/schedstat").read().split()[0])
            cpu[(t, comm)] = max(cpu.get((t, comm), 0), ns)
    except (FileNotFoundError, ProcessLookupError):
        pass
while p.poll() is None:
    if scrape:
        try:
            body = urllib.request.urlopen(url, timeout=1).read(); scrapes += 1; size = len(body)
        except Exception:
            pass
    sample(); time.sleep(0.05)
by = collections.defaultdict(int)
for (t, c), ns in cpu.items():
    by[c] += ns
print(("scraped" if scrape else "not scraped"), f"{scrapes} scrapes of {size} bytes;",
      ", ".join(f"{c} {ns/1e6:.1f} ms" for c, ns in sorted(by.items(), key=lambda kv: -kv[1])))
