"""Checks on-demand recording (docs/CAPTURE.md, "On demand") on a PyTorch loop,
steps_loop.py: STEPS steps of three kernels each (a fill whose grid grows with the step,
an add, a multiply), synchronized, a short sleep each, the count of steps done written
to a progress file after each.

1. The whole run under `flopline run` is the reference: each step's kernels and grids.
2. `flopline launch` (flush interval 500 ms, a longer loop); once the loop is past step
   100, `flopline start PID` (the launch's pid) from this process; 150 steps later
   `flopline stop PID`; 50 steps later a second start, and a stop 50 steps after it.
   Each window has a file of its own (OUT-window1.json, OUT-window2.json), and the
   first is finished while the loop still runs. Each file lists its one window, opened
   by "flopline start" and closed by "flopline stop", and holds exactly the kernels of
   consecutive steps from the one running at the start to the one running at the stop
   (the steps done just before and just after each command bound them); no CUDA call
   recorded outside the window. The commands answer "window N opened" / "closed".
3. `flopline run` without options, `flopline stop` (no RUN: the one live run) past step
   100 and `flopline start` past step 200: two windows, "capture start" to "flopline
   stop" and "flopline start" to "program end", and no step between them.

Exit 77 (ctest's skip) without a CUDA device; prints what it found.

  check_on_demand.py --flopline build/profiler/flopline --out DIR [--python python3]
"""
import argparse
import os
import subprocess
import sys
import time

from check_capture_range import LOOP, check_calls_inside, is_marker, kernels

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "scripts"))
import check_support  # noqa: E402

STEPS = 800
LOOP_ARGS = ["--steps", str(STEPS), "--start", "-1", "--stop", "-1", "--sync", "--sleep-ms", "10"]


def done_steps(progress):
    try:
        with open(progress) as f:
            return int(f.read() or 0)
    except (OSError, ValueError):
        return 0


def wait_steps(progress, n, proc, timeout=300):
    end = time.time() + timeout
    while time.time() < end:
        if done_steps(progress) >= n:
            return
        if proc.poll() is not None:
            raise SystemExit(f"FAIL: the loop ended before step {n} (exit {proc.returncode})")
        time.sleep(0.01)
    raise SystemExit(f"FAIL: the loop did not reach step {n} in {timeout} s")


def command(flopline, env, *args):
    """Runs flopline start/stop; (steps done before, steps done after, stdout)."""
    progress = env["STEPS_PROGRESS"]
    before = done_steps(progress)
    r = subprocess.run([flopline, *args, "--wait", "30"], capture_output=True, text=True,
                       env=env, timeout=120)
    after = done_steps(progress)
    print("+", "flopline", *args, f"(steps done: {before} before, {after} after)", flush=True)
    print(r.stdout, r.stderr, sep="", end="", flush=True)
    if r.returncode != 0:
        raise SystemExit(f"FAIL: flopline {' '.join(args)} exited {r.returncode}")
    return before, after, r.stdout


def step_of_kernels(ks, grid_step):
    """[(step, name, grid)] with each kernel given the step of the last marker before it
    (-1 before the first)."""
    out, step = [], -1
    for _, name, grid in ks:
        if is_marker(name):
            if grid not in grid_step:
                raise SystemExit(f"FAIL: a fill of grid {grid} that no step of the reference has")
            step = grid_step[grid]
        out.append((step, name, grid))
    return out


def check_span(label, got, steps, first_range, last_range):
    """`got` must be steps a..b's kernels in order, with a in first_range and b in
    last_range, the first and last step possibly cut (the window opened or closed inside
    them); the kernels before the first marker the tail of step a-1."""
    problems = []
    marked = [s for s, _, _ in got if s >= 0]
    if not marked:
        return [f"{label}: no step's fill in the window ({len(got)} kernels)"]
    a, b = marked[0], marked[-1]
    if not first_range[0] <= a <= first_range[1]:
        problems.append(f"{label}: the first step recorded is {a}, expected {first_range}")
    if not last_range[0] <= b <= last_range[1]:
        problems.append(f"{label}: the last step recorded is {b}, expected {last_range}")
    if sorted(set(marked)) != list(range(a, b + 1)):
        problems.append(f"{label}: steps {a}..{b} are not all there, or come out of order")
    head = [(n, g) for s, n, g in got if s < 0]
    if a > 0 and head != steps[a - 1][len(steps[a - 1]) - len(head):]:
        problems.append(f"{label}: before step {a}'s fill: {head}, not the end of step {a - 1}")
    for s in range(a, b + 1):
        mine = [(n, g) for t, n, g in got if t == s]
        want = steps[s]
        if s == b:
            want = want[:len(mine)]  # the window may close inside the last step
        if mine != want:
            problems.append(f"{label}: step {s} has {mine}, expected {want}")
    return problems


