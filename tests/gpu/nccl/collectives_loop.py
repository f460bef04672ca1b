"""Collectives of known sizes on two ranks, for tests/gpu/nccl/check_collectives.py: each
rank runs every call below (and a small DDP step, whose bucketed all-reduces are what
users see), so the checker knows the message size each NCCL kernel must carry."""
import json
import os
import time

import torch
import torch.distributed as dist

# (collective, elements per rank, dtype): NCCL's message is elements x element size
# (for AllGather what each rank sends, for ReduceScatter what each receives).
CALLS = [
    ("AllReduce", 16 << 20, torch.float32),   # 64 MiB
    ("AllReduce", 1 << 20, torch.bfloat16),   # 2 MiB
    ("AllGather", 4 << 20, torch.bfloat16),   # 8 MiB sent by each rank
    ("ReduceScatter", 2 << 20, torch.float32),  # 8 MiB received by each rank
    ("Broadcast", 3 << 20, torch.float32),    # 12 MiB
]
REPEATS = 5
# Then rank 1 arrives late, by STRAGGLE_S of host sleep with an empty GPU queue, at
# STRAGGLE_CALLS all-reduces of STRAGGLE_ELEMENTS floats: rank 0's kernels wait that long.
STRAGGLE_S = 0.02
STRAGGLE_CALLS = 5
STRAGGLE_ELEMENTS = 1 << 20  # 4 MiB, a size no other call has


def run_call(name, n, dtype, world):
    if name == "AllReduce":
        t = torch.ones(n, dtype=dtype, device="cuda")
        dist.all_reduce(t)
    elif name == "AllGather":
        t = torch.ones(n, dtype=dtype, device="cuda")
        out = torch.empty(n * world, dtype=dtype, device="cuda")
        dist.all_gather_into_tensor(out, t)
    elif name == "ReduceScatter":
        t = torch.ones(n * world, dtype=dtype, device="cuda")
        out = torch.empty(n, dtype=dtype, device="cuda")
        dist.reduce_scatter_tensor(out, t)
    elif name == "Broadcast":
        t = torch.ones(n, dtype=dtype, device="cuda")
        dist.broadcast(t, src=0)


def main():
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    for _ in range(REPEATS):
        for name, n, dtype in CALLS:
            run_call(name, n, dtype, world)
    torch.cuda.synchronize()
    t = torch.ones(STRAGGLE_ELEMENTS, dtype=torch.float32, device="cuda")
    for _ in range(STRAGGLE_CALLS):
        dist.barrier()
        torch.cuda.synchronize()
        if rank == 1:
            time.sleep(STRAGGLE_S)
        dist.all_reduce(t)
    torch.cuda.synchronize()
    dist.destroy_process_group()
    if rank == 0:
        expected = [{"collective": c, "message_bytes": n * torch.tensor([], dtype=d).element_size(),
                     "calls": REPEATS} for c, n, d in CALLS]
        with open(os.environ["EXPECTED_OUT"], "w") as f:
            json.dump({"world_size": world, "calls": expected,
                       "straggler": {"rank": 1, "seconds": STRAGGLE_S, "calls": STRAGGLE_CALLS,
                                     "message_bytes": STRAGGLE_ELEMENTS * 4}}, f)
    print(f"collectives_loop: rank {rank} done")


if __name__ == "__main__":
    main()
