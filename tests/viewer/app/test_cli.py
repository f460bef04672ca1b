#!/usr/bin/env python3
"""flopline-view's command line and `flopline view`: --help, clear errors with a
non-zero exit for unknown options, bad values and missing files, and `flopline view`
finding the viewer (or saying it is not built). Needs no display."""
import argparse
import os
import shutil

from viewer_harness import Checks, run, tmpdir, viewer_env


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--viewer", required=True)
    ap.add_argument("--flopline", required=True)
    ap.add_argument("--tmp", required=True)
    a = ap.parse_args()
    c = Checks()
    env = viewer_env()
    env.pop("DISPLAY", None)  # none of this may need a window

    rc, out, err = run([a.viewer, "--help"], env=env)
    c.check(rc == 0 and "--screenshot OUT.png" in out and "--bench" in out, "flopline-view --help")
    rc, out, err = run([a.viewer, "--frobnicate"], env=env)
    c.check(rc == 2 and "unknown option '--frobnicate'" in err and "--help" in err, f"unknown option: exit 2 ({err.strip()})")
    rc, out, err = run([a.viewer, "--size", "big"], env=env)
    c.check(rc == 2 and "--size 'big'" in err, f"bad --size: exit 2 ({err.strip()})")
    rc, out, err = run([a.viewer, "/nonexistent/trace.json", "--screenshot", "x.png"], env=env)
    c.check(rc == 1 and "/nonexistent/trace.json: no such file" in err, f"missing file: exit 1 ({err.strip()})")
    rc, out, err = run([a.viewer], env=env)
    c.check(rc == 1 and "cannot open a window" in err, f"no display: exit 1 with the reason ({err.strip()})")
    # Outputs are checked before anything is loaded or rendered (no window is needed to
    # fail): a name longer than the file system allows, a missing directory.
    d0 = tmpdir(a.tmp, "outputs")
    trace = os.path.join(d0, "t.json")
    with open(trace, "w") as f:
        f.write('{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":2}]}')
    rc, out, err = run([a.viewer, trace, "--screenshot", os.path.join(d0, "s" * 300 + ".png")], env=env)
    c.check(rc == 1 and "the file name is too long" in err, f"--screenshot name too long: exit 1 ({err.strip()})")
    rc, out, err = run([a.viewer, trace, "--screenshot", os.path.join(d0, "ok.png"), "--csv",
                        os.path.join(d0, "missing", "t.csv")], env=env)
    c.check(rc == 1 and "no such directory" in err, f"--csv into a missing directory: exit 1 ({err.strip()})")

    rc, out, err = run([a.flopline, "--help"], env=env)
    c.check(rc == 0 and "view" in out, "flopline --help lists view")
    rc, out, err = run([a.flopline, "view", "--help"], env=env)
    c.check(rc == 0 and "flopline view TRACE" in out, f"flopline view --help ({err.strip()})")
    rc, out, err = run([a.flopline, "view", "/nonexistent/trace.json"], env=env)
    c.check(rc == 1 and "no such file" in err, f"flopline view runs flopline-view ({err.strip()})")
    # A flopline with no viewer beside it nor on PATH says so.
    d = tmpdir(a.tmp, "cli")
    lone = os.path.join(d, "flopline")
    shutil.copy(a.flopline, lone)
    env_nopath = dict(env, PATH="/nonexistent")
    rc, out, err = run([lone, "view", "x.json"], env=env_nopath)
    c.check(rc == 1 and "flopline-view not found" in err, f"flopline view without the viewer ({err.strip()})")
    c.finish()


if __name__ == "__main__":
    main()