def check_window_list(doc, label, expected, setting):
    windows = doc.get("captureWindows")
    meta = doc.get("flopline", {})
    problems = []
    if meta.get("capture range") != setting:
        problems.append(f"{label}: capture range {meta.get('capture range')!r}, expected {setting!r}")
    got = [(w.get("openedBy"), w.get("closedBy")) for w in windows or []]
    if got != expected:
        problems.append(f"{label}: windows {got}, expected {expected}")
    return problems, [(w["startNs"], w["endNs"]) for w in windows or [] if w.get("endNs")]


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
    env = dict(os.environ, FLOPLINE_RUNS_DIR=os.path.join(args.out, "runs"),
               STEPS_PROGRESS=os.path.join(args.out, "progress"))
    problems = []

    ref_path = os.path.join(args.out, "reference.json")
    r = subprocess.run([args.flopline, "run", "--no-summary", "-o", ref_path, "--", args.python,
                        LOOP, *LOOP_ARGS], capture_output=True, text=True, env=env, timeout=600)
    if r.returncode != 0:
        print(r.stdout, r.stderr)
        raise SystemExit(f"FAIL: the reference run exited {r.returncode}")
    steps = []
    for _, name, grid in kernels(check_support.read_trace(ref_path)):
        if is_marker(name):
            steps.append([])
        if steps:
            steps[-1].append((name, grid))
    if len(steps) != STEPS or any(len(s) != 3 for s in steps):
        raise SystemExit(f"FAIL: the reference has {len(steps)} steps, expected {STEPS} x 3 kernels")
    grid_step = {s[0][1]: i for i, s in enumerate(steps)}
    if len(grid_step) != STEPS:
        raise SystemExit("FAIL: the steps' fill grids are not all different")

    def launch(how, trace, extra=(), steps=STEPS):
        if os.path.exists(env["STEPS_PROGRESS"]):
            os.unlink(env["STEPS_PROGRESS"])
        loop_args = list(LOOP_ARGS)
        loop_args[loop_args.index("--steps") + 1] = str(steps)
        cmd = [args.flopline, how, "--no-summary", *extra, "-o", trace, "--", args.python, LOOP,
               *loop_args, "--progress", env["STEPS_PROGRESS"]]
        print("+", " ".join(cmd), flush=True)
        return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True)

    def finish(proc, trace):
        out, _ = proc.communicate(timeout=600)
        print(out, end="")
        if proc.returncode != 0 or not os.path.exists(trace):
            raise SystemExit(f"FAIL: exited {proc.returncode}, trace written: {os.path.exists(trace)}")
        return check_support.read_trace(trace)

    def finished_doc(path):
        """The trace at `path` once it is a finished file (its metadata written), else None."""
        try:
            doc = check_support.read_trace(path)
        except Exception:  # not there yet, or still an open array
            return None
        return doc if isinstance(doc, dict) and "flopline" in doc else None

    # 2. flopline launch, two windows by its pid, a file each.
    trace = os.path.join(args.out, "launch.json")
    files = [os.path.join(args.out, f"launch-window{n}.json") for n in (1, 2)]
    for f in files + [trace]:
        if os.path.exists(f):
            os.unlink(f)
    p = launch("launch", trace, ("--flush-interval", "500ms"), steps=2 * STEPS)
    wait_steps(env["STEPS_PROGRESS"], 100, p)
    spans = []
    for n, (after_start, after_stop) in enumerate([(150, 50), (50, 0)], start=1):
        s0, s1, out = command(args.flopline, env, "start", str(p.pid))
        if f"window {n} opened" not in out:
            problems.append(f"launch: flopline start answered {out!r}")
        wait_steps(env["STEPS_PROGRESS"], s1 + after_start, p)
        s2, s3, out = command(args.flopline, env, "stop", str(p.pid))
        if f"window {n} closed" not in out or f"launch-window{n}.json" not in out:
            problems.append(f"launch: flopline stop answered {out!r} (window {n} closed, its file)")
        spans.append(((s0, s1 + 1), (s2 - 1, s3)))
        if n == 1:
            # The window's file is there while the program runs on.
            end = time.time() + 30
            while finished_doc(files[0]) is None and time.time() < end and p.poll() is None:
                time.sleep(0.1)
            ready = finished_doc(files[0]) is not None
            running = p.poll() is None
            print(f"launch: window 1's file finished while the loop runs: {ready and running} "
                  f"(at step {done_steps(env['STEPS_PROGRESS'])})", flush=True)
            if not (ready and running):
                problems.append("launch: window 1's file was not finished while the program ran")
            wait_steps(env["STEPS_PROGRESS"], s3 + after_stop, p)
    out, _ = p.communicate(timeout=600)
    print(out, end="")
    if p.returncode != 0:
        raise SystemExit(f"FAIL: flopline launch exited {p.returncode}")
    if os.path.exists(trace):
        problems.append(f"launch: {trace} written beside the window files")
    for n, (path, (first_range, last_range)) in enumerate(zip(files, spans), start=1):
        doc = finished_doc(path)
        if doc is None:
            problems.append(f"launch: {path} missing or not finished")
            continue
        label = f"launch, window {n}"
        pr, windows = check_window_list(doc, label, [("flopline start", "flopline stop")],
                                        "ondemand, repeat")
        problems += pr
        if [w.get("index") for w in doc.get("captureWindows") or []] != [n]:
            problems.append(f"{label}: captureWindows {doc.get('captureWindows')}, expected window {n} alone")
        if doc.get("flopline", {}).get("window file") != f"window {n} of the run":
            problems.append(f"{label}: window file = {doc.get('flopline', {}).get('window file')!r}")
        got = step_of_kernels(kernels(doc), grid_step)
        # Step k runs after k steps are done: the window opened while a step of
        # first_range ran, and closed while one of last_range ran (or just after).
        problems += check_span(label, got, steps, first_range, last_range)
        problems += check_calls_inside(doc, label, windows)
        print(f"{label}: {len(got)} kernels, steps {got[0][0] if got else '-'}..{got[-1][0] if got else '-'}; "
              f"expected from {first_range} to {last_range}")

    # 3. flopline run, stopped and started again; no RUN: the one live run.
    trace = os.path.join(args.out, "run_stop_start.json")
    p = launch("run", trace)
    wait_steps(env["STEPS_PROGRESS"], 100, p)
    t0, t1, out = command(args.flopline, env, "stop")
    if "window 1 closed" not in out:
        problems.append(f"run: flopline stop answered {out!r}")
    wait_steps(env["STEPS_PROGRESS"], 200, p)
    t2, t3, out = command(args.flopline, env, "start")
    if "window 2 opened" not in out:
        problems.append(f"run: flopline start answered {out!r}")
    doc = finish(p, trace)
    pr, windows = check_window_list(
        doc, "run", [("capture start", "flopline stop"), ("flopline start", "program end")], "none")
    problems += pr
    ks = kernels(doc)
    # Each window's kernels by time (every step synchronizes, so none runs across the
    # switch); steps counted within each, so the second's first kernels (the end of a
    # step whose fill was not recorded) are its head.
    split = windows[1][0] if len(windows) == 2 else 0
    first = step_of_kernels([k for k in ks if k[0] < split], grid_step)
    second = step_of_kernels([k for k in ks if k[0] >= split], grid_step)
    got = first + second
    problems += check_span("run, window 1", first, steps, (0, 0), (t0 - 1, t1))
    problems += check_span("run, window 2", second, steps, (t2, t3 + 1), (STEPS - 1, STEPS - 1))
    problems += check_calls_inside(doc, "run", windows)
    print(f"run: {len(got)} kernels; stop at steps {t0}-{t1}, start at {t2}-{t3}")

    for line in problems:
        print("FAIL:", line)
    if problems:
        return 1
    print("ok: flopline launch + start/stop records exactly the steps between them; "
          "flopline run stops and starts again")
    return 0


if __name__ == "__main__":
    sys.exit(main())
