#!/usr/bin/env python3
"""Default `--counters` against `--counters=all`, launch by launch (docs/COUNTERS.md).

Runs a program (tests/gpu/counters/work_keys_loop.py by default) under `flopline run
--counters` and `--counters=all`, matches the kernels of the two traces in launch order
(correlation id; where the runs launched different kernels, by the longest common runs
of names), and prints the share of kernel time whose FLOPs and bytes stored agree
within 1%, by the basis the default run gave (measured, same work, estimated), the
launches that disagree while marked exact, the wall times of an uncounted, a default
and an every-launch run. With --min-pct, exits 1 when the agreeing share is lower.

--ddp runs tests/gpu/counters/ddp_loop.py on two GPUs through torchrun under
`--counters` with a time limit, and checks that it finishes, that every compute kernel
carries counted values and every NCCL kernel is marked "not counted: communication",
and that no GPU record came late or was lost (the trace metadata's notes).

Exit status 77 (ctest's skip) without a CUDA device (or two, for --ddp).
"""
import argparse
import difflib
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import check_support  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def load(path):
    return check_support.trace_events(check_support.read_trace(path))


def kernels(path):
    out = [e for e in load(path) if e.get("ph") == "X" and e.get("cat") == "kernel"]
    out.sort(key=lambda e: (e.get("args", {}).get("correlation", 0), float(e.get("ts", 0))))
    return out


def flopline_notes(path):
    doc = check_support.read_trace(path)
    meta = doc.get("flopline", {}) if isinstance(doc, dict) else {}
    return {k: v for k, v in meta.items() if isinstance(v, (str, int, float))}


def flow_ends(path):
    """Where launch flows end: (pid, tid, ts) of each "f" event, a kernel's start."""
    return {(e.get("pid"), e.get("tid"), e.get("ts")) for e in load(path) if e.get("ph") == "f"}


def run(flopline, mode, out, command, timeout, log):
    t0 = time.monotonic()
    with open(log, "w") as f:
        # Killed whole past its time: a hung rank left behind would hold the GPU's
        # performance monitors (scripts/check_support.py).
        rc = check_support.run_whole([flopline, "run", "--counters=" + mode, "-o", out, "--"] + command,
                                    f, timeout)
    return rc, time.monotonic() - t0


def close(a, b, rel=0.01, slack=0.0):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= max(rel * max(abs(a), abs(b)), slack)


def pair_launches(names_d, names_a):
    """The launches of two runs that correspond, as index pairs in launch order: the runs'
    longest common runs of kernel names (difflib), so that a kernel one run launched and
    the other did not (a cuBLAS heuristic's choice, a warm-up kernel) costs only itself,
    not every launch after it. Unpaired launches on either side are left out."""
    matcher = difflib.SequenceMatcher(None, names_d, names_a, autojunk=False)
    return [(blk.a + k, blk.b + k) for blk in matcher.get_matching_blocks() for k in range(blk.size)]


