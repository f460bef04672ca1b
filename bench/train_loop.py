"""A small transformer training loop that knows nothing of flopline: the workload of the
capture-overhead, counters and GPU-metrics benchmarks (docs/PERFORMANCE.md) and of GPU
tests. bf16 autocast, AdamW, a torch.compile'd MLP in every block, a hand-written Triton
kernel called directly each step, torch.cuda.nvtx.range per step; about 400 kernel
launches a step.

    python3 train_loop.py [--steps N] [--warmup W] [--profiler none|torch] [--json FILE]

Prints one line "train_loop steps=N median_ms=X ..." and, with --json, every step's time.
Step times are host wall-clock from the step's start to a synchronize at its end.
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def ema_kernel(avg_ptr, x_ptr, n, decay, BLOCK: tl.constexpr):
    """avg = decay * avg + (1 - decay) * x: a running mean of the logits, outside autograd."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    avg = tl.load(avg_ptr + offs, mask=mask)
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    tl.store(avg_ptr + offs, decay * avg + (1.0 - decay) * x, mask=mask)


def ema_(avg, x, decay=0.99):
    n = avg.numel()
    ema_kernel[(triton.cdiv(n, 1024),)](avg, x, n, decay, BLOCK=1024)


class Mlp(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.up = nn.Linear(d, 4 * d)
        self.down = nn.Linear(4 * d, d)

    def forward(self, x):
        return self.down(torch.nn.functional.gelu(self.up(x)))


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = torch.compile(Mlp(d))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        shape = (b, t, self.heads, d // self.heads)
        q, k, v = (z.view(shape).transpose(1, 2) for z in (q, k, v))
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.ln2(x))


class Model(nn.Module):
    def __init__(self, vocab=8192, d=512, heads=8, layers=6, seq=256):
        super().__init__()
        self.emb = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(torch.zeros(seq, d))
        self.blocks = nn.ModuleList(Block(d, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)

    def forward(self, idx):
        x = self.emb(idx) + self.pos[: idx.shape[1]]
        for blk in self.blocks:
            x = blk(x)
        return self.head(self.ln(x))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--profiler", choices=["none", "torch"], default="none")
    ap.add_argument("--label", default=None, help="name printed with the result")
    ap.add_argument("--json", default=None, help="write every step's time here")
    args = ap.parse_args()

    torch.manual_seed(0)
    dev = torch.device("cuda")
    seq, vocab = 256, 8192
    model = Model(vocab=vocab, seq=seq, layers=args.layers).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
    data = torch.randint(0, vocab, (args.batch, seq + 1), device=dev)
    logit_avg = torch.zeros(args.batch * seq * vocab // 64, device=dev)

    def step(i):
        with torch.cuda.nvtx.range(f"step {i}"):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(data[:, :-1])
                loss = torch.nn.functional.cross_entropy(logits.reshape(-1, vocab), data[:, 1:].reshape(-1))
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            with torch.no_grad():
                ema_(logit_avg, logits.detach().reshape(-1)[: logit_avg.numel()])

    t_start = time.perf_counter()
    for i in range(args.warmup):
        step(i)
    torch.cuda.synchronize()
    times = []

    def timed_steps():
        for i in range(args.steps):
            t0 = time.perf_counter()
            step(args.warmup + i)
            torch.cuda.synchronize()
            times.append((time.perf_counter() - t0) * 1e3)

    if args.profiler == "torch":
        from torch.profiler import ProfilerActivity, profile
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
            timed_steps()
    else:
        timed_steps()
    total_s = time.perf_counter() - t_start
    med = statistics.median(times)
    label = args.label or args.profiler
    print(f"train_loop label={label} steps={len(times)} median_ms={med:.3f} "
          f"min_ms={min(times):.3f} max_ms={max(times):.3f} run_s={total_s:.2f}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"label": label, "step_ms": times, "median_ms": med, "run_s": total_s}, f)


if __name__ == "__main__":
    sys.exit(main())
