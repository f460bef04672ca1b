"""What a kernel's counted DRAM bytes hold: dram_probe's kernels of known traffic
under `flopline run --counters=all` and under Nsight Compute with its caches flushed
before each pass (--cache-control all) and left as they are (none).

    python3 dram_bytes_probe.py --probe BUILD/tests/gpu/counters/dram_probe --flopline BUILD/profiler/flopline
        --out DIR [--ncu ncu]
    python3 dram_bytes_probe.py --from DIR     (the table from the files an earlier run left)

Prints, per kernel, the bytes it reads and writes by construction and what each tool
counted (MB, 2^20 bytes). An experiment: it judges nothing (docs/COUNTERS.md explains).
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import check_support  # noqa: E402
from counters_vs_ncu import ncu_rows, short_name  # noqa: E402

METRICS = ["dram__bytes_read.sum", "dram__bytes_write.sum",
           "lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_sectors_srcunit_tex_op_write.sum"]


def run(cmd, log):
    with open(log, "w") as f:
        return subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT).returncode


def record(args):
    """Runs the probe three times into args.out; a message on failure."""
    if run([args.probe], os.path.join(args.out, "expected.txt")) != 0:
        return "dram_probe failed: see expected.txt"
    trace = os.path.join(args.out, "counted.json")
    if run([args.flopline, "run", "--no-summary", "--counters=all", "-o", trace, "--", args.probe],
           os.path.join(args.out, "flopline.log")) != 0:
        return "flopline run failed: see flopline.log"
    for cache in ("all", "none"):
        log = os.path.join(args.out, f"ncu-{cache}.log")
        cmd = [args.ncu, "--metrics", ",".join(METRICS), "--csv", "--page", "raw", "--print-units", "base",
               "--clock-control", "none", "--cache-control", cache, "--log-file", log, args.probe]
        if subprocess.run(cmd, capture_output=True).returncode != 0:
            return f"ncu --cache-control {cache} failed: see {log}"
    return None


def first_counted(trace):
    """Short kernel name -> args of its first measured launch."""
    first = {}
    for e in sorted(trace["traceEvents"], key=lambda e: e.get("ts", 0)):
        a = e.get("args", {})
        if e.get("cat") == "kernel" and a.get("flops source") == "counters":
            first.setdefault(short_name(e["name"]), a)
    return first


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--probe")
    ap.add_argument("--flopline")
    ap.add_argument("--ncu", default="ncu")
    ap.add_argument("--out")
    ap.add_argument("--from", dest="from_dir")
    args = ap.parse_args()
    if args.from_dir:
        args.out = args.from_dir
    elif not (args.probe and args.flopline and args.out):
        ap.error("--probe, --flopline and --out are needed unless --from is given")
    else:
        os.makedirs(args.out, exist_ok=True)
        failed = record(args)
        if failed:
            print(f"dram_bytes_probe: {failed} (in {args.out})")
            return 2
    with open(os.path.join(args.out, "expected.txt")) as f:
        expected = [line.split()[:3] for line in f.read().splitlines()[1:] if line.strip()]
    counted = first_counted(check_support.read_trace(os.path.join(args.out, "counted.json")))
    ncu = {}
    for cache in ("all", "none"):
        rows = ncu_rows(os.path.join(args.out, f"ncu-{cache}.log"), METRICS) or {}
        ncu[cache] = {key[0]: values for key, values in rows.items()}

    mb = lambda v: "-" if v is None else f"{v / 2**20:.2f}"  # noqa: E731
    print(f"{'kernel':18s} {'reads':>7s} {'writes':>7s} | {'flopline R':>10s} {'W':>7s} | "
          f"{'ncu all R':>9s} {'W':>7s} | {'ncu none R':>10s} {'W':>7s} | {'L2 W from SM':>12s}")
    for name, reads, writes in expected:
        a = counted.get(name, {})
        row = [mb(float(reads)), mb(float(writes)), mb(a.get("dram bytes read")), mb(a.get("dram bytes written"))]
        for cache in ("all", "none"):
            n = ncu[cache].get(name, {})
            row += [mb(n.get("dram__bytes_read.sum")), mb(n.get("dram__bytes_write.sum"))]
        l2w = ncu["all"].get(name, {}).get("lts__t_sectors_srcunit_tex_op_write.sum")
        row.append(mb(None if l2w is None else 32 * l2w))
        print(f"{name:18s} {row[0]:>7s} {row[1]:>7s} | {row[2]:>10s} {row[3]:>7s} | {row[4]:>9s} {row[5]:>7s} | "
              f"{row[6]:>10s} {row[7]:>7s} | {row[8]:>12s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
