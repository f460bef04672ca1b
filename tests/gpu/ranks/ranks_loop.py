"""A small fp32 MLP training loop for the multi-rank and diff checks (check_ranks.py).
Under torchrun it is a DDP job; alone, one process. Each step is an NVTX range "step N";
with --ops, PyTorch's operators are NVTX ranges with their shapes (emit_nvtx), so
`flopline diff --by op` has operators to match.

  ranks_loop.py [--steps 14] [--batch 8] [--tf32 on|off] [--straggle-ms 0] [--ops]

--straggle-ms: rank 1 finishes its forward on the GPU, then sleeps that long on the
host before each backward, so its gradients' all-reduces start that much later than
rank 0's, every step.
"""
import argparse
import contextlib
import os
import time

import torch
import torch.nn.functional as F

ROWS_PER_SAMPLE = 256


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=14)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--tf32", choices=["on", "off"], default="off")
    p.add_argument("--straggle-ms", type=float, default=0)
    p.add_argument("--ops", action="store_true")
    a = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = a.tf32 == "on"
    torch.backends.cudnn.allow_tf32 = a.tf32 == "on"

    distributed = "WORLD_SIZE" in os.environ
    rank = 0
    if distributed:
        import torch.distributed as dist
        dist.init_process_group("nccl")
        rank = dist.get_rank()
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.GELU(),
                                torch.nn.Linear(4096, 1024)).cuda()
    if distributed:
        model = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=8)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(a.batch * ROWS_PER_SAMPLE, 1024, device="cuda")
    ops = torch.autograd.profiler.emit_nvtx(record_shapes=True) if a.ops else contextlib.nullcontext()
    with ops:
        for step in range(a.steps):
            torch.cuda.nvtx.range_push(f"step {step}")
            loss = F.mse_loss(model(x), x)
            if rank == 1 and a.straggle_ms > 0:
                torch.cuda.synchronize()
                time.sleep(a.straggle_ms / 1000)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    if distributed:
        dist.destroy_process_group()
    print(f"ranks_loop: rank {rank} done ({a.steps} steps, batch {a.batch}, tf32 {a.tf32})")


if __name__ == "__main__":
    main()
