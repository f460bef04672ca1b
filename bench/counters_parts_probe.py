"""A small PyTorch program for timing flopline's one-pass parts (FLOPLINE_COUNTERS_PARTS=1)
outside a training loop: a few elementwise kernels and one reduction, each work key
launched many times so that every key comes back for its parts. Run under

    FLOPLINE_COUNTERS_PARTS=1 FLOPLINE_COUNTERS_DEBUG=1 \\
        flopline run --counters -o probe.json -- python3 bench/counters_parts_probe.py

and read the "measurement N took" lines: what a part costs in a process that has loaded
little, against train_loop.py's 85 ms (docs/COUNTERS.md, "One-pass parts").
"""
import argparse
import time

import torch


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--matmul", action="store_true", help="also a bf16 matmul a round (cuBLAS loaded)")
    a = ap.parse_args()
    sizes = [1 << 20, 3 << 19]  # two shapes: two keys per function
    xs = [torch.rand(n, device="cuda") for n in sizes]
    m = torch.rand(1024, 1024, device="cuda", dtype=torch.bfloat16)
    torch.cuda.synchronize()
    t0 = time.monotonic()
    for _ in range(a.rounds):
        for x in xs:
            y = x * 2.0 + 1.0  # a mul and an add kernel (FLOPs)
            y.copy_(x)         # a copy kernel (no FLOPs)
            y.sum()            # a reduction
        if a.matmul:
            m @ m
    torch.cuda.synchronize()
    print(f"rounds={a.rounds} loop_s={time.monotonic() - t0:.3f}")


if __name__ == "__main__":
    main()
