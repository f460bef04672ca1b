"""Per-op cost of recording a PyTorch loop of 20,000 tiny ops (an in-place add on 16
floats, so launch cost is all there is).

    python3 bench_torch_overhead.py none         no profiler
    python3 bench_torch_overhead.py torch        torch.profiler with CUDA activities
    flopline run -- python3 bench_torch_overhead.py flopline

scripts/gpu_check.sh runs the three; docs/PERFORMANCE.md records the figures.
"""
import sys
import time

import torch


def loop(x, n):
    for _ in range(n):
        x.add_(1.0)
    torch.cuda.synchronize()


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "none"
    n = 20000
    x = torch.zeros(16, device="cuda")
    loop(x, 2000)  # warm-up
    if mode == "torch":
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CUDA]):
            t0 = time.perf_counter()
            loop(x, n)
            seconds = time.perf_counter() - t0
    else:
        t0 = time.perf_counter()
        loop(x, n)
        seconds = time.perf_counter() - t0
    assert x[0].item() == 2000 + n
    print(f"torchmode={mode} us_per_op={seconds / n * 1e6:.3f}")


if __name__ == "__main__":
    main()
