"""A training-loop-shaped stream of tiny kernels at a fixed launch rate, for the
streaming capture's long-run checks (check_streaming.py): a "train" NVTX range open for
the whole run, a "step N" range per 300 launches and an "add" range per 30, each launch
an in-place add on a small tensor. Writes its pid to --pid-file when CUDA is up, prints
one JSON line at the end ({"launches": N, "steps": S, "seconds": T}).

  launch_loop.py --seconds 480 --rate 30000 --pid-file PATH
"""
import argparse
import json
import os
import time

import torch

PER_STEP = 300
PER_OP = 30


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, required=True)
    p.add_argument("--rate", type=float, default=30000, help="launches per second")
    p.add_argument("--pid-file", required=True)
    a = p.parse_args()

    x = torch.zeros(256, device="cuda")
    torch.cuda.synchronize()
    with open(a.pid_file, "w") as f:
        f.write(str(os.getpid()))
    torch.cuda.nvtx.range_push("train")
    start = time.monotonic()
    launched = 0
    step = 0
    while True:
        elapsed = time.monotonic() - start
        if elapsed >= a.seconds:
            break
        ahead = launched - elapsed * a.rate
        if ahead > 0:  # keep to the rate: sleep off what is launched ahead of it
            time.sleep(ahead / a.rate)
            continue
        torch.cuda.nvtx.range_push(f"step {step}")
        for _ in range(PER_STEP // PER_OP):
            torch.cuda.nvtx.range_push("add")
            for _ in range(PER_OP):
                x.add_(1.0)
            torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.range_pop()
        launched += PER_STEP
        step += 1
    torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    print(json.dumps({"launches": launched, "steps": step,
                      "seconds": round(time.monotonic() - start, 1)}), flush=True)


if __name__ == "__main__":
    main()
