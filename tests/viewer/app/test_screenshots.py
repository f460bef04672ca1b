#!/usr/bin/env python3
"""flopline-view --screenshot on fixture traces: the picture shows the expected slice
rows (counted by pixel colour), a selected slice is highlighted and its flow arrow is
drawn, the table window lists the expected rows (checked through its CSV export, as no
OCR is available), the roofline draws its ceilings, and corpus traces show one header
bar per process."""
import argparse
import json
import os
import re

import fixtures
from viewer_harness import Checks, Xvfb, column_runs, read_png, run, saturated, tmpdir

W, H = 1200, 700
SIDEBAR = 380           # viewer_app.cc kSidebarWidth: the timeline ends before it
PROCESS_HEADER = (48, 52, 62)   # ui_colors.h kProcessHeaderBg
FLOW_ARROW = (255, 120, 40)     # ui_colors.h kFlowArrow
COMPUTE = (255, 150, 60)        # roofline_window.cc kCompute
BANDWIDTH = (90, 170, 255)      # roofline_window.cc kBandwidth
ERROR_TEXT = (255, 110, 100)    # ui_colors.h kErrorText


def shot(viewer, env, trace, out_dir, name, *extra, size=(W, H)):
    png = os.path.join(out_dir, name + ".png")
    dump = os.path.join(out_dir, name + ".state.json")
    rc, out, err = run([viewer, trace, "--screenshot", png, "--size", f"{size[0]}x{size[1]}",
                        "--dump-state", dump, *extra], env=env)
    state = json.load(open(dump)) if os.path.exists(dump) else {}
    return rc, err, png, state


def x_of(state, t_ns):
    vp = state["viewport"]
    return int(vp["x0_px"] + (t_ns - vp["t0_ns"]) / (vp["t1_ns"] - vp["t0_ns"]) * vp["width_px"])


def filled_height(px, x, top, height, background):
    """Pixels of a counter band's column x that the graph covers (differ from the band's
    empty background)."""
    return sum(1 for yy in range(top, top + height) if px[yy][x] != background)