def compare(default_path, all_path, top):
    d, a = kernels(default_path), kernels(all_path)
    names_d = [k["name"] for k in d]
    names_a = [k["name"] for k in a]
    if names_d != names_a:
        pairs = pair_launches(names_d, names_a)
        print(f"the two runs launched different kernels: {len(d)} and {len(a)} launches; "
              f"comparing the {len(pairs)} that pair up by name in launch order "
              f"({len(d) - len(pairs)} and {len(a) - len(pairs)} left out)")
        d, a = [d[i] for i, _ in pairs], [a[j] for _, j in pairs]
    # Some kernels store a different number of sectors at every launch (atomics, cuDNN's
    # dq conversion): their own spread in the every-launch run, per name, grid, block
    # and FLOPs, is what "agree" allows beside 1%.
    stored = {}
    for k in a:
        ar = k.get("args", {})
        if ar.get("dram bytes written") is not None:
            stored.setdefault((k["name"], str(ar.get("grid")), str(ar.get("block")), ar.get("flops")),
                              []).append(ar["dram bytes written"])
    spread = {key: (max(v) - min(v)) for key, v in stored.items()}
    by_basis = {}
    wrong_exact = []
    total = agree_ns = strict_ns = flops_ns = 0.0
    for kd, ka in zip(d, a):
        ad, aa = kd.get("args", {}), ka.get("args", {})
        dur = float(kd.get("dur", 0))
        src = ad.get("flops source", "none")
        basis = {"counters": "measured", "counters (same work)": "same work",
                 "counters (estimated)": "estimated"}.get(src, "not counted" if src.startswith("not counted") else "none")
        if src.startswith("not counted"):
            continue  # never measured in either run
        total += dur
        flops_ok = close(ad.get("flops"), aa.get("flops"), 0.01, 0.5)
        own = spread.get((ka["name"], str(aa.get("grid")), str(aa.get("block")), aa.get("flops")), 0)
        strict = flops_ok and close(ad.get("dram bytes written"), aa.get("dram bytes written"), 0.01, 4096)
        ok = flops_ok and close(ad.get("dram bytes written"), aa.get("dram bytes written"), 0.01, 4096 + own)
        flops_ns += dur if flops_ok else 0
        strict_ns += dur if strict else 0
        row = by_basis.setdefault(basis, [0, 0.0, 0, 0.0])
        row[0] += 1
        row[1] += dur
        if ok:
            agree_ns += dur
            row[2] += 1
            row[3] += dur
        elif basis in ("measured", "same work"):
            wrong_exact.append((dur, kd["name"], ad.get("flops"), aa.get("flops"),
                                ad.get("dram bytes written"), aa.get("dram bytes written"), basis))
    print(f"{'basis (default run)':<22}{'launches':>10}{'time ms':>10}{'agree':>8}{'agree ms':>10}")
    for basis, (n, ns, ok, ok_ns) in sorted(by_basis.items()):
        print(f"{basis:<22}{n:>10}{ns / 1e3:>10.3f}{ok:>8}{ok_ns / 1e3:>10.3f}")
    share = lambda ns: 100.0 * ns / total if total else 0.0
    pct = share(agree_ns)
    print(f"kernel time of {total / 1e3:.3f} ms whose FLOPs agree within 1%: {share(flops_ns):.2f}%")
    print(f"  FLOPs and bytes stored within 1%: {share(strict_ns):.2f}%")
    print(f"  FLOPs within 1%, bytes stored within 1% or the kernel's own launch-to-launch spread: {pct:.2f}%")
    wrong_exact.sort(reverse=True)
    print(f"launches marked measured or same work that disagree: {len(wrong_exact)}")
    for w in wrong_exact[:top]:
        print(f"  {w[0]:9.1f} us {w[6]:<10} flops {w[2]} vs {w[3]}, stored {w[4]} vs {w[5]}: {w[1][:90]}")
    # The replayed duration against the median unreplayed time of the same name and grid:
    # how far a measured launch's time is from its work's (for the check after the fact).
    groups = {}
    for k in d:
        ar = k.get("args", {})
        key = (k["name"], str(ar.get("grid")), str(ar.get("block")))
        groups.setdefault(key, [[], []])[1 if ar.get("counters replayed") else 0].append(float(k.get("dur", 0)))
    ratios = sorted(statistics.median(r) / statistics.median(u)
                    for u, r in groups.values() if u and r and statistics.median(u) > 0)
    if ratios:
        q = lambda p: ratios[min(len(ratios) - 1, int(p * len(ratios)))]
        print(f"replayed time / unreplayed median, {len(ratios)} kernels: p10 {q(0.1):.2f}, "
              f"median {q(0.5):.2f}, p90 {q(0.9):.2f}, max {ratios[-1]:.2f}")
    return pct, len(wrong_exact)


