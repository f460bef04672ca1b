"""flopline's counted FLOPs and DRAM bytes against Nsight Compute's, kernel by kernel, on a
PyTorch training step (bench/train_loop.py).

    python3 counters_vs_ncu.py --flopline BUILD/profiler/flopline --out DIR [--ncu ncu]
        [--cache-control none]
    python3 counters_vs_ncu.py --from DIR      (compare the files an earlier run left in DIR)

1. `flopline run --counters=2` records two steps of train_loop.py: the first two launches
   of every kernel signature are measured (the second shows what a kernel varies by itself).
2. Five kernels are chosen from that trace: the one with the most tensor FLOPs, a
   Triton kernel, an elementwise kernel, a reduction and the optimizer's.
3. `ncu --metrics <flopline's metrics>` profiles the same program, those kernels only.
4. Kernels are matched by short name (no namespace, template or parameter list: the two
   tools demangle differently), grid and block; the first launch of each on both sides
   is compared: FLOPs (tensor ops + SIMT adds and muls + 2 x FMAs, as flopline counts
   them, docs/COUNTERS.md) and DRAM bytes read and written. A line counts how many of
   all matched kernels agree within 1%; the table shows the five chosen ones.
`dram bytes written` is the kernel's stores (L2 write sectors from the SMs, x 32), the
same whatever the cache holds, so it is judged like FLOPs; ncu's count of every L2 store
(`lts__t_sectors_op_write`) is shown beside it, to see that no store is left out.
DRAM bytes read are shown, not judged: they depend on what L2 holds when the kernel
starts. Nsight Compute flushes the caches before each measured pass (--cache-control
all), so every input comes from DRAM; under flopline's kernel replay some kernels find
inputs that earlier kernels left in L2 (docs/COUNTERS.md).
`--cache-control none` has Nsight Compute leave the caches as the program left them.
A few kernels store a different number of sectors from one run to the next (on an H200:
a reduction, flash attention's backward helpers, LayerNorm's gamma/beta backward, all
storing under 2.1 MB); every kernel whose bytes written differ by more than 1% is listed
with the spread between its own two measured launches.
Exit 1 when any matched kernel's FLOPs, or a chosen kernel's bytes written, differ by
more than 1% (bytes written: or more than its own spread), 2 when a step fails.
"""
import argparse
import csv
import io
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
import check_support  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
LOOP = [sys.executable, os.path.join(HERE, "train_loop.py"), "--steps", "1", "--warmup", "1",
        "--layers", "2", "--batch", "4"]


def short_name(name):
    """The function's own name: template arguments, parameters, return type and
    namespaces dropped ("void at::native::f<4, T>(int)" -> "f")."""
    out, depth = [], 0
    for ch in name:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth = max(depth - 1, 0)
        elif depth == 0:
            out.append(ch)
    words = "".join(out).split()
    return words[-1].split("::")[-1] if words else name


def dims(value):
    """[x, y, z] from flopline's args or "(x, y, z)" from Nsight Compute's CSV."""
    if isinstance(value, list):
        return tuple(int(v) for v in value)
    return tuple(int(v) for v in re.findall(r"\d+", value or ""))


def flops_from(metrics, values):
    """FLOPs as flopline counts them, from raw metric values (name -> value)."""
    total = 0.0
    for m in metrics:
        v = values.get(m)
        if v is None:
            continue
        if "sparsity_on" in m or "int8" in m or "int4" in m:
            continue
        if not m.startswith("sm__"):  # DRAM bytes, gpu__time_duration: not FLOPs
            continue
        total += 2 * v if m.endswith("fma_pred_on.sum") else v
    return total


def number(text):
    text = text.replace(",", "").strip()
    try:
        return float(text)
    except ValueError:
        return None


def ncu_rows(log_path, metrics):
    """(short name, grid, block) -> metric values of the first launch, from the CSV that
    `ncu --csv --log-file` writes after its own messages."""
    with open(log_path, errors="replace") as f:
        text = f.read()
    at = text.find('"ID"')
    if at < 0:
        return None
    rows = list(csv.reader(io.StringIO(text[at:])))
    header = rows[0]
    name_col, grid_col, block_col = (header.index(h) for h in ("Kernel Name", "Grid Size", "Block Size"))
    first = {}
    for r in rows[2:]:  # rows[1] holds the units
        if len(r) != len(header):
            continue
        key = (short_name(r[name_col]), dims(r[grid_col]), dims(r[block_col]))
        first.setdefault(key, {h: number(v) for h, v in zip(header, r) if h in metrics})
    return first


