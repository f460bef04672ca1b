"""Run under `flopline run -o DIR/t.json -- python3 -m torch.distributed.run ...` by
gpu_run_tests (Runs.OnlyProcessesWithGpuWorkWriteTraces).

Each rank does GPU work on its own device (and an all-reduce when there are two), then
forks a child that does nothing on the GPU. The launcher and the children must write no
trace; rank 0's trace takes t.json, other ranks write t-rankN.json.
"""
import os

import torch
import torch.distributed as dist


def main():
    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    x = torch.full((1 << 20,), float(rank + 1), device="cuda")
    for _ in range(10):
        x = x * 1.0001 + 1.0
    if world > 1:
        dist.init_process_group("nccl")
        dist.all_reduce(x)
        dist.destroy_process_group()
    torch.cuda.synchronize()
    pid = os.fork()
    if pid == 0:
        os._exit(0)  # a child that never touches the GPU, ending as fork workers do
    os.waitpid(pid, 0)
    print(f"rank {rank} of {world}: {float(x[0]):.3f}")


if __name__ == "__main__":
    main()
