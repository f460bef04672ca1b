#!/usr/bin/env python3
"""The bundled traces (samples/traces/) load, and their FLOP/s tables list the operators
the samples create, each with the FLOPs and bytes its workload does and the TFLOP/s and
GB/s those give over its GPU time.

Each expected operator is checked in `flopline stats TRACE --by op --csv`: present, with
the instance count the recording command implies (samples/traces/README.md), a positive
GPU time, FLOPs and bytes equal to count x the workload's own (matmul 2 m n k, the fused
softmax 2 n^3 + 5 n^2, ...: worked out here from the sizes, not read from the trace), and
TFLOP/s and GB/s equal to those totals over the operator's GPU time (where the sizes are
not known here, None: positive TFLOP/s and GB/s). Every bundled trace's operator table
shows FLOP/s on some row, and its kernel table (--by name) must not be empty either.
"""
import argparse
import csv
import io
import os
import subprocess
import sys


def matmul(n, in_bytes, out_bytes):
    """C = A x B, n x n x n: 2 n^3 FLOPs, A and B read and C written once."""
    return 2 * n**3, 2 * n * n * in_bytes + n * n * out_bytes


def softmax_of_matmul(n, provider):
    """softmax(A x B), tf32 in, fp32 out (fused_softmax_bench's cost_of): 2 n^3 + 5 n^2
    FLOPs; the unfused pair also writes and reads the fp32 scores; `test` runs both."""
    flops, nbytes = 2 * n**3 + 5 * n * n, 12 * n * n
    if provider == "unfused":
        nbytes += 8 * n * n
    if provider == "test":
        flops, nbytes = 2 * flops, 2 * nbytes + 8 * n * n
    return flops, nbytes


# trace -> {operator: (instances, FLOPs per instance, bytes per instance)}. The counts and
# sizes follow from the recording commands in samples/traces/README.md (e.g. --reps 3;
# vector_add's 20 timed + 1 untimed launches; triton_samples.py's defaults n = 2^24,
# 10 launches per range).
TRITON_REPS, TRITON_N = 10, 1 << 24
EXPECTED = {
    "matmul_bench_h200_tf32_8192.json.gz": {
        f"{p} matmul tf32 8192x8192x8192": (3, *matmul(8192, 4, 4)) for p in ("builtin", "cublas")},
    "matmul_bench_h200_bf16_8192.json.gz": {
        f"{p} matmul bf16 8192x8192x8192": (3, *matmul(8192, 2, 2)) for p in ("builtin", "cublas")},
    "matmul_bench_h200_tf32_46000.json.gz": {
        f"{p} matmul tf32 46000x46000x46000": (1, *matmul(46000, 4, 4)) for p in ("builtin", "cublas")},
    "matmul_bench_h200_fp32_46000.json.gz": {
        f"{p} matmul fp32 46000x46000x46000": (1, *matmul(46000, 4, 4)) for p in ("builtin", "cublas")},
    "fused_softmax_bench_h200.json.gz": {
        f"{p} softmax(A@B, dim=0) tf32 {n}": (20, *softmax_of_matmul(n, p))
        for p in ("test", "unfused", "fused") for n in (128, 256, 512, 1024, 2048, 4096)},
    "fused_softmax_bench_h200_rows.json.gz": {
        f"{p} softmax(A@B, dim=-1) tf32 {n}": (20, *softmax_of_matmul(n, p))
        for p in ("test", "unfused", "fused") for n in (512, 2048, 4096)},
    "vector_add_h200.json.gz": {  # one add and three fp32 accesses per element
        f"vector_add block={b} vec={v} grid={g} n={n}": (21, n, 12 * n)
        for b in (128, 256, 512, 1024) for v in (1, 4) for g in ("cover", "persistent")
        for n in (98432, 16777216, 268435456)}
    | {f"vector_add builtin n={n}": (21, n, 12 * n) for n in (98432, 16777216, 268435456)},
    "plain_cuda_h200.json.gz": {"cublas sgemm 1024": (1, 10 * 2 * 1024**3, 10 * 3 * 1024 * 1024 * 4)},
    "triton_samples_h200.json.gz": {
        f"triton add {how}": (1, TRITON_REPS * TRITON_N, TRITON_REPS * 12 * TRITON_N)
        for how in ("direct", "torch.compile", "triton_op")}
    | {f"triton fused_mm_softmax dim=0 {s}": (1, TRITON_REPS * (2 * s**3 + 5 * s * s), TRITON_REPS * 3 * s * s * 4)
       for s in (128, 256, 512)}
    | {"torch softmax(A@B, dim=0) 512": (1, TRITON_REPS * (2 * 512**3 + 5 * 512 * 512), TRITON_REPS * 5 * 512 * 512 * 4)},
    # torch.profiler's trace: FLOPs from the cpu_ops' shapes (aten::mm), summed on the
    # record_function ranges around them; --reps 3.
    "kineto_h200_matmul_softmax.json.gz": {
        "aten::mm": (15, None, None), "matmul fp32": (3, None, None), "matmul tf32": (3, None, None),
        "matmul bf16": (3, None, None), "softmax(A@B, dim=-1) tf32": (3, None, None),
        "softmax(A@B, dim=0) tf32": (3, None, None)},
    # Recorded with --counters: each range declares 2 m n k and carries the counters'
    # count beside it (COUNTED below checks they agree).
    "matmul_bench_h200_counters.json.gz": {
        f"{p} matmul bf16 4096x4096x4096": (2, *matmul(4096, 2, 2)) for p in ("builtin", "cublas")},
    # bench/train_loop.py --steps 3 --warmup 2 with --counters: five "step N" ranges that
    # declare nothing, so their FLOPs are their kernels' counted ones.
    "train_loop_h200_counters.json.gz": {f"step {i}": (1, None, None) for i in range(5)},
    # 2 warm-up steps + 3 measured, each range carrying its counts.
    "flopline_h200_torch_ops.json.gz": {
        op: (5, None, None) for op in ("matmul fp32", "matmul tf32", "matmul bf16", "softmax(A@B, dim=-1) tf32",
                                       "softmax(A@B, dim=0) tf32", "add fp32 2^26")},
}


