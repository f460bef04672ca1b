#!/usr/bin/python3
"""flopline's per-rank time breakdown against Holistic Trace Analysis (HTA) on the same
traces (docs/STATS.md, "Time breakdown"): HTA's get_temporal_breakdown (idle, compute,
non-compute) and get_comm_comp_overlap, with its microsecond rounding off
(HTA_DISABLE_NS_ROUNDING=1), against `flopline stats DIR --report breakdown --json`.
Every rank HTA finds must be one flopline reports, and each figure must agree within 1%
(of the rank's window for the times, 1 point for the overlap). Prints a table; exit 1 on
a disagreement, 77 when HTA or pandas is missing.

Traces with ProfilerStep#N slices (torch.profiler's, or `flopline run --profiler-steps`):
HTA then leaves out every kernel launched in or after the last step, which it takes for
incomplete, while flopline's breakdown covers the whole window. So HTA is first asked for
each rank's iterations on the traces as they are (each rank must have some), and the
breakdowns are compared on copies without the ProfilerStep slices.

HTA is not on PyPI here: fetch facebookresearch/HolisticTraceAnalysis and give the
folder that holds its `hta` package; Debian's python3-pandas (with python3-networkx and
python3-plotly) runs it. Run with /usr/bin/python3, whose packages those are:

  /usr/bin/python3 scripts/compare_hta.py --hta /tmp/hta --flopline build/profiler/flopline DIR
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def flopline_breakdown(flopline, trace_dir):
    r = subprocess.run([flopline, "stats", trace_dir, "--report", "breakdown", "--json"],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        raise SystemExit(f"flopline stats failed ({r.returncode}): {r.stderr.strip()[-400:]}")
    return {d["rank"]: d for d in json.loads(r.stdout)["devices"]}


def trace_files(trace_dir):
    return sorted(f for f in os.listdir(trace_dir) if f.endswith(".json"))


def is_step(event):
    return str(event.get("name", "")).startswith("ProfilerStep#")


def has_profiler_steps(trace_dir):
    for f in trace_files(trace_dir):
        with open(os.path.join(trace_dir, f)) as fh:
            if '"ProfilerStep#' in fh.read():
                return True
    return False


def without_profiler_steps(trace_dir, out_dir):
    """Copies of the traces without their ProfilerStep slices."""
    for f in trace_files(trace_dir):
        with open(os.path.join(trace_dir, f)) as fh:
            doc = json.load(fh)
        events = doc["traceEvents"] if isinstance(doc, dict) else doc
        kept = [e for e in events if not is_step(e)]
        if isinstance(doc, dict):
            doc["traceEvents"] = kept
        else:
            doc = kept
        with open(os.path.join(out_dir, f), "w") as fh:
            json.dump(doc, fh)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--hta", required=True, help="the folder holding HTA's `hta` package")
    p.add_argument("--flopline", required=True)
    p.add_argument("trace_dir")
    a = p.parse_args()
    os.environ["HTA_DISABLE_NS_ROUNDING"] = "1"
    sys.path.insert(0, a.hta)
    try:
        from hta.trace_analysis import TraceAnalysis
    except ImportError as e:
        print(f"skipped: HTA cannot be imported from {a.hta}: {e}")
        return 77
    failures = []
    rows = []
    trace_dir = a.trace_dir
    scratch = None
    if has_profiler_steps(trace_dir):
        steps = TraceAnalysis(trace_dir=trace_dir)
        for rank in steps.t.get_ranks():
            iterations = steps.t.get_iterations(rank)
            print(f"rank {rank}: HTA finds iterations {iterations}")
            if not iterations:
                failures.append(f"rank {rank}: HTA finds no ProfilerStep iteration")
        scratch = tempfile.TemporaryDirectory(prefix="compare-hta-")
        without_profiler_steps(trace_dir, scratch.name)
        trace_dir = scratch.name
        print("breakdowns compared on copies without the ProfilerStep slices (HTA leaves out "
              "the kernels launched in or after the last step)")
    ours = flopline_breakdown(a.flopline, trace_dir)
    analyzer = TraceAnalysis(trace_dir=trace_dir)
    temporal = analyzer.get_temporal_breakdown(visualize=False)
    overlap = analyzer.get_comm_comp_overlap(visualize=False)
    hta_ranks = sorted(int(r) for r in temporal["rank"])
    if sorted(r for r in ours if r is not None) != hta_ranks:
        failures.append(f"ranks: HTA {hta_ranks}, flopline {sorted(ours, key=str)}")
    for _, t in temporal.iterrows():
        rank = int(t["rank"])
        d = ours.get(rank) or ours.get(str(rank))
        if d is None:
            failures.append(f"rank {rank}: not in flopline's breakdown")
            continue
        window_us = d["window_ns"] / 1e3
        pairs = [("idle us", t["idle_time(us)"], d["idle_ns"] / 1e3),
                 ("compute us", t["compute_time(us)"], d["compute_ns"] / 1e3),
                 ("non-compute us", t["non_compute_time(us)"],
                  (d["communication_ns"] + d["memory_ns"]) / 1e3)]
        for what, hta, fl in pairs:
            ok = abs(hta - fl) <= 0.01 * window_us
            rows.append((rank, what, hta, fl, ok))
            if not ok:
                failures.append(f"rank {rank} {what}: HTA {hta:.1f}, flopline {fl:.1f}")
        o = overlap[overlap["rank"] == rank]
        if not o.empty and d["communication_total_ns"] > 0:
            hta = float(o["comp_comm_overlap_pctg"].iloc[0])
            fl = 100.0 * d["communication_hidden_ns"] / d["communication_total_ns"]
            ok = abs(hta - fl) <= 1.0
            rows.append((rank, "comm hidden %", hta, fl, ok))
            if not ok:
                failures.append(f"rank {rank} comm hidden: HTA {hta:.2f}%, flopline {fl:.2f}%")
    print(f"{'rank':>4}  {'figure':16} {'HTA':>16} {'flopline':>16}  agree")
    for rank, what, hta, fl, ok in rows:
        print(f"{rank:>4}  {what:16} {hta:>16.2f} {fl:>16.2f}  {'yes' if ok else 'NO'}")
    for f in failures:
        print("FAILED:", f)
    print("HTA comparison:", "agrees" if not failures else f"{len(failures)} disagreements")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
