"""Records a PyTorch-profiler (Kineto) trace of the classic experiments' operations
on the GPU: matmul in fp32/tf32/bf16, softmax(A @ B) over rows and columns, and an
elementwise add. It is the bundled trace that `scripts/main.sh` shows until flopline's
own capture records the samples.

Usage: python3 record_kineto_baseline.py OUT.json.gz [--size N]
"""
import argparse
import gzip
import os
import shutil
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile, record_function


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    n = args.size
    dev = torch.device("cuda")
    a = torch.randn(n, n, device=dev)
    b = torch.randn(n, n, device=dev)
    ab, bb = a.bfloat16(), b.bfloat16()
    x = torch.randn(1 << 26, device=dev)
    y = torch.randn(1 << 26, device=dev)

    def step():
        torch.backends.cuda.matmul.allow_tf32 = False
        with record_function("matmul fp32"):
            a @ b
        torch.backends.cuda.matmul.allow_tf32 = True
        with record_function("matmul tf32"):
            a @ b
        with record_function("matmul bf16"):
            ab @ bb
        with record_function("softmax(A@B, dim=-1) tf32"):
            torch.softmax(a @ b, dim=-1)
        with record_function("softmax(A@B, dim=0) tf32"):
            torch.softmax(a @ b, dim=0)
        with record_function("add fp32 2^26"):
            x + y

    for _ in range(2):  # warm up cuBLAS heuristics and the caching allocator
        step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 record_shapes=True, with_flops=True) as prof:
        for _ in range(args.reps):
            step()
        torch.cuda.synchronize()
    tmp = tempfile.mktemp(suffix=".json")
    prof.export_chrome_trace(tmp)
    with open(tmp, "rb") as src, gzip.open(args.out, "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    os.remove(tmp)
    print("wrote", args.out, os.path.getsize(args.out), "bytes;", torch.cuda.get_device_name())


if __name__ == "__main__":
    main()