# Traces recorded with `flopline run --counters`: the share of kernel time whose FLOPs
# the counters gave (measured or inferred) must reach this (%), and operators that
# declared FLOPs must agree with the counters' within 1 %.
COUNTED = {"matmul_bench_h200_counters.json.gz": 99.0, "train_loop_h200_counters.json.gz": 90.0}
COUNTED_OPS = {"train_loop_h200_counters.json.gz": [f"step {i}" for i in range(5)]}
DECLARED_AND_COUNTED = {"matmul_bench_h200_counters.json.gz"}


def close(got, want, rel=1e-9):
    return got is not None and abs(got - want) <= rel * abs(want)


def number(text):
    return float(text) if text not in ("", None) else None


def stats(flopline, path, by):
    r = subprocess.run([flopline, "stats", path, "--by", by, "--csv"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=300)
    return r.returncode, list(csv.DictReader(io.StringIO(r.stdout))), r.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flopline", required=True)
    ap.add_argument("--traces", required=True)
    a = ap.parse_args()
    passed = failed = 0

    def check(cond, what):
        nonlocal passed, failed
        print(("ok: " if cond else "FAIL: ") + what)
        passed, failed = passed + bool(cond), failed + (not cond)
        return cond

    present = sorted(f for f in os.listdir(a.traces) if f.endswith(".json.gz"))
    for name in EXPECTED:
        check(name in present, f"{name} is bundled")
    for name in present:
        path = os.path.join(a.traces, name)
        rc, kernels, err = stats(a.flopline, path, "name")
        check(rc == 0 and len(kernels) > 0, f"{name}: loads, {len(kernels)} kernels in the table {err.strip()[:200]}")
        rc, ops, err = stats(a.flopline, path, "op")
        rows = {r["name"]: r for r in ops}
        check(rc == 0, f"{name}: the operator table ({err.strip()[:200]})")
        check(any((number(r["tflops"]) or 0) > 0 for r in ops), f"{name}: the operator table shows FLOP/s")
        if name in COUNTED:
            total = sum(int(r["total_ns"]) for r in kernels)
            counted = sum(int(r["total_ns"]) for r in kernels if r["flops_source"] == "counters")
            check(total > 0 and 100 * counted / total >= COUNTED[name],
                  f"{name}: {100 * counted / max(total, 1):.1f}% of kernel time has counted FLOPs")
            if name in DECLARED_AND_COUNTED:
                check(any(r["counted_flops"] for r in ops), f"{name}: declared FLOPs carry the counters' beside them")
            for r in ops:
                if r["counted_flops"]:
                    pct = number(r["declared_vs_counted_pct"])
                    check(pct is not None and abs(pct) <= 1.0,
                          f"{name}: {r['name']!r} declares FLOPs {pct}% from the counters'")
            for op in COUNTED_OPS.get(name, []):
                r = rows.get(op)
                check(r is not None and r["flops_source"] == "counters" and (number(r["flops"]) or 0) > 0,
                      f"{name}: {op!r} has counted FLOPs ({r and r['flops']}, {r and r['flops_source']})")
        if name not in EXPECTED:
            continue
        for op, (count, flops, nbytes) in EXPECTED[name].items():
            r = rows.get(op)
            if not check(r is not None, f"{name}: operator {op!r}"):
                continue
            check(int(r["count"]) == count, f"{name}: {op!r} has {r['count']} instances (expected {count})")
            ns = int(r["total_ns"])
            if not check(ns > 0, f"{name}: {op!r} has GPU time"):
                continue
            if flops is None:
                check((number(r["tflops"]) or 0) > 0, f"{name}: {op!r} at {r['tflops']} TFLOP/s")
                check((number(r["gbps"]) or 0) > 0, f"{name}: {op!r} at {r['gbps']} GB/s")
                continue
            total_flops, total_bytes = count * flops, count * nbytes
            check(close(number(r["flops"]), total_flops), f"{name}: {op!r} does {r['flops']} FLOPs ({total_flops})")
            check(close(number(r["bytes"]), total_bytes), f"{name}: {op!r} moves {r['bytes']} bytes ({total_bytes})")
            check(close(number(r["tflops"]), total_flops / ns / 1e3),
                  f"{name}: {op!r} at {r['tflops']} TFLOP/s ({total_flops / ns / 1e3} over {ns} ns)")
            check(close(number(r["gbps"]), total_bytes / ns),
                  f"{name}: {op!r} at {r['gbps']} GB/s ({total_bytes / ns} over {ns} ns)")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
