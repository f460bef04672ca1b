"""The Triton half of the classic experiments, profiled from outside with flopline.

A Triton vector-add kernel run three ways (called directly, inside torch.compile, and as
a torch.library.triton_op), and the fused matmul+softmax (dim 0) of the write-up as a
Triton kernel beside PyTorch's softmax(A @ B, dim=0). Every step sits in a plain
torch.cuda.nvtx.range; most carry their FLOPs and bytes in flopline's message suffix
("[flops=... bytes=...]", docs/NVTX.md). Nothing here imports flopline:

    flopline run -o triton.json.gz -- python3 samples/python/triton_samples.py

and every Triton kernel is in the trace with its time, inside its range: the kernels the
write-up could not see in torch.profiler until it wrapped them as operators.
"""
import argparse
import sys

import torch
import triton
import triton.language as tl
from torch.library import triton_op, wrap_triton

ADD_BLOCK = 1024


@triton.jit
def flopline_sample_add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def add_direct(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    flopline_sample_add_kernel[(triton.cdiv(n, ADD_BLOCK),)](x, y, out, n, BLOCK=ADD_BLOCK)
    return out


@torch.compile(fullgraph=True)
def add_compiled(x, y):
    # A user-written Triton kernel inside a compiled graph (Dynamo traces the launch).
    out = torch.empty_like(x)
    n = x.numel()
    flopline_sample_add_kernel[(triton.cdiv(n, ADD_BLOCK),)](x, y, out, n, BLOCK=ADD_BLOCK)
    return out


@triton_op("flopline_samples::add", mutates_args={})
def add_op(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    wrap_triton(flopline_sample_add_kernel)[(triton.cdiv(n, ADD_BLOCK),)](x, y, out, n, BLOCK=ADD_BLOCK)
    return out


@triton.jit
def flopline_sample_mm_softmax_cols_kernel(a_ptr, b_ptr, out_ptr, N: tl.constexpr, BN: tl.constexpr,
                                           BK: tl.constexpr):
    """out[:, cols] = softmax(A @ B[:, cols], dim=0): one program owns a strip of BN
    columns over all N rows, so the column max and sum never leave it."""
    cols = tl.program_id(0) * BN + tl.arange(0, BN)
    rows = tl.arange(0, N)
    acc = tl.zeros((N, BN), dtype=tl.float32)
    for k0 in range(0, N, BK):
        ks = k0 + tl.arange(0, BK)
        a = tl.load(a_ptr + rows[:, None] * N + ks[None, :])
        b = tl.load(b_ptr + ks[:, None] * N + cols[None, :])
        acc += tl.dot(a, b, input_precision="ieee")  # fp32, as the write-up's CPU run
    acc = acc - tl.max(acc, axis=0)[None, :]
    num = tl.exp(acc)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], num / tl.sum(num, axis=0)[None, :])


def mm_softmax_cols_triton(a, b):
    n = a.shape[0]
    out = torch.empty_like(a)
    bn = 32 if n <= 256 else 16
    flopline_sample_mm_softmax_cols_kernel[(n // bn,)](a, b, out, N=n, BN=bn, BK=32, num_warps=8)
    return out


def counted(name, flops=None, nbytes=None, precision=None):
    """An NVTX range; with FLOPs and bytes, in flopline's suffix (docs/NVTX.md)."""
    if flops is None:
        return torch.cuda.nvtx.range(name)
    suffix = f" [flops={flops} bytes={nbytes}" + (f" precision={precision}" if precision else "") + "]"
    return torch.cuda.nvtx.range(name + suffix)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1 << 24, help="vector length of the adds (default 2^24)")
    ap.add_argument("--sizes", default="128,256,512", help="fused matmul+softmax sides (default 128,256,512)")
    ap.add_argument("--reps", type=int, default=10, help="launches per step (default 10)")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("triton_samples: no CUDA device", file=sys.stderr)
        return 3
    sizes = [int(s) for s in args.sizes.split(",")]
    for s in sizes:
        if s < 32 or s > 512 or s & (s - 1):
            ap.error(f"--sizes: {s} is not a power of two from 32 to 512 (one program holds a column strip)")
    n, reps = args.n, args.reps
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    expect = x + y
    add_flops, add_bytes = reps * n, reps * 12 * n  # one add and 3 fp32 accesses per element

    # Compile everything once outside the ranges, as an autotuner's first call would.
    for f in (add_direct, add_compiled, add_op):
        torch.testing.assert_close(f(x, y), expect)
    torch.cuda.synchronize()

    for label, f in (("direct", add_direct), ("torch.compile", add_compiled), ("triton_op", add_op)):
        with counted(f"triton add {label}", add_flops, add_bytes, "fp32"):
            for _ in range(reps):
                out = f(x, y)
            torch.cuda.synchronize()
        torch.testing.assert_close(out, expect)

    torch.backends.cuda.matmul.allow_tf32 = False  # fp32 on both sides: compared with atol 1e-2
    for s in sizes:
        a = torch.randn(s, s, device="cuda")
        b = torch.randn(s, s, device="cuda")
        mm_softmax_cols_triton(a, b)  # compile, and let cuBLAS pick its kernel for this shape
        torch.softmax(a @ b, dim=0)
        flops = reps * (2 * s**3 + 5 * s * s)  # docs/KERNELS.md's matmul_softmax model
        with counted(f"triton fused_mm_softmax dim=0 {s}", flops, reps * 3 * s * s * 4, "fp32"):
            for _ in range(reps):
                fused = mm_softmax_cols_triton(a, b)
            torch.cuda.synchronize()
        with counted(f"torch softmax(A@B, dim=0) {s}", flops, reps * 5 * s * s * 4, "fp32"):
            for _ in range(reps):
                ref = torch.softmax(a @ b, dim=0)
            torch.cuda.synchronize()
        with counted(f"compare {s}"):  # a range without FLOPs: time only
            torch.testing.assert_close(fused, ref, atol=1e-2, rtol=0)
        print(f"triton_samples: fused_mm_softmax dim=0 {s}: max abs diff {(fused - ref).abs().max().item():.3e}")
    print("triton_samples: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
