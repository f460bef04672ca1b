"""bench/counters_pass_cost.cu inside a PyTorch process: whether a Range Profiler
measurement costs more there than in a bare program, and what in the process makes it.

Each setup runs in a child of its own, which prepares the process as the setup says and
then runs the experiment's table (libcounters_pass_cost.so, built beside the
executable) on the same device and context:

  bare     torch imported, the context made, nothing else
  streams  plus 64 streams with work launched on each
  matmul   torch and one bf16 matmul (cuBLAS loaded), without the streams
  allocs   torch and 4,000 live allocations of 64 KB each, every one its own cudaMalloc
           (the caching allocator off): does the replay's cost follow the allocations?
  kernels  torch and about 150 distinct elementwise and reduction kernels run once
           (their functions loaded), little memory: does it follow the code loaded?
  ops      plus a small bf16 transformer step, forward, backward and AdamW (cuBLAS,
           cuDNN's attention, many of PyTorch's kernels loaded)

    counters_pass_cost_torch.py --lib build/bench/libcounters_pass_cost.so [--setups bare,ops]
"""
import argparse
import ctypes
import subprocess
import sys


def prepare(setup):
    import os
    if setup == "allocs":
        os.environ["PYTORCH_NO_CUDA_MEMORY_CACHING"] = "1"  # read when torch starts CUDA
    import torch

    torch.zeros(1, device="cuda")
    torch.cuda.synchronize()
    if setup in ("streams", "ops"):
        streams = [torch.cuda.Stream() for _ in range(64)]
        x = torch.ones(1 << 16, device="cuda")
        for s in streams:
            with torch.cuda.stream(s):
                x.add_(1)
        torch.cuda.synchronize()
    if setup == "allocs":
        prepare.keep = [torch.empty(1 << 14, device="cuda") for _ in range(4000)]
        torch.cuda.synchronize()
    if setup == "kernels":
        unary = ["abs", "neg", "square", "sign", "clone", "sum", "amax", "amin", "exp", "log",
                 "sin", "cos", "tanh", "sigmoid", "sqrt", "rsqrt", "erf", "floor", "ceil", "round",
                 "reciprocal", "relu", "exp2", "log1p", "expm1", "atan", "trunc", "frac"]
        for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
            x = torch.rand(1 << 12, device="cuda", dtype=dtype)
            ops = [lambda name=name: getattr(torch, name)(x) for name in unary]
            ops += [lambda: x + x, lambda: x * x, lambda: x > x, lambda: torch.cumsum(x, 0),
                    lambda: torch.where(x > 0.5, x, -x)]
            for op in ops:
                try:
                    op()
                except RuntimeError:  # not built for this dtype: one kernel fewer
                    pass
        torch.cuda.synchronize()
    if setup == "matmul":
        a = torch.ones(1024, 1024, device="cuda", dtype=torch.bfloat16)
        (a @ a).sum()
        torch.cuda.synchronize()
    if setup == "ops":
        layer = torch.nn.TransformerEncoderLayer(1024, 16, 4096, batch_first=True, device="cuda")
        opt = torch.optim.AdamW(layer.parameters(), fused=True)
        x = torch.randn(8, 512, 1024, device="cuda")
        for _ in range(3):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = layer(x).float().square().mean()
            loss.backward()
            opt.step()
            opt.zero_grad()
        torch.cuda.synchronize()
    return torch


def child(lib, setup, gib):
    torch = prepare(setup)
    print(f"== {setup}: {torch.cuda.memory_reserved() / 2**30:.2f} GiB reserved by PyTorch", flush=True)
    run = ctypes.CDLL(lib).counters_pass_cost_main
    argv = (ctypes.c_char_p * 2)(b"counters_pass_cost", gib.encode())
    run.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    return run(2, argv)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lib", required=True, help="libcounters_pass_cost.so")
    ap.add_argument("--setups", default="bare,matmul,ops")
    ap.add_argument("--gib", default="0", help="device memory the experiment holds itself")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        sys.exit(child(a.lib, a.child, a.gib))
    rc = 0
    for setup in a.setups.split(","):
        out = subprocess.run([sys.executable, __file__, "--lib", a.lib, "--gib", a.gib, "--child", setup],
                             capture_output=True, text=True, timeout=300)
        sys.stdout.write(out.stdout)
        if out.returncode != 0:
            sys.stdout.write(f"{setup}: exit {out.returncode}\n{out.stderr[-2000:]}")
            rc = 1
    sys.exit(rc)


if __name__ == "__main__":
    main()
