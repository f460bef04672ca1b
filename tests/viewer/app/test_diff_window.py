#!/usr/bin/env python3
"""The diff window, headless: two runs opened with --diff A B (and through `flopline view
--diff`); the --dump-state rows are checked against what `flopline diff --json` prints
for the same files; --diff's mistakes are exit 2 with the reason."""
import argparse
import json
import os

from viewer_harness import Checks, Xvfb, run, tmpdir, write_trace, x_event

W, H = 1200, 700


def gemm(start, dur, precision):
    return x_event("gemm", "kernel", 0, 7, start, dur, {"flops": 2e9, "precision": precision})


def write_runs(d):
    a = os.path.join(d, "a.json")
    b = os.path.join(d, "b.json")
    write_trace(a, [gemm(t, 10, "tf32") for t in (0, 20, 40, 60)] +
                [x_event("add", "kernel", 0, 7, 80, 5), x_event("old_kernel", "kernel", 0, 7, 90, 7),
                 x_event("Memcpy DtoD", "gpu_memcpy", 0, 7, 100, 2)])
    write_trace(b, [gemm(t, 30, "fp32") for t in (0, 40, 80, 120)] +
                [x_event("add", "kernel", 0, 7, 160, 5), x_event("new_kernel", "kernel", 0, 7, 170, 3)] +
                [x_event("Memcpy DtoD", "gpu_memcpy", 0, 7, t, 2) for t in (180, 185, 190)])
    return a, b


def json_of(cmd):
    rc, out, err = run(cmd)
    if rc != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {rc}: {err}")
    return json.loads(out)


def check_diff(c, a, x, d):
    ra, rb = write_runs(d)
    want = json_of([a.flopline, "diff", ra, rb, "--json"])
    for label, cmd in (("flopline-view --diff", [a.viewer, "--diff", ra, rb]),
                       ("flopline view --diff", [a.flopline, "view", "--diff", ra, rb])):
        name = "diff" if "-view" in label else "view_diff"
        png = os.path.join(d, name + ".png")
        dump = os.path.join(d, name + ".state.json")
        rc, out, err = run(cmd + ["--screenshot", png, "--size", f"{W}x{H}", "--window", "diff",
                                  "--dump-state", dump], env=x.env())
        c.check(rc == 0, f"{label} --window diff exits 0 ({err.strip()})")
        if rc != 0:
            continue
        got = json.load(open(dump))["diff"]
        c.check(got is not None and got["by"] == "name", f"{label}: the diff is in the dump")
        c.check(got["a"]["total_ns"] == want["a"]["total_ns"] and got["b"]["total_ns"] == want["b"]["total_ns"],
                f"{label}: each side's total equals flopline diff's")
        rows = [(r["name"], r["change"], r["delta_ns"], r["a_count"], r["b_count"], r["a_total_ns"], r["b_total_ns"])
                for r in got["rows"]]
        expect = [(r["name"], r["change"], r["delta_ns"], r["a"] and r["a"]["count"], r["b"] and r["b"]["count"],
                   r["a"] and r["a"]["total_ns"], r["b"] and r["b"]["total_ns"]) for r in want["rows"]]
        c.check(rows == expect, f"{label}: the rows are flopline diff's, in its order ({[r[1] for r in rows]})")
        c.check(got["shown"] == list(range(len(rows))), f"{label}: the window lists them by time impact")
    # Run directories on each side: run A in two files, whose rows add up.
    da, db = os.path.join(d, "run_a"), os.path.join(d, "run_b")
    os.makedirs(da)
    os.makedirs(db)
    events = json.load(open(ra))["traceEvents"]
    write_trace(os.path.join(da, "rank0.json"), events[:3])
    write_trace(os.path.join(da, "rank1.json"), events[3:])
    write_trace(os.path.join(db, "rank0.json"), json.load(open(rb))["traceEvents"])
    want = json_of([a.flopline, "diff", da, db, "--json"])
    dump = os.path.join(d, "dirs.state.json")
    rc, out, err = run([a.viewer, "--diff", da, db, "--screenshot", os.path.join(d, "dirs.png"),
                        "--size", f"{W}x{H}", "--window", "diff", "--dump-state", dump], env=x.env())
    c.check(rc == 0, f"--diff of two run directories exits 0 ({err.strip()})")
    if rc == 0:
        got = json.load(open(dump))["diff"]
        c.check(got["a"]["files"] == 2 and got["b"]["files"] == 1, f"run A has 2 files ({got['a']['files']})")
        c.check([(r["name"], r["change"], r["delta_ns"]) for r in got["rows"]] ==
                [(r["name"], r["change"], r["delta_ns"]) for r in want["rows"]],
                "the rows over run directories are flopline diff's")
    # The mistakes.
    rc, out, err = run([a.viewer, "--diff", ra], env=x.env())
    c.check(rc == 2 and "--diff compares two runs" in err, f"--diff with one run: exit 2 ({err.strip()})")
    rc, out, err = run([a.viewer, "--diff", ra, rb, "--by", "category"], env=x.env())
    c.check(rc == 2 and "not categories" in err, f"--diff --by category: exit 2 ({err.strip()})")
    rc, out, err = run([a.viewer, ra, "--window", "diff"], env=x.env())
    c.check(rc == 2 and "--window diff needs --diff" in err, f"--window diff alone: exit 2 ({err.strip()})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--viewer", required=True)
    ap.add_argument("--flopline", required=True)
    ap.add_argument("--tmp", required=True)
    a = ap.parse_args()
    c = Checks()
    d = tmpdir(a.tmp, "diff_window")
    with Xvfb() as x:
        check_diff(c, a, x, d)
    c.finish()


if __name__ == "__main__":
    main()
