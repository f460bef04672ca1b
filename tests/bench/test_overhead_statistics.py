#!/usr/bin/env python3
"""The statistics of bench/bench_train_overhead.py, without a GPU: the CPU list of
--cpus, the bootstrap interval of an added step time, and the table that --from prints
from earlier rounds (the cost shown only where it exceeds the spread, and the ratios).
"""
import json
import os
import subprocess
import sys
import tempfile

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench")
sys.path.insert(0, BENCH)
import bench_train_overhead as bench  # noqa: E402

failed = 0


def check(cond, what):
    global failed
    if not cond:
        failed += 1
    print(("ok   " if cond else "FAIL ") + what)


check(bench.parse_cpus("2-5,8") == {2, 3, 4, 5, 8}, "parse_cpus: a range and a single CPU")
check(bench.parse_cpus("") == set(), "parse_cpus: empty pins nothing")

none = [12.0, 12.4, 11.8, 12.2, 12.1, 11.9, 12.3, 12.0]
slower = [v + 5.0 for v in reversed(none)]
lo, hi = bench.added_interval(slower, none)
check(0 < lo <= 5.0 <= hi < 10, f"a cost of 5 ms lies inside its interval, 0 outside ({lo:.2f}..{hi:.2f})")
lo, hi = bench.added_interval(list(none), none)
check(lo <= 0 <= hi, f"no cost: the interval holds 0 ({lo:.2f}..{hi:.2f})")
check(bench.added_interval(slower, none) == bench.added_interval(slower, none),
      "the interval is the same on every run (a fixed seed)")

# --from: the table of rounds kept in a summary.json, made up here: flopline's rounds sit
# clearly above those without a profiler (its added time is shown), the floor's lie within
# their spread (noise), and the two ratios follow from the medians of these lists.
medians = {"none": [10.0, 10.3, 10.6, 10.2], "floor": [10.4, 10.2, 10.5, 10.3],
           "flopline": [11.1, 11.3, 11.2, 11.4], "torch": [13.3, 13.2, 13.4, 13.5]}
with tempfile.TemporaryDirectory() as d:
    with open(os.path.join(d, "summary.json"), "w") as f:
        json.dump({"medians": medians, "process_s": {c: [20.0] * 4 for c in medians}}, f)
    out = subprocess.run([sys.executable, os.path.join(BENCH, "bench_train_overhead.py"),
                          "--flopline", "unused", "--from", d], capture_output=True, text=True)
rows = {line.split()[0]: line.split() for line in out.stdout.splitlines() if line.strip()}
check(out.returncode == 0, f"--from exits 0 ({out.returncode}: {out.stderr.strip()[-200:]})")
check(rows.get("flopline", [None] * 6)[5] == "+1.000", "flopline's added 1 ms is shown")
check(rows.get("floor", [None] * 6)[5] == "noise", "the floor's 0.1 ms within the spread is noise")
check("added time flopline / torch: 0.32" in out.stdout, "flopline / torch.profiler ratio")
check("added time flopline / floor: 10.00" in out.stdout, "flopline / floor ratio")
print(out.stdout)
sys.exit(1 if failed else 0)
