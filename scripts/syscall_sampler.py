"""Samples what each thread of a running process is doing, from /proc (no debugger):
the system call it is in, by number, every INTERVAL seconds until the process ends, and
prints the counts per thread. A cheap look at where a slow call waits (ioctl into the
driver, a futex, a sleep) on a machine without perf.

    syscall_sampler.py PID [--interval 0.001] [--names]
"""
import argparse
import collections
import os
import time

NAMES = {0: "read", 1: "write", 7: "poll", 16: "ioctl", 23: "select", 24: "sched_yield",
         35: "nanosleep", 202: "futex", 228: "clock_gettime", 230: "clock_nanosleep",
         232: "epoll_wait", 270: "pselect6", 271: "ppoll", 281: "epoll_pwait", 9: "mmap",
         11: "munmap", 10: "mprotect", 3: "close", 257: "openat", 4: "stat", 5: "fstat",
         262: "newfstatat", 13: "rt_sigaction", 14: "rt_sigprocmask", 25: "mremap"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pid", type=int)
    ap.add_argument("--interval", type=float, default=0.001)
    a = ap.parse_args()
    counts = collections.defaultdict(collections.Counter)
    comm = {}
    while os.path.exists(f"/proc/{a.pid}"):
        try:
            tids = os.listdir(f"/proc/{a.pid}/task")
        except OSError:
            break
        for tid in tids:
            try:
                with open(f"/proc/{a.pid}/task/{tid}/syscall") as f:
                    first = f.read().split()[0]
                if tid not in comm:
                    with open(f"/proc/{a.pid}/task/{tid}/comm") as f:
                        comm[tid] = f.read().strip()
            except (OSError, IndexError):
                continue
            key = "running" if first == "running" else NAMES.get(int(first), f"#{first}") if first.lstrip("-").isdigit() else first
            if key != "running":
                try:  # the kernel function it sleeps in: which wait in the driver
                    with open(f"/proc/{a.pid}/task/{tid}/wchan") as f:
                        wchan = f.read().strip()
                    if wchan and wchan != "0":
                        key += "@" + wchan
                except OSError:
                    pass
            counts[tid][key] += 1
        time.sleep(a.interval)
    for tid, c in sorted(counts.items(), key=lambda kv: -sum(kv[1].values())):
        print(f"thread {tid} ({comm.get(tid, '?')}): " + ", ".join(f"{k} {v}" for k, v in c.most_common(8)))


if __name__ == "__main__":
    main()
