#!/usr/bin/env python3
"""What a first look at a trace asks of flopline-view, checked on --screenshot pictures
and --dump-state dumps: a merged block says "x758" (its text is four glyphs wide, not
three), --select zooms to the slice, Kineto's bookkeeping processes (pid Traces, pid -1,
pid Spans) start folded, the reader's warnings reach stderr without a window, the
roofline has a legend beside its plot, the table's operators of a torch.profiler
trace carry their GPU self time (the CSV export), and every kernel of a trace recorded
with --counters is a roofline point."""
import argparse
import csv
import gzip
import json
import os

from test_screenshots import H, W, shot
from viewer_harness import Checks, Xvfb, meta, read_png, tmpdir, write_trace, x_event

SIDEBAR = 380                   # viewer_app.cc kSidebarWidth
MERGED_TEXT = (235, 235, 235)   # ui_colors.h kMergedText
AXIS = (150, 155, 165)          # roofline_window.cc kAxis
LABEL = (200, 204, 212)         # roofline_window.cc kLabel
GLYPH_PX = 7                    # ImGui's default font (ProggyClean 13 px) advances 7 px


def write_merged(path):
    """758 slices of 100 ns every 110 ns on one thread (83 us), and a 1 ms slice on
    another: fitted to the window, the 758 merge into one block about 60 px wide."""
    ev = [meta("process_name", 1, 0, "app"), meta("thread_name", 1, 1, "tiny"),
          meta("thread_name", 1, 2, "long")]
    for i in range(758):
        ev.append(x_event("tiny", "cpu_op", 1, 1, 100 + i * 0.110, 0.100))
    ev.append(x_event("long", "cpu_op", 1, 2, 0, 1000))
    write_trace(path, ev)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--viewer", required=True)
    ap.add_argument("--traces", required=True, help="samples/traces")
    ap.add_argument("--data", required=True, help="tests/data")
    ap.add_argument("--tmp", required=True)
    a = ap.parse_args()
    c = Checks()
    d = tmpdir(a.tmp, "first_look")
    merged = os.path.join(d, "merged.json")
    write_merged(merged)
    kineto = os.path.join(a.traces, "kineto_h200_matmul_softmax.json.gz")

    with Xvfb() as x:
        env = x.env()
        # --- a merged block's label is "x758" ------------------------------------------
        rc, err, png, st = shot(a.viewer, env, merged, d, "merged")
        c.check(rc == 0, f"screenshot of 758 tiny slices exits 0 ({err.strip()})")
        _, _, px = read_png(png)
        cols = sorted({xx for yy in range(40, H) for xx in range(W - SIDEBAR) if px[yy][xx] == MERGED_TEXT})
        span = cols[-1] - cols[0] + 1 if cols else 0
        # "x758": four glyphs (ink about 4 * 7 - 2 px); "758" alone would be about 19 px.
        c.check(4 * GLYPH_PX - 4 <= span <= 4 * GLYPH_PX + 2,
                f"the merged block's label is four glyphs wide, x758 ({span} px of label ink)")

        # --- --select zooms to the selection ---------------------------------------------
        rc, err, _, st = shot(a.viewer, env, merged, d, "select_long", "--select", "long")
        vp = st.get("viewport", {})
        sel = st.get("selection") or {}
        c.check(rc == 0 and sel.get("name") == "long", f"--select long selects it ({err.strip()})")
        t0, t1 = vp.get("t0_ns", 0), vp.get("t1_ns", 0)
        start, dur = sel.get("start_ns", -1), sel.get("dur_ns", -1)
        c.check(t0 <= start and start + dur <= t1 and (t1 - t0) <= 1.5 * dur,
                f"the view fits the selected slice ({t0}..{t1} around {start}+{dur})")
        rc, err, _, st = shot(a.viewer, env, merged, d, "select_tiny", "--select", "tiny")
        vp = st.get("viewport", {})
        sel = st.get("selection") or {}
        c.check(rc == 0 and 0 < vp.get("t1_ns", 0) - vp.get("t0_ns", 0) <= 1.5 * max(1, sel.get("dur_ns", 0)) + 1000,
                f"--select tiny zooms in to its 100 ns ({vp})")

        # --- Kineto's bookkeeping folded; warnings on stderr --------------------------------
        rc, err, png, st = shot(a.viewer, env, kineto, d, "kineto")
        collapsed = st.get("collapsed", [])
        for pid in ("pid Traces", "pid -1", "pid Spans"):
            c.check(any(pid in name and "/" not in name for name in collapsed),
                    f"the process with {pid} starts folded ({collapsed})")
        c.check(not any("python3" in name and "/" not in name for name in collapsed),
                f"the python process is open ({collapsed})")
        c.check(rc == 0 and "warning:" in err and "skipped" in err,
                f"the reader's skipped events reach stderr ({err.strip()[:300]})")

        # --- the roofline has a legend beside the plot ------------------------------------
        rc, err, png, _ = shot(a.viewer, env, kineto, d, "kineto_roofline", "--window", "roofline")
        _, _, px = read_png(png)
        mid = H // 2
        axis_cols = [xx for xx in range(W) if px[mid][xx] == AXIS]
        right = max(axis_cols) if axis_cols else W
        legend_ink = sum(1 for yy in range(H) for xx in range(right + 4, W) if px[yy][xx] == LABEL)
        c.check(rc == 0 and axis_cols and legend_ink > 100,
                f"legend text right of the plot (plot ends at x={right}; {legend_ink} label pixels)")

        # --- torch.profiler operators in the table: GPU self time and FLOPs ------------------
        csv_path = os.path.join(d, "bf16.csv")
        trace = os.path.join(a.data, "torch_profiler_bf16_shapes.json.gz")
        rc, err, _, _ = shot(a.viewer, env, trace, d, "bf16_table", "--window", "table", "--csv", csv_path)
        rows = {}
        if os.path.exists(csv_path):
            with open(csv_path) as f:
                rows = {r["name"]: r for r in csv.DictReader(f)}
        mm = rows.get("aten::mm", {})
        c.check(rc == 0 and mm.get("self_ns") not in (None, "") and int(mm["self_ns"]) > 0,
                f"the table's aten::mm has a GPU self time ({mm.get('self_ns')})")
        c.check(mm.get("precision") == "bf16" and mm.get("flops_source") == "shapes" and mm.get("tflops"),
                f"aten::mm: bf16, FLOPs from shapes, a TFLOP/s ({mm.get('precision')}, {mm.get('tflops')})")

        # --- counted FLOPs: every kernel with FLOPs and bytes is a roofline point ------------
        # A training loop recorded with --counters: its kernels carry counted FLOPs and DRAM
        # bytes. With --by name the roofline plots kernels; its points are the table rows
        # with both (the CSV of the same table).
        counted = os.path.join(a.traces, "train_loop_h200_counters.json.gz")
        csv_path = os.path.join(d, "counted.csv")
        rc, err, png, st = shot(a.viewer, env, counted, d, "counted_roofline", "--window", "roofline",
                                "--by", "name", "--csv", csv_path)
        rows = []
        if os.path.exists(csv_path):
            with open(csv_path) as f:
                rows = list(csv.DictReader(f))
        placed = [r for r in rows if float(r["flops"] or 0) > 0 and float(r["bytes"] or 0) > 0]
        # What the trace itself holds: its kernel names, and those whose kernels sum to
        # both FLOPs and DRAM bytes.
        with gzip.open(counted, "rt") as f:
            events = json.load(f)["traceEvents"]
        sums = {}
        for e in events:
            if e.get("cat") == "kernel" and e.get("ph") == "X":
                flops, nbytes = sums.get(e["name"], (0.0, 0.0))
                a = e.get("args", {})
                sums[e["name"]] = (flops + a.get("flops", 0), nbytes + a.get("dram bytes", 0))
        want = sum(1 for flops, nbytes in sums.values() if flops > 0 and nbytes > 0)
        c.check(rc == 0 and len(rows) == len(sums),
                f"--by name: a row per kernel name, {len(sums)} ({len(rows)}; {err.strip()[:200]})")
        c.check(want > 30 and len(placed) == want and st.get("roofline_points") == want,
                f"the roofline plots the {want} kernels with FLOPs and bytes (rows {len(placed)}, "
                f"points {st.get('roofline_points')})")
        c.check(all(r["flops_source"] for r in rows), "every kernel row says where its FLOPs came from")
        _, _, px = read_png(png)
        axis_cols = [xx for xx in range(W) if px[H // 2][xx] == AXIS]
        c.check(len(axis_cols) >= 2, "the roofline is drawn")
    c.finish()


if __name__ == "__main__":
    main()
