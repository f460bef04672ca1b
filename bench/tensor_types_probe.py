"""Kernels whose tensor-pipe instructions are of known types, for Nsight Compute.

Run under `ncu --metrics ...` (scripts/gpu_ncu_tensor_types.sh): a normal-distribution
fill and a reduction (HFMA2 on the tensor pipe, no tensor op), a bf16 GEMM (GMMA on a
Hopper), a small batched fp16 GEMM (mma.sync HMMA where cuBLAS picks such a kernel), an
fp64 GEMM (DMMA) and an int8 one (IMMA or integer GMMA). The question: does HMMA's count
hold GMMA's and HFMA2's (function_metrics.h assumes it), and where does integer GMMA go.
"""
import torch

torch.manual_seed(0)
dev = "cuda"
x = torch.randn(1 << 22, device=dev)  # normal distribution: HFMA2
s = x.sum()  # reduction: HFMA2
a = torch.randn(2048, 2048, device=dev, dtype=torch.bfloat16)
c = a @ a  # bf16 GEMM: GMMA
h = torch.randn(64, 48, 40, device=dev, dtype=torch.float16)
hb = torch.bmm(h, h.transpose(1, 2))  # small batched fp16: possibly mma.sync
d = torch.randn(512, 512, device=dev, dtype=torch.float64)
dd = d @ d  # fp64: DMMA
try:
    i8 = torch.randint(-8, 8, (1024, 1024), device=dev, dtype=torch.int8)
    ii = torch._int_mm(i8, i8)  # int8: IMMA or integer GMMA
except Exception as e:  # an older PyTorch without _int_mm on this GPU
    print(f"int8 GEMM skipped: {e}")
torch.cuda.synchronize()
print("done", float(s), float(c.float().sum()), float(hb.float().sum()), float(dd.sum()))