def measured_kernels(trace):
    """(short name, grid, block) -> (name, args) of the first measured launch."""
    kernels = sorted((e for e in trace["traceEvents"] if e.get("cat") == "kernel" and e.get("ph") == "X"),
                     key=lambda e: e["ts"])
    first = {}
    for k in kernels:
        a = k.get("args", {})
        if a.get("flops source") != "counters":
            continue
        first.setdefault((short_name(k["name"]), dims(a.get("grid")), dims(a.get("block"))), (k["name"], a))
    return first


def own_spread(trace, first, what):
    """key -> how much `what` differs between the measured launches of the first one's
    exact kernel (full name, grid, block), relative to the largest: what the kernel itself
    varies from launch to launch, with nothing else changed."""
    values = {}
    for e in trace["traceEvents"]:
        a = e.get("args", {})
        if e.get("cat") == "kernel" and a.get("flops source") == "counters" and what in a:
            values.setdefault((e["name"], dims(a.get("grid")), dims(a.get("block"))), []).append(a[what])
    spread = {}
    for key, (name, a) in first.items():
        v = values.get((name, dims(a.get("grid")), dims(a.get("block"))), [])
        spread[key] = (max(v) - min(v)) / max(v) if len(v) > 1 and max(v) > 0 else 0.0
    return spread


def choose(first):
    """Five kernels of different kinds: label -> key."""
    chosen = {}

    def pick(pred, label):
        # The largest of each kind: the one whose DRAM traffic means most.
        for key, (name, a) in sorted(first.items(), key=lambda kv: -kv[1][1].get("dram bytes read", 0)):
            if label not in chosen and key not in chosen.values() and pred(name, a):
                chosen[label] = key
                return

    by_tensor = sorted(first.items(), key=lambda kv: -sum(kv[1][1].get("tensor flops by path", {}).values()))
    if by_tensor:
        chosen["matmul"] = by_tensor[0][0]
    pick(lambda n, a: n.startswith("triton") and sum(a.get("flops by precision", {}).values()) > 0, "triton")
    pick(lambda n, a: n.startswith("triton") or "ema_kernel" in n, "triton")
    pick(lambda n, a: "elementwise" in n, "elementwise")
    pick(lambda n, a: "reduce" in n or "softmax" in n or "norm" in n, "reduction")
    pick(lambda n, a: "multi_tensor" in n or "adam" in n.lower(), "optimizer")
    return chosen


# Every L2 store, whatever unit issued it: a check that the write metric flopline chose
# (the stores from the SMs) leaves none of a kernel's stores (TMA's too) out.
ALL_STORES = "lts__t_sectors_op_write.sum"


def write_metric(metrics):
    """The metric flopline's `dram bytes written` comes from, and bytes per unit."""
    for m in metrics:
        if m.startswith("lts__t_sectors") and m.endswith("op_write.sum"):
            return m, 32.0
    return "dram__bytes_write.sum", 1.0


def compare(a, n, metrics):
    """(what, flopline's, Nsight Compute's, relative difference) for one kernel."""
    written, per = write_metric(metrics)
    pairs = [("flops", a.get("flops", 0.0), flops_from(metrics, n)),
             ("dram bytes read", a.get("dram bytes read", 0.0), n.get("dram__bytes_read.sum") or 0.0),
             ("dram bytes written", a.get("dram bytes written", 0.0), per * (n.get(written) or 0.0))]
    return [(what, mine, theirs, 0.0 if max(mine, theirs) == 0 else abs(mine - theirs) / max(mine, theirs))
            for what, mine, theirs in pairs]


