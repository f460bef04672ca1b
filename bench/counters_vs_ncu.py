"""flopline's counted FLOPs and DRAM bytes against Nsight Compute's, kernel by kernel, on a
PyTorch training step (bench/train_loop.py).

    python3 counters_vs_ncu.py --flopline BUILD/profiler/flopline --out DIR [--ncu ncu]

1. `flopline run --counters=1` records two steps of train_loop.py: the first launch of
   every kernel signature is measured.
2. Five kernels are chosen from that trace: the one with the most tensor FLOPs, a
   Triton kernel, an elementwise kernel, a reduction and the optimizer's.
3. `ncu --metrics <flopline's metrics>` profiles the same program, those kernels only.
4. The first launch of each chosen kernel is compared: FLOPs (tensor ops + SIMT adds and
   muls + 2 x FMAs, as flopline counts them, docs/COUNTERS.md) and DRAM bytes read and
   written, within 1%.
Prints a table last; exit 1 when a value differs by more than 1%, 2 when a step fails.
"""
import argparse
import csv
import gzip
import io
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
LOOP = [sys.executable, os.path.join(HERE, "train_loop.py"), "--steps", "1", "--warmup", "1",
        "--layers", "2", "--batch", "4"]


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def base_name(name):
    """A kernel's name as both tools print it demangled, blanks normalized."""
    return " ".join(name.split())


def flops_from(metrics, values):
    """FLOPs as flopline counts them, from raw metric values (name -> value)."""
    total = 0.0
    for m in metrics:
        v = values.get(m)
        if v is None:
            continue
        if "sparsity_on" in m or "int8" in m or "int4" in m:
            continue
        if m.startswith("dram__"):
            continue
        total += 2 * v if m.endswith("fma_pred_on.sum") else v
    return total


def number(text):
    text = text.replace(",", "").strip()
    try:
        return float(text)
    except ValueError:
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flopline", required=True)
    ap.add_argument("--ncu", default="ncu")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    env = dict(os.environ, PYTHONUNBUFFERED="1", TORCHINDUCTOR_COMPILE_THREADS="1")

    trace_path = os.path.join(args.out, "counted.json")
    p = subprocess.run([args.flopline, "run", "--no-summary", "--counters=1", "-o", trace_path, "--"] + LOOP,
                       env=env, capture_output=True, text=True)
    if p.returncode != 0 or not os.path.exists(trace_path):
        print(p.stdout, p.stderr)
        return 2
    t = load(trace_path)
    info = t.get("flopline", {})
    metrics = info.get("counter metrics", "").split(",")
    if not metrics or not metrics[0]:
        print("no counter metrics in the trace:", info.get("counters"))
        return 2
    kernels = sorted((e for e in t["traceEvents"] if e.get("cat") == "kernel" and e.get("ph") == "X"),
                     key=lambda e: e["ts"])
    first = {}
    for k in kernels:
        a = k.get("args", {})
        if a.get("flops source") != "counters":
            continue
        first.setdefault(base_name(k["name"]), (k["name"], a))

    def pick(pred, label):
        for b, (name, a) in first.items():
            if label not in chosen and b not in chosen.values() and pred(name, a):
                chosen[label] = b
                return

    chosen = {}
    by_tensor = sorted(first.items(), key=lambda kv: -sum(kv[1][1].get("tensor flops by path", {}).values()))
    if by_tensor:
        chosen["matmul"] = by_tensor[0][0]
    pick(lambda n, a: n.startswith("triton") and sum(a.get("flops by precision", {}).values()) > 0, "triton")
    pick(lambda n, a: n.startswith("triton") or "ema_kernel" in n, "triton")
    pick(lambda n, a: "elementwise" in n, "elementwise")
    pick(lambda n, a: "reduce" in n or "softmax" in n or "norm" in n, "reduction")
    pick(lambda n, a: "multi_tensor" in n or "adam" in n.lower(), "optimizer")
    print("chosen:", chosen)

    # Every kernel of the (small) program: no name filter to get wrong.
    ncu_csv = os.path.join(args.out, "ncu.csv")
    cmd = [args.ncu, "--metrics", ",".join(metrics), "--kernel-name-base", "demangled",
           "--csv", "--page", "raw", "--print-units", "base", "--clock-control", "none", "--log-file",
           os.path.join(args.out, "ncu.log")] + LOOP
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    with open(ncu_csv, "w") as f:
        f.write(p.stdout)
    if p.returncode != 0:
        print(p.stderr[-3000:])
        return 2
    rows = [r for r in csv.reader(io.StringIO(p.stdout[p.stdout.find('"ID"'):]))]
    if len(rows) < 3:
        print("ncu printed no kernel rows; see", ncu_csv)
        return 2
    header = rows[0]
    name_col = header.index("Kernel Name")
    ncu_first = {}
    for r in rows[2:]:  # rows[1] holds the units
        b = base_name(r[name_col])
        if b in ncu_first:
            continue
        ncu_first[b] = {h: number(v) for h, v in zip(header, r) if h in metrics}

    bad = 0
    print()
    print(f"{'kernel':12s} {'what':16s} {'flopline':>18s} {'ncu':>18s} {'diff':>8s}")
    for label, b in chosen.items():
        name, a = first[b]
        n = ncu_first.get(b)
        if n is None:
            print(f"{label:12s} not profiled by ncu: {b}")
            bad += 1
            continue
        pairs = [("flops", a.get("flops", 0.0), flops_from(metrics, n)),
                 ("dram bytes read", a.get("dram bytes read", 0.0), n.get("dram__bytes_read.sum", 0.0)),
                 ("dram bytes written", a.get("dram bytes written", 0.0), n.get("dram__bytes_write.sum", 0.0))]
        for what, mine, theirs in pairs:
            diff = 0.0 if max(mine, theirs) == 0 else abs(mine - theirs) / max(mine, theirs)
            ok = diff <= 0.01
            bad += 0 if ok else 1
            print(f"{label:12s} {what:16s} {mine:18.0f} {theirs:18.0f} {100 * diff:7.3f}% {'' if ok else 'DIFFERS'}")
    print(f"kernels: " + "; ".join(f"{k}={v}" for k, v in chosen.items()))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
