#!/usr/bin/env python3
"""Where a counted run's steps lose time against an uncounted run of the same loop.

Reads two flopline traces of bench/train_loop.py (or any loop with NVTX ranges named
"step N"), one run without --counters and one with, and prints for the later half of
the steps (after the counted run's measurements have mostly ended):
  - each run's median step (NVTX range), GPU kernel time, launch calls' time and count
    a step: whether the counted step is slower on the GPU (kernels run longer) or on
    the host (launch calls take longer);
  - the kernels whose median duration grew the most, by the time they add a step.
Kernels belong to the step whose range began last before the kernel began (each step
of train_loop ends with a synchronize).

  counters_step_cost.py PLAIN.json COUNTED.json [--from 0.5] [--top 12]
"""
import argparse
import bisect
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import check_support  # noqa: E402

LAUNCH_CALLS = ("cudaLaunchKernel", "cuLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernelEx")


def is_launch_call(name):
    return any(name.startswith(c) for c in LAUNCH_CALLS)


def step_of(starts, ts):
    """The index of the step whose start is the last at or before ts, or -1."""
    return bisect.bisect_right(starts, ts) - 1


def read_steps(path):
    """(steps, kernels, calls): steps as (number, start, dur) sorted by start; kernels as
    (ts, dur, name); launch calls as (ts, dur). Times in microseconds."""
    steps, kernels, calls = [], [], []
    for e in check_support.trace_events(check_support.read_trace(path)):
        if e.get("ph") != "X":
            continue
        cat, name = e.get("cat", ""), e.get("name", "")
        ts, dur = float(e.get("ts", 0)), float(e.get("dur", 0))
        if cat == "kernel":
            kernels.append((ts, dur, name))
        elif cat in ("cuda_runtime", "cuda_driver") and is_launch_call(name):
            calls.append((ts, dur))
        elif name.startswith("step ") and name[5:].isdigit():
            steps.append((int(name[5:]), ts, dur))
    steps.sort(key=lambda s: s[1])
    return steps, kernels, calls


def per_step(path, keep_from):
    """Per kept step: wall, kernel time, launch-call time and count; and each kernel
    name's durations in the kept steps."""
    steps, kernels, calls = read_steps(path)
    if not steps:
        raise SystemExit(f"{path}: no NVTX ranges named 'step N'")
    first = int(len(steps) * keep_from)
    kept = steps[first:]
    starts = [s[1] for s in kept]
    rows = [{"wall": s[2] / 1e3, "gpu": 0.0, "calls": 0.0, "launches": 0} for s in kept]
    durations = {}
    for ts, dur, name in kernels:
        i = step_of(starts, ts)
        if i < 0:
            continue
        rows[i]["gpu"] += dur / 1e3
        durations.setdefault(name, []).append(dur)
    for ts, dur in calls:
        i = step_of(starts, ts)
        if i < 0 or ts > kept[i][1] + kept[i][2]:
            continue
        rows[i]["calls"] += dur / 1e3
        rows[i]["launches"] += 1
    return rows, durations


def median_of(rows, key):
    return statistics.median(r[key] for r in rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("plain", help="trace of the run without --counters")
    ap.add_argument("counted", help="trace of the run with --counters")
    ap.add_argument("--from", dest="keep_from", type=float, default=0.5,
                    help="share of the steps to skip first (default 0.5)")
    ap.add_argument("--top", type=int, default=12, help="kernels to list (default 12)")
    args = ap.parse_args()
    runs = {}
    for label, path in (("plain", args.plain), ("counted", args.counted)):
        if not os.path.exists(path):
            raise SystemExit(f"{path}: no such file")
        runs[label] = per_step(path, args.keep_from)
    print(f"later {100 * (1 - args.keep_from):.0f}% of the steps, medians a step:")
    print(f"{'run':8} {'steps':>5} {'wall ms':>8} {'kernels ms':>10} {'launch calls ms':>15} "
          f"{'launches':>8} {'us a call':>9}")
    for label, (rows, _) in runs.items():
        calls, launches = median_of(rows, "calls"), median_of(rows, "launches")
        each = 1e3 * calls / launches if launches else 0.0
        print(f"{label:8} {len(rows):5d} {median_of(rows, 'wall'):8.2f} {median_of(rows, 'gpu'):10.3f} "
              f"{calls:15.3f} {launches:8.0f} {each:9.2f}")
    plain_rows, plain_d = runs["plain"]
    counted_rows, counted_d = runs["counted"]
    steps_p, steps_c = len(plain_rows), len(counted_rows)
    grown = []
    for name, cd in counted_d.items():
        pd = plain_d.get(name)
        if not pd:
            continue
        added = (statistics.median(cd) - statistics.median(pd)) * len(cd) / steps_c
        grown.append((added, name, statistics.median(pd), statistics.median(cd), len(cd) / steps_c))
    grown.sort(reverse=True)
    print("\nkernels whose median grew most (us added a step; median us plain -> counted; launches a step):")
    for added, name, mp, mc, n in grown[:args.top]:
        print(f"{added:9.1f}  {mp:9.2f} -> {mc:9.2f}  x{n:5.1f}  {name[:90]}")
    only = sorted(set(counted_d) ^ set(plain_d))
    if only:
        print(f"\n{len(only)} kernel names ran in one run only, e.g.:")
        for name in only[:5]:
            where = "counted" if name in counted_d else "plain"
            n = len(counted_d.get(name, plain_d.get(name, [])))
            print(f"  {where}: {n} launches: {name[:100]}")
    print(f"\nlaunches in the kept steps: plain {sum(len(v) for v in plain_d.values())} "
          f"over {steps_p} steps, counted {sum(len(v) for v in counted_d.values())} over {steps_c}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
