# Per-thread CPU time of a running process, read from /proc, for the cost scripts here
# (observe_cost.py, sampler_cost.py).
import os


def sample(pid, best, on_thread=None):
    """Adds each thread's CPU seconds so far to best[(tid, comm)], keeping the highest seen
    (schedstat: nanoseconds on the CPU; the stat file's ticks are 10 ms). Calls
    on_thread(tid, comm) for each thread read. Threads or a process that end meanwhile are
    skipped."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except (FileNotFoundError, ProcessLookupError):
        return
    for t in tids:
        try:
            comm = open(f"/proc/{pid}/task/{t}/comm").read().strip()
            cpu = int(open(f"/proc/{pid}/task/{t}/schedstat").read().split()[0]) / 1e9
        except (FileNotFoundError, ProcessLookupError, ValueError):
            continue
        best[(t, comm)] = max(best.get((t, comm), 0), cpu)
        if on_thread:
            on_thread(t, comm)