def ddp(args):
    if check_support.visible_gpus() < 2:
        print("skipped: fewer than two CUDA devices")
        return 77
    os.makedirs(args.out, exist_ok=True)
    out = os.path.join(args.out, "ddp.json")
    cmd = ["torchrun", "--standalone", "--nproc_per_node=2",
           os.path.join(ROOT, "tests/gpu/counters/ddp_loop.py")]
    env_keep = dict(os.environ, NCCL_NVLS_ENABLE="0", TORCH_SYMM_MEM_DISABLE_MULTICAST="1",
                    NVSHMEM_DISABLE_NVLS="1")
    os.environ.update(env_keep)
    os.environ.setdefault("FLOPLINE_COUNTERS_DEBUG", "1")
    rc, wall = run(args.flopline, "on", out, cmd, args.timeout, os.path.join(args.out, "ddp.log"))
    print(f"ddp --counters: exit {rc}, {wall:.1f} s")
    if rc != 0:
        print(open(os.path.join(args.out, "ddp.log")).read()[-3000:])
        return 1
    files = sorted(os.path.join(args.out, f) for f in os.listdir(args.out)
                   if f.startswith("ddp") and f.endswith(".json"))
    status = 0
    for f in files:
        ks = kernels(f)
        nccl = [k for k in ks if "nccl" in k["name"].lower()]
        compute = [k for k in ks if "nccl" not in k["name"].lower()]
        nccl_marked = sum(1 for k in nccl
                          if k.get("args", {}).get("flops source") == "not counted: communication")
        counted = sum(1 for k in compute
                      if str(k.get("args", {}).get("flops source", "")).startswith("counters"))
        print(f"{os.path.basename(f)}: {len(compute)} compute kernels, {counted} counted; "
              f"{len(nccl)} NCCL kernels, {nccl_marked} marked communication")
        if not nccl or nccl_marked != len(nccl) or counted != len(compute):
            status = 1
        # What the decoder says about records CUPTI handed over late: a measured kernel
        # lost to lateness shows as "counters without their kernel".
        notes = flopline_notes(f)
        late_keys = ("GPU records after their call was written", "counters without their kernel",
                     "GPU records unfinished at a forced flush")
        for key in late_keys:
            if key in notes:
                print(f"  {key}: {notes[key]}")
        # Each rank is one context: the forced flush after each measurement hands every
        # record over in time, so none comes late, none is lost and none is cut short.
        if any(key in notes for key in late_keys):
            status = 1
        flows = flow_ends(f)
        unlinked = sum(1 for k in ks if (k.get("pid"), k.get("tid"), k.get("ts")) not in flows)
        print(f"  GPU records without a launch flow: {unlinked} of {len(ks)} kernels")
        # What the uncounted compute kernels are, and why, at most a few.
        for k in [k for k in compute if not str(k.get("args", {}).get("flops source", "")).startswith("counters")][:6]:
            print(f"  not counted: {k['name'][:70]} ({k.get('args', {}).get('flops source', 'no source')}, "
                  f"{k.get('dur', 0):.1f} us)")
    if len(files) < 2:
        print(f"expected a trace per rank, found {files}")
        status = 1
    return status


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--flopline", required=True)
    p.add_argument("--out", default="counters-default-vs-all")
    p.add_argument("--min-pct", type=float, help="fail below this share of kernel time")
    p.add_argument("--timeout", type=float, default=400)
    p.add_argument("--top", type=int, default=10)
    p.add_argument("--ddp", action="store_true")
    p.add_argument("--traces", nargs=2, metavar=("DEFAULT", "ALL"), help="compare these, run nothing")
    p.add_argument("command", nargs="*", help="the program (default: work_keys_loop.py)")
    args = p.parse_args()
    if args.ddp:
        return ddp(args)
    if args.traces:
        pct, wrong = compare(*args.traces, args.top)
    else:
        if check_support.visible_gpus() < 1:
            print("skipped: no CUDA device")
            return 77
        os.makedirs(args.out, exist_ok=True)
        cmd = args.command or ["python3", os.path.join(ROOT, "tests/gpu/counters/work_keys_loop.py")]
        walls = {}
        for mode in ("off", "on", "all"):
            out = os.path.join(args.out, f"{mode}.json")
            rc, walls[mode] = run(args.flopline, mode, out, cmd, args.timeout,
                                  os.path.join(args.out, f"{mode}.log"))
            if rc != 0:
                print(f"--counters={mode}: exit {rc}")
                print(open(os.path.join(args.out, f"{mode}.log")).read()[-3000:])
                return 1
        pct, wrong = compare(os.path.join(args.out, "on.json"), os.path.join(args.out, "all.json"),
                             args.top)
        print(f"wall s: uncounted {walls['off']:.1f}, default {walls['on']:.1f} "
              f"({walls['on'] / walls['off']:.2f}x), all {walls['all']:.1f} "
              f"({walls['all'] / walls['off']:.2f}x)")
    if args.min_pct is not None and pct < args.min_pct:
        print(f"FAIL: {pct:.2f}% agree (at least {args.min_pct}% needed)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
