"""Checks capture ranges (docs/CAPTURE.md, "Capture ranges") on a PyTorch loop,
steps_loop.py: 80 steps of three kernels each, a fill whose grid grows with the step,
torch.cuda.profiler.start() before step 50 and stop() after step 59, an NVTX range
"step N" around each step.

1. The whole run (no capture range) is the reference: which kernels, with which
   grids, each step launches.
2. --capture-range=cudaProfilerApi: exactly steps 50-59's kernels, in order; one
   window, opened by cudaProfilerStart and closed by cudaProfilerStop; no CUDA call
   recorded outside it.
3. --capture-range=nvtx --nvtx-capture='step 1*' --capture-range-end=repeat:3: three
   windows, the ranges 'step 1', 'step 10' and 'step 11', and exactly their kernels.

Exit 77 (ctest's skip) without a CUDA device; prints what it found.

  check_capture_range.py --flopline build/profiler/flopline --out DIR [--python python3]
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "scripts"))
import check_support  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
LOOP = os.path.join(HERE, "steps_loop.py")


def abs_ns(doc, ts_us):
    return int(doc.get("baseTimeNanoseconds", 0)) + round(float(ts_us) * 1000)


def kernels(doc):
    """(start ns, name, grid) of every kernel, in start order."""
    ks = [(abs_ns(doc, e["ts"]), e["name"], tuple(e.get("args", {}).get("grid", [])))
          for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "kernel"]
    return sorted(ks)


def is_marker(name):
    return "FillFunctor" in name


def steps_of(ks):
    """The kernels of each step: from one step's fill up to the next one's."""
    steps = []
    for k in ks:
        if is_marker(k[1]):
            steps.append([])
        if steps:
            steps[-1].append((k[1], k[2]))
    return steps


def run(flopline, python, trace, options, loop_args=()):
    cmd = [flopline, "run", "--no-summary", "-o", trace, *options, "--", python, LOOP, *loop_args]
    print("+", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    if r.returncode != 0 or not os.path.exists(trace):
        print(r.stdout, r.stderr, sep="\n")
        raise SystemExit(f"FAIL: {' '.join(cmd)} exited {r.returncode} (trace written: "
                         f"{os.path.exists(trace)})")
    return check_support.read_trace(trace)


def check_windows(doc, label, expected_opened, expected_closed, setting):
    problems = []
    windows = doc.get("captureWindows")
    meta = doc.get("flopline", {})
    if meta.get("capture range") != setting:
        problems.append(f"{label}: flopline.capture range is {meta.get('capture range')!r}, "
                        f"expected {setting!r}")
    if not isinstance(windows, list) or len(windows) != len(expected_opened):
        problems.append(f"{label}: captureWindows {windows!r}, expected {len(expected_opened)}")
        return problems, []
    if meta.get("capture windows") != str(len(expected_opened)):
        problems.append(f"{label}: flopline.capture windows = {meta.get('capture windows')!r}")
    for i, w in enumerate(windows):
        if w.get("index") != i + 1 or w.get("openedBy") != expected_opened[i] or \
                w.get("closedBy") != expected_closed[i] or not isinstance(w.get("endNs"), int) \
                or w["endNs"] < w["startNs"]:
            problems.append(f"{label}: window {i + 1} is {w}, expected opened by "
                            f"{expected_opened[i]!r}, closed by {expected_closed[i]!r}")
    instants = [e for e in doc["traceEvents"] if e.get("ph") in ("i", "I")
                and e.get("cat") == "flopline" and e.get("name", "").startswith("capture window")]
    starts = sorted(e["args"]["capture window"] for e in instants
                    if e["name"] == "capture window start")
    ends = sorted(e["args"]["capture window"] for e in instants
                  if e["name"] == "capture window end")
    want = list(range(1, len(expected_opened) + 1))
    if starts != want or ends != want:
        problems.append(f"{label}: start instants for windows {starts}, end instants {ends}, "
                        f"expected {want} each")
    return problems, [(w["startNs"], w["endNs"]) for w in windows if isinstance(w, dict)]


def check_kernels(doc, label, expected):
    got = [(name, grid) for _, name, grid in kernels(doc)]
    if got == expected:
        return []
    lines = [f"{label}: {len(got)} kernels, expected {len(expected)} (steps' kernels in order)"]
    got_markers = [g for n, g in got if is_marker(n)]
    want_markers = [g for n, g in expected if is_marker(n)]
    lines.append(f"  marker grids got  {got_markers}")
    lines.append(f"  marker grids want {want_markers}")
    return lines


def check_calls_inside(doc, label, windows):
    """No CUDA call recorded outside a window: recording was off there, not filtered."""
    outside = []
    for e in doc["traceEvents"]:
        if e.get("ph") != "X" or e.get("cat") not in ("cuda_runtime", "cuda_driver"):
            continue
        t = abs_ns(doc, e["ts"])
        if not any(s - 1000 <= t <= end + 1000 for s, end in windows):
            outside.append(e.get("name"))
    if outside:
        return [f"{label}: {len(outside)} CUDA calls recorded outside the windows: "
                f"{sorted(set(outside))[:8]}"]
    return []


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--flopline", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--python", default="python3")
    args = ap.parse_args()
    if check_support.visible_gpus() < 1:
        print("skipped: no CUDA device")
        return 77
    os.makedirs(args.out, exist_ok=True)
    problems = []

    full = run(args.flopline, args.python, os.path.join(args.out, "full.json"), [])
    steps = steps_of(kernels(full))
    if len(steps) != 80 or any(len(s) != 3 for s in steps):
        raise SystemExit(f"FAIL: the whole run has {len(steps)} steps with "
                         f"{sorted(set(len(s) for s in steps))} kernels each, expected 80 x 3")
    grids = [s[0][1] for s in steps]
    if len(set(grids)) != 80:
        raise SystemExit(f"FAIL: the steps' fill grids are not all different: {grids}")
    print(f"reference: 80 steps of 3 kernels; fill grids {grids[0]} .. {grids[-1]}")

    api = run(args.flopline, args.python, os.path.join(args.out, "profiler_api.json"),
              ["--capture-range=cudaProfilerApi"])
    p, windows = check_windows(api, "cudaProfilerApi", ["cudaProfilerStart"],
                               ["cudaProfilerStop"], "cudaProfilerApi, stop")
    problems += p
    problems += check_kernels(api, "cudaProfilerApi", [k for s in steps[50:60] for k in s])
    problems += check_calls_inside(api, "cudaProfilerApi", windows)
    print(f"cudaProfilerApi: {len(kernels(api))} kernels, windows {windows}")

    nvtx = run(args.flopline, args.python, os.path.join(args.out, "nvtx_repeat3.json"),
               ["--capture-range=nvtx", "--nvtx-capture=step 1*", "--capture-range-end=repeat:3"])
    p, windows = check_windows(
        nvtx, "nvtx", ["NVTX range 'step 1'", "NVTX range 'step 10'", "NVTX range 'step 11'"],
        ["NVTX range 'step 1' ended", "NVTX range 'step 10' ended", "NVTX range 'step 11' ended"],
        "nvtx 'step 1*' (default domain), repeat:3")
    problems += p
    problems += check_kernels(nvtx, "nvtx", [k for i in (1, 10, 11) for k in steps[i]])
    problems += check_calls_inside(nvtx, "nvtx", windows)
    print(f"nvtx repeat:3: {len(kernels(nvtx))} kernels, windows {windows}")

    for line in problems:
        print("FAIL:", line)
    if problems:
        return 1
    print("ok: cudaProfilerApi gives steps 50-59 exactly; nvtx 'step 1*' repeat:3 gives 3 windows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
