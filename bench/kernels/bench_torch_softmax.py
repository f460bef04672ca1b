"""PyTorch's own softmax(A @ B) at the fused matmul+softmax anchor shapes, to set beside
bench_softmax's fused and unfused figures from the same device call.

    python3 bench/kernels/bench_torch_softmax.py [--shape M N K]...

The anchor figures are PyTorch's pair on an H200 (cuBLAS's matmul through
torch.matmul, then torch.softmax); this measures that pair on the machine at hand, timed
like bench_softmax: each call synchronized, CUDA events around it, the matmul alone and
the pair interleaved round by round, medians of 20 rounds after 3 warm-up rounds. tf32:
fp32 tensors with TF32 matmuls allowed, fp32 softmax. bf16: bf16 tensors, bf16 scores
and a bf16 softmax (PyTorch's bf16 matmul has no fp32 output; compare with
`bench_softmax --out bf16`). Prints one `bench=torch_softmax` line per case.
"""
import argparse
import statistics
import sys

import torch

ANCHORS = [(4096, 4096, 4096), (8192, 8192, 1024), (16384, 2048, 128)]
ROUNDS, WARMUP = 20, 3


def timed_ms(fn):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


def run_case(m, n, k, dtype, dim):
    gen = torch.Generator(device="cuda").manual_seed(m * 31 + n * 7 + k)
    a = torch.randn(m, k, device="cuda", generator=gen).to(dtype)
    b = torch.randn(k, n, device="cuda", generator=gen).to(dtype)
    matmul = lambda: torch.matmul(a, b)  # noqa: E731
    pair = lambda: torch.softmax(torch.matmul(a, b), dim=dim)  # noqa: E731
    out = pair()
    # A softmax that does not sum to 1 along dim would make the timing meaningless.
    sums = out.float().sum(dim=dim)
    if not torch.allclose(sums, torch.ones_like(sums), atol=2e-2):
        raise SystemExit(f"bench_torch_softmax: softmax sums off at {m}x{n}x{k} dim={dim}")
    del out, sums
    times = {"matmul": [], "pair": []}
    for r in range(WARMUP + ROUNDS):
        for name, fn in (("matmul", matmul), ("pair", pair)):
            t = timed_ms(fn)
            if r >= WARMUP:
                times[name].append(t)
    med = {name: statistics.median(v) for name, v in times.items()}
    kind = "tf32" if dtype == torch.float32 else "bf16"
    print(f"bench=torch_softmax dim={'rows' if dim == -1 else 'cols'} dtype={kind} out={'fp32' if kind == 'tf32' else 'bf16'} "
          f"m={m} n={n} k={k} pair_ms={med['pair']:.4f} matmul_ms={med['matmul']:.4f} "
          f"softmax_ms={med['pair'] - med['matmul']:.4f} torch={torch.__version__}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", nargs=3, type=int, action="append", metavar=("M", "N", "K"),
                        help="run only these shapes (default: the anchors)")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("bench_torch_softmax: skipped: no CUDA device", file=sys.stderr)
        return 0
    torch.backends.cuda.matmul.allow_tf32 = True
    for m, n, k in args.shape or ANCHORS:
        for dtype in (torch.float32, torch.bfloat16):
            for dim in (-1, 0):
                run_case(m, n, k, dtype, dim)
    return 0


if __name__ == "__main__":
    sys.exit(main())
