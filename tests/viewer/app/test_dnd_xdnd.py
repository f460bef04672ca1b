#!/usr/bin/env python3
"""Drops trace files on the real flopline-view window under Xvfb through the X11 drag
and drop protocol (XDND), as a file manager would: one file on the empty window, one
more on the loaded window (it is added), and two at once on a fresh empty window.
Checks the protocol's answers, then the state dump (--dump-state) and the window
title for what got loaded."""
import argparse
import importlib.util
import os
import subprocess
import sys
import time

import fixtures
from viewer_harness import SKIP, Checks, Xvfb, tmpdir, wait_state

W, H = 800, 500

# What each fixture adds to the layout (state_dump.h: processes, slices). The tracks
# fixture has processes "app" and "GPU 0", the slices of TRACK_ROWS and cudaLaunchKernel.
TRACKS = {"processes": 2, "slices": len(fixtures.TRACK_ROWS) + 1}
OPS = {"processes": 1, "slices": sum(len(spans) for spans, _, _ in fixtures.OPS.values())}


def import_xdnd_source():
    """xdnd_source needs python-xlib. Debian's python3-xlib installs it for the system
    Python only; when the tests run under another Python 3 (CMake may find a pyenv or a
    venv first), that copy is pure Python and is used from there."""
    if importlib.util.find_spec("Xlib") is None:
        sys.path.append("/usr/lib/python3/dist-packages")
        if importlib.util.find_spec("Xlib") is None:
            print("skipped: python3-xlib not installed")
            sys.exit(SKIP)
    import xdnd_source
    return xdnd_source


def start_viewer(viewer, env, dump):
    """An empty viewer (no trace argument) that dumps its state to `dump`."""
    if os.path.exists(dump):
        os.remove(dump)
    return subprocess.Popen([viewer, "--size", f"{W}x{H}", "--dump-state", dump], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def stop_viewer(proc):
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    err = proc.stderr.read().decode(errors="replace")
    if err.strip():
        print("viewer stderr:", err[-2000:])


def wait_title(src, win, pred, timeout=10.0):
    """The window's title once `pred` holds for it, or the last one seen."""
    deadline = time.time() + timeout
    title = src.window_name(win)
    while not pred(title) and time.time() < deadline:
        time.sleep(0.05)
        title = src.window_name(win)
    return title


def has(st, want):
    """The dump shows exactly `want` (processes and slices) loaded."""
    return st is not None and all(st[k] == v for k, v in want.items())


def brief(st):
    """The counts of a dump, for the messages."""
    return st and {k: st[k] for k in ("processes", "tracks", "rows", "slices")}


def plus(*loads):
    return {k: sum(l[k] for l in loads) for k in ("processes", "slices")}


def drop_and_check(c, xdnd, src, win, paths, what):
    """Drops `paths` on `win` and checks each answer of the protocol. False when the
    drop did not get through (the later checks would only repeat that)."""
    try:
        r = src.drop(win, paths)
    except xdnd.DropError as e:
        c.check(False, f"{what}: {e}")
        return False
    c.check(r.accepted and r.action == "XdndActionCopy",
            f"{what}: XdndStatus accepts it as a copy (accepted {r.accepted}, action {r.action})")
    c.check(r.served == [xdnd.URI_LIST], f"{what}: the viewer asks for the files as {xdnd.URI_LIST} (asked {r.served})")
    c.check(r.finished_ok, f"{what}: XdndFinished says it took them")
    return r.accepted and r.finished_ok


def empty_window(c, src, proc, dump, what):
    """The viewer's window, once it is up and has dumped its empty state."""
    win = src.find_window(proc.pid, "flopline-view")
    st = wait_state(dump, lambda s: True)
    c.check(has(st, {"processes": 0, "slices": 0}), f"{what}: the viewer starts empty ({brief(st)})")
    return win


def one_then_another(c, xdnd, src, viewer, env, d, tracks, ops):
    """One file on the empty window opens it; one more on the loaded window adds it
    (viewer_app.cc: a drop on a non-empty viewer re-reads the open files with it)."""
    dump = os.path.join(d, "state_one.json")
    proc = start_viewer(viewer, env, dump)
    try:
        win = empty_window(c, src, proc, dump, "one file")
        if drop_and_check(c, xdnd, src, win, [tracks], "one file"):
            st = wait_state(dump, lambda s: has(s, TRACKS))
            c.check(has(st, TRACKS) and st["rows"] == fixtures.SLICE_ROWS,
                    f"one file: the dropped trace is loaded ({brief(st)})")
            title = wait_title(src, win, lambda t: t == "flopline-view: tracks.json")
            c.check(title == "flopline-view: tracks.json", f"one file: the title names it ({title!r})")
        if drop_and_check(c, xdnd, src, win, [ops], "one more"):
            want = plus(TRACKS, OPS)
            st = wait_state(dump, lambda s: has(s, want))
            c.check(has(st, want), f"one more: it is added to the open trace ({brief(st)})")
    finally:
        stop_viewer(proc)


def two_at_once(c, xdnd, src, viewer, env, d, tracks, ops):
    """Two files in one drop (a uri-list of two lines) both open."""
    dump = os.path.join(d, "state_two.json")
    proc = start_viewer(viewer, env, dump)
    try:
        win = empty_window(c, src, proc, dump, "two files")
        if drop_and_check(c, xdnd, src, win, [tracks, ops], "two files"):
            want = plus(TRACKS, OPS)
            st = wait_state(dump, lambda s: has(s, want))
            c.check(has(st, want), f"two files: both traces are loaded ({brief(st)})")
            expect = "flopline-view: tracks.json +1"
            title = wait_title(src, win, lambda t: t == expect)
            c.check(title == expect, f"two files: the title counts the second ({title!r})")
    finally:
        stop_viewer(proc)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--viewer", required=True)
    ap.add_argument("--tmp", required=True)
    a = ap.parse_args()
    xdnd = import_xdnd_source()
    c = Checks()
    d = tmpdir(a.tmp, "dnd")
    tracks = os.path.join(d, "tracks.json")
    fixtures.write_tracks(tracks)
    # A space in the name: the URI carries it as %20, which the viewer must decode.
    ops = os.path.join(d, "ops trace.json")
    fixtures.write_ops(ops)
    with Xvfb(1280, 800) as x:
        env = x.env()
        src = xdnd.XdndSource(x.display)
        try:
            one_then_another(c, xdnd, src, a.viewer, env, d, tracks, ops)
            two_at_once(c, xdnd, src, a.viewer, env, d, tracks, ops)
        except xdnd.DropError as e:  # the window never showed up
            c.check(False, str(e))
        finally:
            src.close()
    c.finish()


if __name__ == "__main__":
    main()
