"""Run under `flopline run` by gpu_ending_tests: a process that does GPU work and then ends
one way or another. Nothing here knows flopline.

    python3 endings.py MODE [KERNELS]

MODE:
  exit-thread   os._exit(7) from a second thread, the main thread still running
  exit-main     os._exit(7) from the main thread
  two-exits     os._exit(7) from a second thread and, while its trace is being written,
                os._exit(3) from the main thread
  mp-worker     a fork-started multiprocessing worker does the GPU work (the parent never
                touches CUDA) and ends with os._exit, as such workers do
  kill          after the kernels, waits (flushes happen), then SIGKILL to itself
  normal        the kernels, inside an NVTX range, then a normal end
KERNELS: how many elementwise kernels to launch (default 200).
"""
import multiprocessing as mp
import os
import signal
import sys
import threading
import time


def gpu_work(n):
    import torch
    x = torch.ones(1 << 16, device="cuda")
    with torch.cuda.nvtx.range("work"):
        for _ in range(n):
            x.add_(1.0)
    torch.cuda.synchronize()
    assert float(x[0]) == 1.0 + n
    return x


def worker(n):
    gpu_work(n)


def main():
    mode = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    if mode == "mp-worker":
        ctx = mp.get_context("fork")
        p = ctx.Process(target=worker, args=(n,))
        p.start()
        p.join()
        print("worker exit code", p.exitcode, flush=True)
        sys.exit(0 if p.exitcode == 0 else 1)
    gpu_work(n)
    if mode == "exit-main":
        os._exit(7)
    if mode == "exit-thread":
        threading.Thread(target=lambda: os._exit(7)).start()
        while True:
            time.sleep(0.01)  # the main thread is still running when the process ends
    if mode == "two-exits":
        threading.Thread(target=lambda: os._exit(7)).start()
        time.sleep(0.02)  # the other thread's write has started and runs for longer
        os._exit(3)
    if mode == "kill":
        time.sleep(float(os.environ.get("ENDINGS_WAIT_S", "2")))
        print("killing myself", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    print("normal end", flush=True)


if __name__ == "__main__":
    main()
