"""How much of a trace's kernel time carries counted FLOPs (flopline run --counters).

    python3 counted_coverage.py TRACE [--min-pct P]

A kernel is covered when it has a "flops" arg from the counters (measured or inferred);
one whose count is 0 did no floating-point work (copies, sets, pure data movement) and
is covered as such. Prints the covered share of kernel time, the share with FLOPs > 0,
and the uncovered kernels by time; exits 1 when the covered share is under --min-pct.
"""
import argparse
import os
import sys
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import check_support  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace")
    ap.add_argument("--min-pct", type=float, default=None)
    args = ap.parse_args()
    events = check_support.trace_events(check_support.read_trace(args.trace))
    total = covered = with_flops = measured = 0.0
    uncovered = defaultdict(float)
    n = n_measured = 0
    for e in events:
        if e.get("cat") != "kernel" or e.get("ph") != "X":
            continue
        dur = float(e.get("dur", 0))
        a = e.get("args", {})
        total += dur
        n += 1
        src = a.get("flops source", "")
        if src.startswith("counters") and "flops" in a:
            covered += dur
            if a["flops"] > 0:
                with_flops += dur
            if a.get("counters replayed"):
                n_measured += 1
                measured += dur
        else:
            uncovered[e["name"][:90]] += dur
    pct = 100 * covered / total if total else 0
    print(f"kernels {n}, measured {n_measured} ({100 * measured / total if total else 0:.1f}% of kernel time)")
    print(f"kernel time with counted values: {pct:.1f}% (with FLOPs > 0: {100 * with_flops / total if total else 0:.1f}%)")
    for name, d in sorted(uncovered.items(), key=lambda kv: -kv[1])[:8]:
        print(f"  uncounted {100 * d / total:5.2f}%  {name}")
    if args.min_pct is not None and pct < args.min_pct:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
