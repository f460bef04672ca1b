"""A training-like loop for capture ranges (docs/CAPTURE.md, "Capture ranges"): STEPS
steps, each inside an NVTX range "step N" (torch.cuda.nvtx.range_push/pop), each
launching exactly three kernels: a fill of the first (N+1)*CHUNK elements of a marker
buffer (its grid grows with N, so the trace says which step a kernel belongs to), an
add and a multiply on fixed tensors. torch.cuda.profiler.start() runs before step
START and stop() after step STOP (none with -1). With --progress FILE, the number of
steps done is written to FILE after each one (on demand: the checker times its
commands by it).

  steps_loop.py [--steps 80] [--start 50] [--stop 59] [--sync] [--sleep-ms MS] [--progress FILE]
"""
import argparse
import os
import time

import torch

CHUNK = 1 << 16


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=80)
    ap.add_argument("--start", type=int, default=50)
    ap.add_argument("--stop", type=int, default=59)
    ap.add_argument("--sync", action="store_true", help="synchronize at the end of each step")
    ap.add_argument("--sleep-ms", type=float, default=0, help="host time per step")
    ap.add_argument("--progress", help="file that holds the number of steps done")
    args = ap.parse_args()
    dev = torch.device("cuda")
    # Set up without fill kernels: the fills in the trace are the steps' markers.
    marker = torch.empty(CHUNK * (args.steps + 1), device=dev)
    a = torch.rand(1 << 20, device=dev)
    b = torch.rand(1 << 20, device=dev)
    torch.cuda.synchronize()
    for step in range(args.steps):
        if step == args.start:
            torch.cuda.profiler.start()
        torch.cuda.nvtx.range_push(f"step {step}")
        marker[: CHUNK * (step + 1)].fill_(float(step))
        a.add_(b)
        a.mul_(0.5)
        if args.sync:
            torch.cuda.synchronize()
        if args.sleep_ms:
            time.sleep(args.sleep_ms / 1000)
        torch.cuda.nvtx.range_pop()
        if step == args.stop:
            torch.cuda.profiler.stop()
        if args.progress:
            with open(args.progress + ".tmp", "w") as f:
                f.write(str(step + 1))
            os.replace(args.progress + ".tmp", args.progress)
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