def run_both(args, env):
    """Records the counted trace and Nsight Compute's log into args.out; None on success."""
    trace_path = os.path.join(args.out, "counted.json")
    p = subprocess.run([args.flopline, "run", "--no-summary", "--counters=2", "-o", trace_path, "--"] + LOOP,
                       env=env, capture_output=True, text=True)
    if p.returncode != 0 or not os.path.exists(trace_path):
        return f"flopline run failed ({p.returncode}):\n{p.stdout}{p.stderr[-3000:]}"
    metrics = check_support.read_trace(trace_path).get("flopline", {}).get("counter metrics", "")
    if not metrics:
        return "no counter metrics in the trace"
    # Every kernel of the (small) program: no name filter to get wrong.
    if ALL_STORES not in metrics.split(","):
        metrics += "," + ALL_STORES
    cmd = [args.ncu, "--metrics", metrics, "--kernel-name-base", "demangled", "--csv", "--page", "raw",
           "--print-units", "base", "--clock-control", "none", "--cache-control", args.cache_control,
           "--log-file", os.path.join(args.out, "ncu.log")] + LOOP
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        return f"ncu failed ({p.returncode}):\n{p.stderr[-3000:]}"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flopline")
    ap.add_argument("--ncu", default="ncu")
    ap.add_argument("--cache-control", default="all", choices=["all", "none"],
                    help="Nsight Compute's cache control: all flushes before each pass (its "
                         "default), none leaves the caches as the program left them")
    ap.add_argument("--out")
    ap.add_argument("--from", dest="from_dir", help="compare counted.json and ncu.log already in this folder")
    args = ap.parse_args()
    if args.from_dir:
        args.out = args.from_dir
    else:
        if not args.flopline or not args.out:
            ap.error("--flopline and --out are needed unless --from is given")
        os.makedirs(args.out, exist_ok=True)
        env = dict(os.environ, PYTHONUNBUFFERED="1", TORCHINDUCTOR_COMPILE_THREADS="1")
        failed = run_both(args, env)
        if failed:
            print(failed)
            return 2
    for f in ("counted.json", "ncu.log"):
        if not os.path.exists(os.path.join(args.out, f)):
            print(f"counters_vs_ncu: {os.path.join(args.out, f)}: missing")
            return 2
    trace = check_support.read_trace(os.path.join(args.out, "counted.json"))
    metrics = trace.get("flopline", {}).get("counter metrics", "").split(",")
    first = measured_kernels(trace)
    ncu = ncu_rows(os.path.join(args.out, "ncu.log"), metrics + [ALL_STORES])
    if not ncu:
        print("ncu printed no kernel rows; see", os.path.join(args.out, "ncu.log"))
        return 2

    # Bytes written are judged within 1% or within what the kernel itself varies between
    # its own two measured launches (kernels whose blocks race to a shared result).
    spread = own_spread(trace, first, "dram bytes written")

    def agrees(key, what, diff):
        return diff <= 0.01 or (what == "dram bytes written" and diff <= spread[key] + 0.01)

    matched = [k for k in first if k in ncu]
    diffs = {k: {what: diff for what, _, _, diff in compare(first[k][1], ncu[k], metrics)} for k in matched}
    print(f"matched kernels (short name, grid, block): {len(matched)} of {len(first)} measured")
    for what in ("flops", "dram bytes read", "dram bytes written"):
        print(f"  {what} within 1%: {sum(d[what] <= 0.01 for d in diffs.values())} of {len(matched)}")
    off = [k for k in matched if diffs[k]["dram bytes written"] > 0.01]
    varying = [k for k in off if agrees(k, "dram bytes written", diffs[k]["dram bytes written"])]
    others = [k for k in off if k not in varying]
    print(f"  dram bytes written differing by no more than the kernel's own launch-to-launch "
          f"spread: {len(varying)} more")
    for key in varying:
        print(f"    {key[0]} grid={key[1]} block={key[2]}: its two launches differ by {100 * spread[key]:.2f}%")
    print(f"  dram bytes written differing by more: {len(others)}")
    for key in others:
        print(f"    {key[0]} grid={key[1]} block={key[2]}: differs by "
              f"{100 * diffs[key]['dram bytes written']:.2f}%, its two launches by {100 * spread[key]:.2f}%")
    flops_bad = sum(d["flops"] > 0.01 for d in diffs.values())

    chosen = choose({k: v for k, v in first.items() if k in ncu})
    bad = 0
    print()
    print(f"{'kernel':12s} {'what':18s} {'flopline':>18s} {'ncu':>18s} {'diff':>8s}")
    for label, key in chosen.items():
        for what, mine, theirs, diff in compare(first[key][1], ncu[key], metrics):
            judged = what != "dram bytes read"
            ok = agrees(key, what, diff) or not judged
            bad += not ok
            if diff <= 0.01:
                note = ""
            elif not judged:
                note = "(cache state: docs/COUNTERS.md)"
            elif ok:
                note = f"(its own launches differ by {100 * spread[key]:.2f}%)"
            else:
                note = "DIFFERS"
            print(f"{label:12s} {what:18s} {mine:18.0f} {theirs:18.0f} {100 * diff:7.3f}% {note}")
        every = ncu[key].get(ALL_STORES)
        if every is not None:
            print(f"{label:12s} {'(every L2 store)':18s} {'':18s} {32 * every:18.0f}")
    print("kernels: " + "; ".join(f"{k}={v[0]} grid={v[1]} block={v[2]}" for k, v in chosen.items()))
    return 1 if bad or flops_bad else 0


if __name__ == "__main__":
    sys.exit(main())
