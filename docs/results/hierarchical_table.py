import json, subprocess, sys, statistics
# usage: locality.py TOPOLOGY WORKERS REPEAT BENCH... -- POLICY...
args = sys.argv[1:]
topo, workers, repeat = args[0], args[1], int(args[2])
sep = args.index('--')
benches, policies = args[3:sep], args[sep+1:]
rows = []
out = open(f"/tmp/exp/locality-{topo.replace(':','_')}.jsonl", "a")
for b in benches:
    for p in policies:
        recs = []
        for r in range(repeat):
            cmd = ["target/release/loka", "bench", "run", b, "--policy", p, "--topology", topo, "--workers", workers, "--json"]
            line = subprocess.run(cmd, capture_output=True, text=True)
            if line.returncode != 0:
                print("FAILED", cmd, line.stderr.strip(), file=sys.stderr); break
            rec = json.loads(line.stdout.strip().splitlines()[-1]); recs.append(rec); out.write(json.dumps(rec) + "\n")
        if not recs: continue
        t = [r["telemetry"] for r in recs]
        med = lambda k: statistics.median([x.get(k, 0) for x in t])
        execs = med("exec_home_pu") + med("exec_home_node") + med("exec_remote_node")
        sbl = [statistics.median([x["steals_by_level"][i] if i < len(x["steals_by_level"]) else 0 for x in t]) for i in range(4)]
        rows.append((b, p, statistics.median([r["msgs_per_sec"] for r in recs]), statistics.median([r["seconds"] for r in recs]),
                     100*med("exec_home_pu")/max(execs,1), 100*(med("exec_home_pu")+med("exec_home_node"))/max(execs,1),
                     med("steals"), sbl, med("hpu_pushes"), med("queue_wait_ns_p99"), med("hubs_released"), med("migrations"), all(r["verified"] for r in recs), med("exec_remote_node"), med("bring_home_steals"), med("hubs")))
print("| bench | policy | msgs/s | s | migrations | foreign exec | bring-home steals | hubs | steals | exec on home node % | verified |"); print("|---|---|---|---|---|---|---|---|---|---|---|")
for b,p,m,s,hp,hn,st,sbl,hpu,qw,hr,mig,v,fe,bh,hubs in rows:
    print(f"| {b} | {p} | {m:,.0f} | {s:.4f} | {mig:,.0f} | {fe:,.0f} | {bh:,.0f} | {hubs:,.0f} | {st:,.0f} | {hn:.1f} | {v} |")
