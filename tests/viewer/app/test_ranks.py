#!/usr/bin/env python3
"""The rank summary, headless: a run directory of two synthetic ranks (NCCL all-reduces
with late arrivals) opened with --window ranks. Its --dump-state numbers are checked
against what `flopline stats --report breakdown --json` and `flopline stats --json`
(collective waits) print for the same files, and the screenshot's bars against the
shares."""
import argparse
import json
import os

from viewer_harness import Checks, Xvfb, read_png, run, tmpdir, write_trace, x_event

W, H = 1200, 700
# rank_window.cc kPartColors: compute, communication, memory, idle
PART_COLORS = [(90, 180, 100), (235, 140, 50), (80, 140, 230), (95, 98, 108)]
PARTS = ["compute", "communication", "memory", "idle"]
NCCL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"


def allreduce(pid, start, end):
    return x_event(NCCL, "kernel", pid, 7, start, end - start,
                   {"collective": "AllReduce", "collective message bytes": 1 << 20,
                    "collective communicator": "0xabc", "collective ranks": 2})


def write_rank(path, rank, arrive):
    """GPU `rank` (pid = device), stream 7, in us: gemm [0,40), a copy [40,50), gemm
    [100,120), all-reduces arriving at `arrive` and ending at 100, 140, 170."""
    ev = [x_event("gemm", "kernel", rank, 7, 0, 40),
          x_event("Memcpy HtoD", "gpu_memcpy", rank, 7, 40, 10),
          x_event("gemm", "kernel", rank, 7, 100, 20)]
    for start, end in zip(arrive, (100, 140, 170)):
        ev.append(allreduce(rank, start, end))
    write_trace(path, ev, distributedInfo={"backend": "nccl", "rank": rank, "world_size": 2})


def json_of(cmd):
    rc, out, err = run(cmd)
    if rc != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {rc}: {err}")
    return json.loads(out)


def check_ranks(c, a, x, d):
    ranks = os.path.join(d, "run")
    os.makedirs(ranks)
    write_rank(os.path.join(ranks, "rank0.json"), 0, (60, 130, 150))
    write_rank(os.path.join(ranks, "rank1.json"), 1, (80, 125, 160))
    png = os.path.join(d, "ranks.png")
    dump = os.path.join(d, "ranks.state.json")
    rc, out, err = run([a.viewer, ranks, "--screenshot", png, "--size", f"{W}x{H}", "--window", "ranks",
                        "--dump-state", dump], env=x.env())
    c.check(rc == 0, f"--window ranks on a run directory exits 0 ({err.strip()})")
    st = json.load(open(dump))["ranks"]
    c.check(st is not None and st["shown"], "the rank summary is in the dump, its window open")
    breakdown = json_of([a.flopline, "stats", ranks, "--report", "breakdown", "--json"])["devices"]
    c.check(len(st["bars"]) == len(breakdown) == 2, f"a bar per rank ({len(st['bars'])} bars)")
    for bar, want in zip(st["bars"], breakdown):
        same = all(bar[k] == want[k] for k in
                   ("rank", "device", "window_ns", "compute_ns", "communication_ns", "memory_ns", "idle_ns"))
        c.check(same, f"{bar['label']}: the breakdown equals flopline stats --report breakdown's "
                      f"({[bar[k] for k in ('compute_ns', 'communication_ns', 'memory_ns', 'idle_ns')]})")
        shares = [bar["shares"][p] for p in PARTS]
        want_shares = [want[p + "_ns"] / want["window_ns"] for p in PARTS]
        c.check(all(abs(s - w) < 1e-12 for s, w in zip(shares, want_shares)),
                f"{bar['label']}: the bar's shares are the parts over the window")
    waits = json_of([a.flopline, "stats", ranks, "--json"])["collective_waits"]
    got = st["waits"]
    c.check(got is not None and got["collectives"] == waits["collectives"] == 3,
            "three collectives matched, as flopline stats matches them")
    for row, want in zip(got["ranks"], waits["ranks"]):
        c.check(all(row[k] == want[k] for k in ("rank", "matched", "kernel_ns", "wait_ns", "last_arrivals")),
                f"rank {row['rank']}: waits equal flopline stats' ({row['wait_ns']} ns)")
    waited = got["ranks"][got["waited_for_trace"]]["rank"] if got["waited_for_trace"] is not None else None
    c.check(waited == waits["waited_for_rank"] == 1, f"the others wait for rank 1 ({waited})")
    longest = st["longest"]
    c.check([r["longest_wait_ns"] for r in longest] == sorted((r["longest_wait_ns"] for r in longest), reverse=True)
            and longest[0]["longest_wait_ns"] == 20000,
            f"collectives by their longest wait ({[r['longest_wait_ns'] for r in longest]})")

    # The picture: on each bar's row the parts' pixel widths follow its shares.
    _, _, px = read_png(png)
    rows = []
    for yy in range(H):
        counts = [sum(1 for xx in range(W) if px[yy][xx] == col) for col in PART_COLORS]
        if counts[0] > 20:
            rows.append(counts)
    # The legend's swatches are squares of a text line's height: bars are far wider.
    bars = [r for r in rows if sum(r) > 100]
    c.check(len(bars) > 0, f"the bars are drawn ({len(bars)} pixel rows)")
    if bars:
        # Bars rows come in order: rank 0's first.
        first = bars[0]
        width = sum(first)
        share = [n / width for n in first]
        want_share = [st["bars"][0]["shares"][p] for p in PARTS]
        c.check(all(abs(s - w) < 3 / width + 0.01 for s, w in zip(share, want_share)),
                f"rank 0's bar: {[round(s, 3) for s in share]} of {width} px, shares "
                f"{[round(w, 3) for w in want_share]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--viewer", required=True)
    ap.add_argument("--flopline", required=True)
    ap.add_argument("--tmp", required=True)
    a = ap.parse_args()
    c = Checks()
    d = tmpdir(a.tmp, "ranks")
    with Xvfb() as x:
        check_ranks(c, a, x, d)
    c.finish()


if __name__ == "__main__":
    main()
