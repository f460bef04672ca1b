"""Launches that try to break the sharing of counter measurements (docs/COUNTERS.md).

- A transformer-like block trained with bf16 autocast: GEMMs of one persistent cuBLAS
  kernel that share a grid and differ in N and K (qkv 1024->3072, projection
  1024->1024, MLP 1024->4096 and 4096->1024), forward and backward; dropout, whose
  kernel gets a new RNG offset every launch; fused AdamW under a learning-rate schedule
  (a new scalar every step).
- One Triton kernel called with fp32 and with bf16 inputs: two functions, one name.
- An inference loop whose sequence length changes at every call.

Run it under `flopline run --counters` and `--counters=all` and compare launch by
launch (bench/counters_default_vs_all.py). Deterministic in its launches: the same
kernels in the same order on every run.
"""
import argparse

import torch
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def scale_add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    y = tl.load(y_ptr + offs, mask=mask).to(tl.float32)
    tl.store(out_ptr + offs, (2.0 * x + y).to(out_ptr.dtype.element_ty), mask=mask)


def scale_add(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    scale_add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out


class Block(torch.nn.Module):
    def __init__(self, d=1024, heads=16):
        super().__init__()
        self.heads = heads
        self.norm1 = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.proj = torch.nn.Linear(d, d)
        self.norm2 = torch.nn.LayerNorm(d)
        self.up = torch.nn.Linear(d, 4 * d)
        self.down = torch.nn.Linear(4 * d, d)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(d, dim=-1)
        q, k, v = (t.view(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + F.dropout(self.proj(a.transpose(1, 2).reshape(b, s, d)), 0.1, self.training)
        return x + self.down(F.gelu(self.up(self.norm2(x))))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=6)
    p.add_argument("--infer-calls", type=int, default=6)
    args = p.parse_args()
    torch.manual_seed(0)
    dev = "cuda"
    model = torch.nn.Sequential(Block(), Block()).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, fused=True)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: 1.0 / (1 + step))
    x = torch.randn(4, 1024, 1024, device=dev)
    target = torch.randn(4, 1024, 1024, device=dev)
    for _ in range(args.steps):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.mse_loss(model(x).float(), target)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
    # One Triton kernel, two dtypes, alternating.
    a32 = torch.randn(1 << 22, device=dev)
    b32 = torch.randn(1 << 22, device=dev)
    a16, b16 = a32.bfloat16(), b32.bfloat16()
    for _ in range(4):
        scale_add(a32, b32)
        scale_add(a16, b16)
    # Inference with a sequence length that changes at every call.
    model.eval()
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        for i in range(args.infer_calls):
            s = 256 + 128 * ((i * 5) % 7)
            model(torch.randn(2, s, 1024, device=dev))
    torch.cuda.synchronize()
    print(f"work_keys_loop: {args.steps} steps, {args.infer_calls} inference calls")


if __name__ == "__main__":
    main()
