#!/usr/bin/env python3
"""Every trace of the corpus opens in flopline-view without error: the headless
screenshot exits 0, the PNG is not blank, and where the trace has slices some are
drawn."""
import argparse
import glob
import json
import os
import sys
import time

from viewer_harness import Checks, Xvfb, read_png, run, saturated, tmpdir

W, H = 800, 1000
SIDEBAR = int(min(380, W * 0.35))  # viewer_app.cc: the sidebar takes min(380 px, 35%)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--viewer", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--tmp", required=True)
    ap.add_argument("--min-files", type=int, default=20, help="fewer traces than this is a failure")
    a = ap.parse_args()
    if not os.path.isdir(a.corpus) or (a.min_files >= 20 and
                                       not os.path.isfile(os.path.join(a.corpus, "SOURCES.md"))):
        # The other tools' corpus, absent from a clone without ../shared.
        print(f"skipped: no corpus at {a.corpus} (configure with -DFLOPLINE_CORPUS_DIR=DIR)")
        sys.exit(77)
    c = Checks()
    d = tmpdir(a.tmp, os.path.basename(os.path.normpath(a.corpus)))
    files = sorted(glob.glob(os.path.join(a.corpus, "*.json")) + glob.glob(os.path.join(a.corpus, "*.json.gz")))
    c.check(len(files) >= a.min_files, f"the corpus has its traces ({len(files)} files in {a.corpus})")
    with Xvfb() as x:
        env = x.env()
        for path in files:
            name = os.path.basename(path)
            png = os.path.join(d, name + ".png")
            dump = os.path.join(d, name + ".state.json")
            t = time.time()
            rc, out, err = run([a.viewer, path, "--screenshot", png, "--size", f"{W}x{H}", "--dump-state", dump],
                               env=env, timeout=300)
            secs = time.time() - t
            if not c.check(rc == 0 and os.path.exists(png), f"{name}: opens without error in {secs:.1f} s ({err.strip()[:300]})"):
                continue
            w, h, px = read_png(png)
            colours = {p for row in px[::4] for p in row[::4]}
            c.check(len(colours) > 8, f"{name}: the picture is not blank ({len(colours)} colours sampled)")
            state = json.load(open(dump))
            if state.get("slices", 0) > 0:
                drawn = sum(1 for row in px[50::2] for p in row[:W - SIDEBAR:2] if saturated(p))
                c.check(drawn > 0, f"{name}: {state['slices']} slices, {drawn} slice pixels sampled")
    c.finish()


if __name__ == "__main__":
    main()
