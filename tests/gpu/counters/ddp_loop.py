"""A two-rank DDP training loop for `flopline run --counters -- torchrun ...`: its
all-reduce kernels wait for the other rank, so replaying one would hang
(bench/counters_default_vs_all.py --ddp checks that the job finishes, compute kernels
counted, NCCL kernels marked)."""
import os

import torch
import torch.distributed as dist
import torch.nn.functional as F


def main():
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024)).cuda()
    ddp = torch.nn.parallel.DistributedDataParallel(model, bucket_cap_mb=4)
    opt = torch.optim.AdamW(ddp.parameters(), lr=1e-3)
    x = torch.randn(2048, 1024, device="cuda")
    for _ in range(6):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.mse_loss(ddp(x).float(), x)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    torch.cuda.synchronize()
    dist.destroy_process_group()
    print(f"ddp_loop: rank {rank} done")


if __name__ == "__main__":
    main()