def check_counter_tracks(c, viewer, env, d):
    """GPU metrics written as capture writes them: one track per series under the GPU,
    drawn to scale, with the values in view in the state dump."""
    path = os.path.join(d, "gpu_metrics.json")
    fixtures.write_gpu_metrics(path)
    rc, err, png, st = shot(viewer, env, path, d, "gpu_metrics")
    c.check(rc == 0, f"screenshot of GPU metrics exits 0 ({err.strip()})")
    tracks = st.get("counter_tracks", [])
    names = [t["name"].split("/", 1)[1] for t in tracks]
    want = ["GPU metrics: " + s for s in fixtures.METRICS_SERIES]
    c.check(names == want, f"one counter track per series, in order (got {names})")
    c.check(all(t["name"].startswith("GPU 0: NVIDIA H200") for t in tracks),
            "the counter tracks sit under the GPU's process")
    c.check([t.get("unit") for t in tracks] == ["%", "%", "GB/s", "GB/s"],
            f"units from the names (got {[t.get('unit') for t in tracks]})")
    c.check(all(t["shown"] and t["points"] == fixtures.METRICS_SAMPLES for t in tracks),
            "every track is shown with all its samples")
    maxima = [max(fixtures.metrics_value(s, i) for i in range(fixtures.METRICS_SAMPLES)) for s in range(4)]
    c.check([t.get("visible_max") for t in tracks] == maxima,
            f"the maxima in view are the series' (got {[t.get('visible_max') for t in tracks]}, want {maxima})")
    c.check(st.get("counter_items", 0) >= 4, f"counter items were drawn ({st.get('counter_items')})")
    if len(tracks) != 4:
        return
    # The graphs to scale: SM active is 100% in the first half and 25% after, tensor pipe
    # 40% throughout; percentages are drawn against 100, not against the highest value.
    _, _, px = read_png(png)
    origin = st["viewport"]["origin_y_px"]
    pad = 2  # counter_track_view.cc kBandPad
    half = fixtures.METRICS_SAMPLES * fixtures.METRICS_INTERVAL_US * 1000 // 2
    x_high, x_low = x_of(st, half // 2), x_of(st, half + half // 3)
    sm, tensor = tracks[0], tracks[1]
    sm_top, inner = int(origin + sm["y"]) + pad, int(sm["height"]) - 2 * pad
    bg = px[sm_top + 1][x_low]  # above the 25% line: the band's empty background
    high = filled_height(px, x_high, sm_top, inner, bg)
    low = filled_height(px, x_low, sm_top, inner, bg)
    c.check(high >= inner - 2, f"SM active 100% fills its band ({high} of {inner} px)")
    c.check(abs(low - 0.25 * inner) <= 2.5, f"SM active 25% fills a quarter ({low} of {inner} px)")
    t_top = int(origin + tensor["y"]) + pad
    t_fill = filled_height(px, x_high, t_top, inner, bg)
    c.check(abs(t_fill - 0.4 * inner) <= 2.5, f"tensor pipe 40% fills 40% of its band ({t_fill} of {inner} px)")

    # Zoomed to the second half: the state dump gives what is in view.
    rc, err, _, st2 = shot(viewer, env, path, d, "gpu_metrics_late", "--range", f"{half // 1000 + 100}us:900us")
    late = st2.get("counter_tracks", [{}])
    c.check(rc == 0 and late[0].get("visible_max") == fixtures.SM_LOW and late[0].get("visible_min") == fixtures.SM_LOW,
            f"in the second half SM active is {fixtures.SM_LOW}% only (got {late[0].get('visible_min')}"
            f"..{late[0].get('visible_max')})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--viewer", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--tmp", required=True)
    a = ap.parse_args()
    c = Checks()
    d = tmpdir(a.tmp, "screenshots")
    tracks = os.path.join(d, "tracks.json")
    ops = os.path.join(d, "ops.json")
    fixtures.write_tracks(tracks)
    fixtures.write_ops(ops)

    with Xvfb() as x:
        env = x.env()
        # --- rows by colour ---------------------------------------------------------
        rc, err, png, st = shot(a.viewer, env, tracks, d, "tracks")
        c.check(rc == 0, f"screenshot of the fixture exits 0 ({err.strip()})")
        w, h, px = read_png(png)
        c.check((w, h) == (W, H), f"PNG is {W}x{H} (got {w}x{h})")
        c.check(st.get("rows") == fixtures.SLICE_ROWS, f"state dump: {fixtures.SLICE_ROWS} slice rows (got {st.get('rows')})")
        c.check(st.get("processes") == 2 and st.get("tracks") == 5, f"2 processes, 5 tracks (got {st.get('processes')}, {st.get('tracks')})")
        # The fixture's "ts" are absolute microseconds (no baseTimeNanoseconds).
        scan_x = x_of(st, fixtures.SCAN_US * 1000)
        c.check(0 < scan_x < W - SIDEBAR, f"scan column x={scan_x} lies in the timeline")
        runs = [r for r in column_runs(px, scan_x, 0, H) if r[1] >= 10]
        c.check(len(runs) == fixtures.ROWS_AT_SCAN,
                f"{fixtures.ROWS_AT_SCAN} slice rows at t={fixtures.SCAN_US}us by pixel colour (got {len(runs)}: {runs})")
        c.check(len({r[2] for r in runs}) == fixtures.ROWS_AT_SCAN, "each row's slice has its own colour")
        c.check(all(16 <= r[1] <= 19 for r in runs), f"each row is one slice row tall (heights {[r[1] for r in runs]})")
        headers = [r for r in column_runs(px, scan_x, 0, H, keep=lambda col: col == PROCESS_HEADER) if r[1] >= 15]
        c.check(len(headers) == 2, f"two process header bars (got {len(headers)})")

        check_counter_tracks(c, a.viewer, env, d)

        # --- --range shows exactly that time range --------------------------------------
        rc, err, _, st_range_tl = shot(a.viewer, env, tracks, d, "tracks_range", "--range", "20us:60us")
        vp = st_range_tl.get("viewport", {})
        c.check(rc == 0 and vp.get("t0_ns") == 20_000 and vp.get("t1_ns") == 60_000,
                f"--range 20us:60us shows [20, 60) us (got {vp.get('t0_ns')}..{vp.get('t1_ns')})")

        # --- a selected slice is highlighted ----------------------------------------
        # --select zooms to the slice unless --range fixes the view: both pictures show
        # [0, 100) us, so only the selection differs between them.
        rc, err, png_base, st_base = shot(a.viewer, env, tracks, d, "tracks_0_100", "--range", "0:100us")
        _, _, px = read_png(png_base)
        scan_x = x_of(st_base, fixtures.SCAN_US * 1000)
        rc, err, png_sel, st_sel = shot(a.viewer, env, tracks, d, "tracks_select", "--select", "matmul_op",
                                        "--range", "0:100us")
        c.check(rc == 0, f"--select matmul_op exits 0 ({err.strip()})")
        c.check((st_sel.get("selection") or {}).get("name") == "matmul_op", "state dump names the selection matmul_op")
        _, _, px_sel = read_png(png_sel)
        top = 60  # below the menu bar and ruler, whose status text counts items drawn
        changed = [(xx, yy) for yy in range(top, H) for xx in range(0, W - SIDEBAR) if px[yy][xx] != px_sel[yy][xx]]
        # matmul_op is the third row of the first track: its band in the unselected picture.
        band = runs[2]
        in_band = [p for p in changed if band[0] - 3 <= p[1] <= band[0] + band[1] + 3]
        c.check(len(changed) > 500, f"selecting changes the slice's pixels ({len(changed)} changed)")
        c.check(len(in_band) == len(changed), f"only pixels of the selected row change ({len(in_band)} of {len(changed)})")
        def brightness(rows):
            return sum(sum(rows[band[0] + band[1] // 2][xx]) for xx in range(scan_x - 5, scan_x + 5))
        c.check(brightness(px_sel) > brightness(px), "the selected slice is drawn brighter")

        # --- the flow arrow of a selected launch -------------------------------------
        rc, err, png_launch, st_launch = shot(a.viewer, env, tracks, d, "tracks_launch", "--select", "cudaLaunchKernel")
        _, _, px_launch = read_png(png_launch)
        arrow = sum(1 for yy in range(top, H) for xx in range(W - SIDEBAR) if px_launch[yy][xx] == FLOW_ARROW)
        c.check(rc == 0 and (st_launch.get("selection") or {}).get("flows") == 1, "the launch has one flow")
        c.check(arrow > 20, f"its flow arrow is drawn ({arrow} arrow pixels)")

        # --- the table window and its rows -----------------------------------------
        csv_path = os.path.join(d, "ops.csv")
        rc, err, png_table, _ = shot(a.viewer, env, ops, d, "ops_table", "--window", "table", "--csv", csv_path)
        c.check(rc == 0, f"--window table exits 0 ({err.strip()})")
        rows = {}
        with open(csv_path) as f:
            header = f.readline().strip().split(",")
            for line in f:
                cells = line.strip().split(",")
                rows[cells[0]] = dict(zip(header, cells))
        c.check(set(rows) == set(fixtures.OPS), f"table rows are {sorted(fixtures.OPS)} (got {sorted(rows)})")
        for name, (spans, flops, nbytes) in fixtures.OPS.items():
            r = rows.get(name, {})
            total_ns = sum(dur for _, dur in spans) * 1000
            c.check(r.get("count") == str(len(spans)), f"{name}: count {len(spans)} (got {r.get('count')})")
            c.check(r.get("total_ns") == str(total_ns), f"{name}: total {total_ns} ns (got {r.get('total_ns')})")
            want_tflops = flops * len(spans) / total_ns / 1e3
            got = float(r.get("tflops") or "nan")
            c.check(abs(got - want_tflops) <= 1e-6 * want_tflops, f"{name}: {want_tflops:.6g} TFLOP/s (got {got})")
        _, _, px_table = read_png(png_table)
        c.check(len({p for row in px_table[::8] for p in row[::8]}) > 8, "the table picture is not blank")

        # --- the range table ----------------------------------------------------------
        csv_range = os.path.join(d, "ops_range.csv")
        rc, err, _, st_range = shot(a.viewer, env, ops, d, "ops_range", "--window", "table", "--range", "0:150us",
                                    "--csv", csv_range)
        with open(csv_range) as f:
            header = f.readline().strip().split(",")
            rr = {line.split(",")[0]: dict(zip(header, line.strip().split(","))) for line in f}
        c.check(rc == 0 and st_range.get("range") is not None, "--range with the table sets the range")
        c.check(rr.get("matmul", {}).get("count") == "2" and rr.get("matmul", {}).get("total_ns") == "30000",
                f"range 0:150us holds two matmuls, 30 us (got {rr.get('matmul')})")
        c.check(rr.get("softmax", {}).get("count") == "1",
                f"range 0:150us holds the softmax at 50 us, not the one starting at 150 us (got {rr.get('softmax')})")

        # --- roofline ------------------------------------------------------------------
        rc, err, png_roof, _ = shot(a.viewer, env, ops, d, "ops_roofline", "--window", "roofline")
        _, _, px_roof = read_png(png_roof)
        compute = sum(1 for row in px_roof for p in row if p == COMPUTE)
        bandwidth = sum(1 for row in px_roof for p in row if p == BANDWIDTH)
        c.check(rc == 0, f"--window roofline exits 0 ({err.strip()})")
        c.check(compute > 100 and bandwidth > 100,
                f"roofline draws compute ceilings and the bandwidth slope ({compute}, {bandwidth} px)")

        # --- a file that is not a trace: the reader's error, in the window and on stderr ---
        bad = os.path.join(d, "bad.json")
        with open(bad, "w") as f:
            f.write("this is not a trace\n")
        rc, err, png_bad, _ = shot(a.viewer, env, bad, d, "bad")
        c.check(rc == 1 and "bad.json:1:1 (byte 0): " in err,
                f"a broken file exits 1 with file:line:column (byte N): reason ({err.strip()})")
        _, _, px_bad = read_png(png_bad)
        red = sum(1 for row in px_bad for p in row if p == ERROR_TEXT)
        c.check(red > 20, f"the error is shown in the window ({red} error-coloured pixels)")

        # --- corpus traces: one header bar per process ---------------------------------
        corpus_names = ["hta__simple_add_a100_kineto.json.gz", "perfetto__flow_events_json_v2.json",
                        "catapult__simple_trace.json"]
        if not os.path.isfile(os.path.join(a.corpus, "SOURCES.md")):
            print(f"corpus screenshots skipped: no corpus at {a.corpus}")
            corpus_names = []
        for name in corpus_names:
            path = os.path.join(a.corpus, name)
            rc, err, png_c, st_c = shot(a.viewer, env, path, d, "corpus_" + name.split(".")[0], size=(1000, 1800))
            _, hh, px_c = read_png(png_c)
            bars = [r for r in column_runs(px_c, 500, 40, hh, keep=lambda col: col == PROCESS_HEADER) if r[1] >= 15]
            c.check(rc == 0 and len(bars) == st_c.get("processes"),
                    f"{name}: {st_c.get('processes')} processes, {len(bars)} header bars")
            slices = sum(1 for row in px_c[40::4] for p in row[:600:4] if saturated(p))
            c.check(slices > 0, f"{name}: slices are drawn ({slices} sampled pixels)")

        # --- --bench: the scripted sequence runs and reports (timings are not judged) ---
        rc, out, err = run([a.viewer, tracks, "--bench", "--bench-frames", "3", "--size", "800x600"],
                           env=env, timeout=300)
        levels = [l.split() for l in out.splitlines() if l.split()[:1] in (["zoom"], ["pan"], ["fit"])]
        summary = re.search(r"^frames: (\d+), median ([0-9.]+) ms, p99 ([0-9.]+) ms, max ([0-9.]+) ms", out, re.M)
        c.check(rc == 0 and summary is not None and "resident memory (VmRSS)" in out,
                f"--bench reports frame times and memory (exit {rc}; {err.strip()[:200]})")
        if summary:
            frames, median, p99, mx = int(summary[1]), float(summary[2]), float(summary[3]), float(summary[4])
            c.check(0 < median <= p99 <= mx, f"--bench: median {median} <= p99 {p99} <= max {mx}")
            # Rows: "zoom in  7.08 s  3 ...", "fit all  14.2 s  20 ...", "pan  845 ns  4 ...".
            def frames_of(l):
                return int(l[4] if l[0] in ("zoom", "fit") else l[3])
            zoom_rows = [l for l in levels if l[0] == "zoom"]
            c.check(len(zoom_rows) > 0 and all(frames_of(l) == 3 for l in zoom_rows),
                    f"--bench-frames 3: 3 frames at each of {len(zoom_rows)} zoom levels")
            c.check(frames == sum(frames_of(l) for l in levels),
                    f"--bench: {frames} frames = the sum over its levels")
    c.finish()


if __name__ == "__main__":
    main()
