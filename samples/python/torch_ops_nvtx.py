"""PyTorch operations of the classic experiments, each inside a plain NVTX range whose
message carries its FLOP and byte counts in flopline's suffix ("[flops=... bytes=...]",
docs/NVTX.md). Run it under `flopline run` and the table shows TFLOP/s and GB/s per
operator; nothing in it knows about flopline.

Usage: flopline run -o OUT.json.gz -- python3 torch_ops_nvtx.py [--size N] [--reps R]
"""
import argparse

import torch


def counted(name, flops, nbytes, precision):
    return torch.cuda.nvtx.range(f"{name} [flops={flops} bytes={nbytes} precision={precision}]")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    n = args.size
    a = torch.randn(n, n, device="cuda")
    b = torch.randn(n, n, device="cuda")
    ab, bb = a.bfloat16(), b.bfloat16()
    m = 1 << 26
    x = torch.randn(m, device="cuda")
    y = torch.randn(m, device="cuda")
    mm_flops = 2 * n**3
    mm_bytes_f32 = 3 * n * n * 4
    # softmax: exp, max, sum, divide per element: 4 flops, counted beside the matmul's.
    sm_flops = mm_flops + 4 * n * n

    def step():
        torch.backends.cuda.matmul.allow_tf32 = False
        with counted("matmul fp32", mm_flops, mm_bytes_f32, "fp32"):
            a @ b
        torch.backends.cuda.matmul.allow_tf32 = True
        with counted("matmul tf32", mm_flops, mm_bytes_f32, "tf32"):
            a @ b
        with counted("matmul bf16", mm_flops, 3 * n * n * 2, "bf16"):
            ab @ bb
        with counted("softmax(A@B, dim=-1) tf32", sm_flops, 2 * n * n * 4 + 2 * n * n * 4, "tf32"):
            torch.softmax(a @ b, dim=-1)
        with counted("softmax(A@B, dim=0) tf32", sm_flops, 2 * n * n * 4 + 2 * n * n * 4, "tf32"):
            torch.softmax(a @ b, dim=0)
        with counted("add fp32 2^26", m, 3 * m * 4, "fp32"):
            x + y

    for _ in range(2):  # warm up cuBLAS heuristics and the caching allocator
        step()
    torch.cuda.synchronize()
    for _ in range(args.reps):
        step()
    torch.cuda.synchronize()
    print("done:", torch.cuda.get_device_name(), "size", n)


if __name__ == "__main__":
    main()
