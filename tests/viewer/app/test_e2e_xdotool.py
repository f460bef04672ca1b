#!/usr/bin/env python3
"""Drives the real flopline-view window under Xvfb with xdotool, as a person would:
scroll to zoom around the cursor, click a slice, press F to fit it, W/D to zoom and
pan, Esc to clear, / to search. Checks each step through the state dump the viewer
rewrites whenever its state changes (--dump-state)."""
import argparse
import os
import shutil
import subprocess
import sys
import time

import fixtures
from viewer_harness import SKIP, Checks, Xvfb, column_runs, read_png, read_state, run, tmpdir, wait_state

W, H = 1200, 700
RULER_BG = (34, 36, 42)  # ui_colors.h kRulerBg


def xdotool_runner(xdotool, env):
    """xdo(*args): one xdotool command on the Xvfb display, its output captured."""
    def xdo(*args):
        return subprocess.run([xdotool, *map(str, args)], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=30)
    return xdo


def find_viewer_window(xdo, timeout=30.0):
    """The id of the flopline-view window once it appears, or None."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        r = xdo("search", "--name", "flopline-view")
        if r.returncode == 0 and r.stdout.strip():
            return r.stdout.split()[0].decode()
        time.sleep(0.05)
    return None


def span(st):
    return st["viewport"]["t1_ns"] - st["viewport"]["t0_ns"]


def x_of(st, t_ns):
    vp = st["viewport"]
    return vp["x0_px"] + (t_ns - vp["t0_ns"]) / (vp["t1_ns"] - vp["t0_ns"]) * vp["width_px"]


def t_of(st, x):
    vp = st["viewport"]
    return vp["t0_ns"] + (x - vp["x0_px"]) / vp["width_px"] * (vp["t1_ns"] - vp["t0_ns"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--viewer", required=True)
    ap.add_argument("--tmp", required=True)
    a = ap.parse_args()
    xdotool = shutil.which("xdotool")
    c = Checks()
    d = tmpdir(a.tmp, "e2e")
    trace = os.path.join(d, "tracks.json")
    fixtures.write_tracks(trace)
    dump = os.path.join(d, "state.json")
    with Xvfb(1600, 1000) as x:
        if xdotool is None:
            print("SKIPPED: xdotool not found (Debian package xdotool; scripts/test.sh installs it)")
            sys.exit(SKIP)
        env = x.env()
        # Where the rows are: the headless screenshot lays the window out exactly as the
        # interactive one of the same size (same menu bar, ruler and layout).
        png = os.path.join(d, "layout.png")
        rc, _, err = run([a.viewer, trace, "--screenshot", png, "--size", f"{W}x{H}"], env=env)
        c.check(rc == 0, f"layout screenshot ({err.strip()})")
        _, _, px = read_png(png)

        viewer = subprocess.Popen([a.viewer, trace, "--size", f"{W}x{H}", "--dump-state", dump], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            xdo = xdotool_runner(xdotool, env)
            wid = find_viewer_window(xdo)
            c.check(wid is not None, "the viewer window appears")
            st0 = wait_state(dump, lambda s: s["rows"] == fixtures.SLICE_ROWS)
            c.check(st0 is not None and st0["rows"] == fixtures.SLICE_ROWS, "the trace is loaded (state dump)")
            if wid is None or st0 is None:
                c.finish()
            # --- idle: no input, no frames, no CPU ----------------------------------------
            def cpu_seconds(pid):
                with open(f"/proc/{pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
            time.sleep(1.0)
            before = cpu_seconds(viewer.pid)
            time.sleep(2.0)
            idle_cpu = cpu_seconds(viewer.pid) - before
            c.check(idle_cpu < 0.3, f"idle with nothing to do: {idle_cpu:.2f} s of CPU in 2 s")

            xdo("windowmove", "--sync", wid, 0, 0)
            xdo("windowfocus", "--sync", wid)

            # --- scroll to zoom around the cursor --------------------------------------
            cx = int(x_of(st0, fixtures.SCAN_US * 1000))
            cy = H - 40  # below the rows: over the timeline, on no slice
            t_under = t_of(st0, cx)
            xdo("mousemove", "--window", wid, cx, cy)
            for _ in range(3):
                xdo("click", "--window", wid, 4)  # wheel up
            st1 = wait_state(dump, lambda s: span(s) < span(st0) * 0.6)
            c.check(span(st1) < span(st0) * 0.6, f"three wheel steps zoom in ({span(st0)} -> {span(st1)} ns)")
            drift = abs(t_of(st1, cx) - t_under)
            c.check(drift <= span(st1) / W * 2, f"the time under the cursor stays put (moved {drift:.0f} ns)")

            # --- click a slice -----------------------------------------------------------
            # matmul_op is the third slice row from the top (fixtures.TRACK_ROWS order).
            runs = [r for r in column_runs(px, int(x_of(st0, fixtures.SCAN_US * 1000)), 0, H) if r[1] >= 10]
            row_y = runs[2][0] + runs[2][1] // 2
            t_click = 60 * 1000  # inside matmul_op [20, 80) us, in view after the zoom
            click_x = int(x_of(st1, t_click))
            c.check(0 < click_x < W - 400, f"the click lands in the timeline (x={click_x})")
            xdo("mousemove", "--window", wid, click_x, row_y)
            time.sleep(0.2)
            xdo("click", "--window", wid, 1)
            st2 = wait_state(dump, lambda s: s["selection"] is not None)
            sel = st2["selection"] or {}
            c.check(sel.get("name") == "matmul_op", f"clicking selects matmul_op (got {sel.get('name')})")

            # --- F fits the selection ------------------------------------------------------
            xdo("key", "--window", wid, "f")
            def fits_matmul(s):
                return s["viewport"]["t0_ns"] <= 20_000 and s["viewport"]["t1_ns"] >= 80_000 and span(s) < 70_000
            st3 = wait_state(dump, fits_matmul)
            c.check(fits_matmul(st3),
                    f"F fits matmul_op [20, 80) us (view {st3['viewport']['t0_ns']}..{st3['viewport']['t1_ns']})")

            # --- W zooms in, D pans right ------------------------------------------------------
            xdo("mousemove", "--window", wid, W // 3, cy)
            xdo("key", "--window", wid, "w")
            st4 = wait_state(dump, lambda s: span(s) < span(st3) * 0.9)
            c.check(span(st4) < span(st3) * 0.9, f"W zooms in ({span(st3)} -> {span(st4)} ns)")
            xdo("key", "--window", wid, "d")
            st5 = wait_state(dump, lambda s: s["viewport"]["t0_ns"] > st4["viewport"]["t0_ns"])
            c.check(st5["viewport"]["t0_ns"] > st4["viewport"]["t0_ns"], "D pans to later times")

            # --- Esc clears, F fits everything ------------------------------------------------
            xdo("key", "--window", wid, "Escape")
            st6 = wait_state(dump, lambda s: s["selection"] is None)
            c.check(st6["selection"] is None, "Esc clears the selection")
            xdo("key", "--window", wid, "f")
            def fits_all(s):
                return s["viewport"]["t0_ns"] <= 0 and s["viewport"]["t1_ns"] >= 100_000
            st7 = wait_state(dump, fits_all)
            c.check(fits_all(st7), f"F without a selection fits the whole trace (view {st7['viewport']})")

            # --- / searches ---------------------------------------------------------------------
            xdo("key", "--window", wid, "slash")
            time.sleep(0.3)
            xdo("type", "--window", wid, "span_")
            st8 = wait_state(dump, lambda s: s["search"]["query"] == "span_")
            c.check(st8["search"] == {"query": "span_", "matches": 2},
                    f"/ then typing searches: 2 matches for span_ (got {st8['search']})")
            xdo("key", "--window", wid, "Return")
            st9 = wait_state(dump, lambda s: s["selection"] is not None)
            c.check((st9["selection"] or {}).get("name") == "span_a", "Enter selects the first match, span_a")
            xdo("key", "--window", wid, "Escape")  # leaves the search field

            # --- drag on the ruler selects a range ---------------------------------------------
            ruler = column_runs(px, W // 2, 0, 80, keep=lambda col: col == RULER_BG)
            c.check(len(ruler) >= 1, f"the ruler is found in the layout picture ({ruler})")
            ry = ruler[0][0] + ruler[0][1] // 2 if ruler else 30
            st_r0 = read_state(dump)
            xa, xb = int(x_of(st_r0, 30_000)), int(x_of(st_r0, 50_000))
            xdo("mousemove", "--window", wid, xa, ry)
            time.sleep(0.1)
            xdo("mousedown", "--window", wid, 1)
            # A frame must see the press where it happened before the pointer moves: on a
            # loaded machine the press and the first moves otherwise reach one frame, and
            # the drag starts where the pointer already is.
            time.sleep(0.2)
            for xm in range(xa, xb + 1, 20):
                xdo("mousemove", "--window", wid, xm, ry)
            xdo("mousemove", "--window", wid, xb, ry)
            time.sleep(0.1)
            xdo("mouseup", "--window", wid, 1)
            px_ns = span(st_r0) / st_r0["viewport"]["width_px"]
            st10 = wait_state(dump, lambda s: s["range"] is not None and abs(s["range"]["end_ns"] - 50_000) <= 3 * px_ns)
            rng = st10["range"] or {}
            c.check(abs(rng.get("begin_ns", -1e12) - 30_000) <= 3 * px_ns and abs(rng.get("end_ns", -1e12) - 50_000) <= 3 * px_ns,
                    f"dragging the ruler from 30 to 50 us selects that range (got {rng})")

            # --- J jumps along the selection's flow, launch -> kernel ---------------------------
            xdo("mousemove", "--window", wid, W // 3, cy)
            xdo("key", "--window", wid, "slash")
            time.sleep(0.3)
            xdo("key", "--window", wid, "ctrl+a")
            xdo("type", "--window", wid, "cudaLaunch")
            wait_state(dump, lambda s: s["search"]["query"] == "cudaLaunch")
            xdo("key", "--window", wid, "Return")
            st11 = wait_state(dump, lambda s: (s["selection"] or {}).get("name") == "cudaLaunchKernel")
            c.check((st11["selection"] or {}).get("flows") == 1, f"the search selects the launch, with its flow ({st11['selection']})")
            xdo("key", "--window", wid, "Escape")
            time.sleep(0.2)
            xdo("key", "--window", wid, "j")
            st12 = wait_state(dump, lambda s: (s["selection"] or {}).get("name") == "gemm_kernel")
            c.check((st12["selection"] or {}).get("name") == "gemm_kernel", f"J follows the flow to the kernel ({st12['selection']})")
        finally:
            viewer.terminate()
            try:
                viewer.wait(10)
            except subprocess.TimeoutExpired:
                viewer.kill()
            err = viewer.stderr.read().decode(errors="replace")
            if err.strip():
                print("viewer stderr:", err[-2000:])
        table_click(a.viewer, env, xdotool, d, c)
    c.finish()


def table_click(viewer_path, env, xdotool, d, c):
    """T opens the FLOP/s table; a click on a row lights that operator and selects its
    longest instance. The table opens at a fixed place (table_window.cc), but rows are
    found by clicking upwards from below them until one takes."""
    ops = os.path.join(d, "ops.json")
    fixtures.write_ops(ops)
    dump = os.path.join(d, "state_ops.json")
    viewer = subprocess.Popen([viewer_path, ops, "--size", f"{W}x{H}", "--dump-state", dump], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        xdo = xdotool_runner(xdotool, env)
        wid = find_viewer_window(xdo)
        st = wait_state(dump, lambda s: s["rows"] > 0)
        if not c.check(wid is not None and st is not None, "the ops fixture opens"):
            return
        xdo("windowmove", "--sync", wid, 0, 0)
        xdo("windowfocus", "--sync", wid)
        xdo("mousemove", "--window", wid, W // 2, 60)
        xdo("key", "--window", wid, "t")
        time.sleep(0.5)
        top = int(19 + (H - 19) * 0.45)  # table_window.cc: 45% down the work area
        got = None
        for y in range(top + 160, top + 40, -4):
            xdo("mousemove", "--window", wid, 60, y)
            xdo("click", "--window", wid, 1)
            st = wait_state(dump, lambda s: s["highlighted"] is not None, timeout=0.3)
            if st and st["highlighted"] is not None:
                got = st
                break
        c.check(got is not None and got["highlighted"] in fixtures.OPS, f"a table row click lights an operator ({got and got['highlighted']})")
        if got:
            name = got["highlighted"]
            spans = fixtures.OPS[name][0]
            longest = max(spans, key=lambda sd: sd[1])
            sel = got["selection"] or {}
            c.check(sel.get("name") == name and sel.get("start_ns") == longest[0] * 1000,
                    f"...and selects its longest instance at {longest[0]} us (got {sel})")
            vp = got["viewport"]
            c.check(vp["t0_ns"] <= longest[0] * 1000 and vp["t1_ns"] >= (longest[0] + longest[1]) * 1000,
                    "...and jumps to it")
    finally:
        viewer.terminate()
        viewer.wait(10)


if __name__ == "__main__":
    main()
