"""What one counters measurement costs, and whether the device memory the program holds
changes it: kernel replay saves and restores device memory between passes.

For each size of an idle allocation (GiB), runs a child that allocates it, then launches
LAUNCHES reductions of distinct sizes (each a new work key, so each is measured), once
without and once with `flopline run --counters`, and prints the extra wall time per
measurement (measured launches counted in the trace). One GPU; about a minute per allocation size.

    counters_measurement_cost.py --flopline build/profiler/flopline [--gib 0,16,64]
"""
import argparse
import json
import os
import subprocess
import sys
import time

LAUNCHES = 40

CHILD = r"""
import sys, time, torch
gib, launches = float(sys.argv[1]), int(sys.argv[2])
hold = torch.empty(int(gib * (1 << 30)), dtype=torch.uint8, device="cuda") if gib > 0 else None
x = torch.ones(1 << 22, device="cuda")
torch.cuda.synchronize()
t0 = time.monotonic()
for i in range(launches):
    x[: (1 << 16) * (i + 1)].sum()  # a new grid each time: a new work key
torch.cuda.synchronize()
print(f"loop_s={time.monotonic() - t0:.3f}")
"""


def run(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    for line in out.stdout.splitlines():
        if line.startswith("loop_s="):
            return float(line.split("=")[1])
    sys.stderr.write(out.stdout[-2000:] + out.stderr[-2000:])
    return None


def measured(path):
    with open(path) as f:
        doc = json.load(f)
    # The loop's reductions only (the fill before the loop is measured too, outside it).
    return sum(1 for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "kernel"
               and "reduce_kernel" in e.get("name", "")
               and e.get("args", {}).get("flops source") == "counters")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--flopline", required=True)
    ap.add_argument("--gib", default="0,16,64")
    args = ap.parse_args()
    child = ["python3", "-c", CHILD]
    print(f"{'held GiB':>8} {'plain s':>8} {'counted s':>9} {'measured':>8} "
          f"{'ms per measurement':>19}")
    for gib in [float(g) for g in args.gib.split(",")]:
        plain = run(child + [str(gib), str(LAUNCHES)])
        trace = f"/tmp/flopline-cost-{gib:g}.json"
        counted = run([args.flopline, "run", "--no-summary", "--counters", "-o", trace, "--"] +
                      child + [str(gib), str(LAUNCHES)])
        if plain is None or counted is None or not os.path.exists(trace):
            print(f"{gib:8g} failed")
            continue
        n = measured(trace)
        per = (counted - plain) / max(n, 1) * 1000
        print(f"{gib:8g} {plain:8.3f} {counted:9.3f} {n:8d} {per:19.1f}")


if __name__ == "__main__":
    sys.exit(main())
