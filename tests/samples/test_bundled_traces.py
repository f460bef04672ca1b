#!/usr/bin/env python3
"""The bundled traces (samples/traces/) load, and their FLOP/s tables list the operators
the samples create, each with non-zero TFLOP/s (or GB/s for the memory-bound ones).

Each expected operator is checked in `flopline stats TRACE --by op --csv`: present, with
the instance count the recording command implies (samples/traces/README.md), a positive
GPU time and positive FLOP/s. Every bundled trace's operator table shows FLOP/s on some
row, and its kernel table (--by name) is not empty.
"""
import argparse
import csv
import io
import os
import subprocess
import sys

# trace -> {operator: instances}. The counts follow from the recording commands in
# samples/traces/README.md (e.g. --reps 3; vector_add's 20 timed + 1 untimed launches).
EXPECTED = {
    "matmul_bench_h200_tf32_8192.json.gz": {
        "builtin matmul tf32 8192x8192x8192": 3, "cublas matmul tf32 8192x8192x8192": 3},
    "matmul_bench_h200_bf16_8192.json.gz": {
        "builtin matmul bf16 8192x8192x8192": 3, "cublas matmul bf16 8192x8192x8192": 3},
    "matmul_bench_h200_tf32_46000.json.gz": {
        "builtin matmul tf32 46000x46000x46000": 1, "cublas matmul tf32 46000x46000x46000": 1},
    "matmul_bench_h200_fp32_46000.json.gz": {
        "builtin matmul fp32 46000x46000x46000": 1, "cublas matmul fp32 46000x46000x46000": 1},
    "fused_softmax_bench_h200.json.gz": {
        f"{p} softmax(A@B, dim=0) tf32 {n}": 20
        for p in ("test", "unfused", "fused") for n in (128, 256, 512, 1024, 2048, 4096)},
    "fused_softmax_bench_h200_rows.json.gz": {
        f"{p} softmax(A@B, dim=-1) tf32 {n}": 20
        for p in ("test", "unfused", "fused") for n in (512, 2048, 4096)},
    "vector_add_h200.json.gz": {
        f"vector_add block={b} vec={v} grid={g} n={n}": 21
        for b in (128, 256, 512, 1024) for v in (1, 4) for g in ("cover", "persistent")
        for n in (98432, 16777216, 268435456)}
    | {f"vector_add builtin n={n}": 21 for n in (98432, 16777216, 268435456)},
    "plain_cuda_h200.json.gz": {"cublas sgemm 1024": 1},
    # torch.profiler's trace: FLOPs from the cpu_ops' shapes (aten::mm), summed on the
    # record_function ranges around them; --reps 3.
    "kineto_h200_matmul_softmax.json.gz": {
        "aten::mm": 15, "matmul fp32": 3, "matmul tf32": 3, "matmul bf16": 3,
        "softmax(A@B, dim=-1) tf32": 3, "softmax(A@B, dim=0) tf32": 3},
    # 2 warm-up steps + 3 measured, each range carrying its counts.
    "flopline_h200_torch_ops.json.gz": {
        f"{op}": 5 for op in ("matmul fp32", "matmul tf32", "matmul bf16", "softmax(A@B, dim=-1) tf32",
                              "softmax(A@B, dim=0) tf32", "add fp32 2^26")},
    "triton_samples_h200.json.gz": {
        "triton add direct": 1, "triton add torch.compile": 1, "triton add triton_op": 1,
        "triton fused_mm_softmax dim=0 128": 1, "triton fused_mm_softmax dim=0 256": 1,
        "triton fused_mm_softmax dim=0 512": 1, "torch softmax(A@B, dim=0) 512": 1},
}


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
        check(any(r["tflops"] not in ("", None) and float(r["tflops"]) > 0 for r in ops),
              f"{name}: the operator table shows FLOP/s")
        if name not in EXPECTED:
            continue
        for op, count in EXPECTED[name].items():
            r = rows.get(op)
            if not check(r is not None, f"{name}: operator {op!r}"):
                continue
            check(int(r["count"]) == count, f"{name}: {op!r} has {r['count']} instances (expected {count})")
            check(int(r["total_ns"]) > 0, f"{name}: {op!r} has GPU time")
            check(r["tflops"] not in ("", None) and float(r["tflops"]) > 0, f"{name}: {op!r} at {r['tflops']} TFLOP/s")
            check(r["gbps"] not in ("", None) and float(r["gbps"]) > 0, f"{name}: {op!r} at {r['gbps']} GB/s")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
