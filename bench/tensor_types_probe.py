"""Kernels whose tensor-pipe instructions are of known types, for Nsight Compute.

Run under `ncu --metrics ...` (scripts/gpu_ncu_tensor_types.sh): a normal-distribution
fill and a reduction (HFMA2 on the tensor pipe, no tensor op), a bf16 GEMM (GMMA on a
Hopper), a small batched fp16 GEMM (mma.sync HMMA where cuBLAS picks such a kernel), an
fp64 GEMM (DMMA), an int8 one (cuBLAS: IMMA), an fp8 one (FP8 GMMA) and a Triton int8
dot (integer GMMA). The questions: does HMMA's count hold GMMA's and HFMA2's
(function_metrics.h assumes it), and where do integer and FP8 GMMA go.
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
try:
    # fp8 GEMM: FP8 GMMA (qgmma) on a Hopper.
    f8 = torch.randn(1024, 1024, device=dev).to(torch.float8_e4m3fn)
    one = torch.tensor(1.0, device=dev)
    torch._scaled_mm(f8, f8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
except Exception as e:
    print(f"fp8 GEMM skipped: {e}")
try:
    # int8 tl.dot: integer GMMA (wgmma s8) on a Hopper, where cuBLAS's int8 path is WMMA.
    import triton
    import triton.language as tl

    @triton.jit
    def int8_dot(a_ptr, b_ptr, c_ptr, BLOCK: tl.constexpr):
        r = tl.arange(0, BLOCK)
        a = tl.load(a_ptr + r[:, None] * BLOCK + r[None, :])
        b = tl.load(b_ptr + r[:, None] * BLOCK + r[None, :])
        tl.store(c_ptr + r[:, None] * BLOCK + r[None, :], tl.dot(a, b))

    n = 128
    ia = torch.randint(-8, 8, (n, n), device=dev, dtype=torch.int8)
    ic = torch.empty(n, n, device=dev, dtype=torch.int32)
    int8_dot[(1,)](ia, ia, ic, BLOCK=n, num_warps=4)
except Exception as e:
    print(f"Triton int8 dot skipped: {e}")
torch.cuda.synchronize()
print("done", float(s), float(c.float().sum()), float(hb.float().sum()), float(dd.sum()))
