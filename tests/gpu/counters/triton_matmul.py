"""Run under `flopline run --counters` by gpu_counter_tests (Counters.TritonMatmulCountsTwoMnk).

The Triton tutorial's blocked fp16 matmul at two shapes, each call inside an NVTX range
"triton matmul MxNxK" (plain torch.cuda.nvtx: nothing here knows flopline). The kernels
compile outside the ranges.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    a = a_ptr + rm[:, None] * sam + rk[None, :] * sak
    b = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        ka = (k * BK + rk) < K
        x = tl.load(a, mask=(rm[:, None] < M) & ka[None, :], other=0.0)
        y = tl.load(b, mask=ka[:, None] & (rn[None, :] < N), other=0.0)
        acc += tl.dot(x, y)
        a += BK * sak
        b += BK * sbk
    c = c_ptr + rm[:, None] * scm + rn[None, :] * scn
    tl.store(c, acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


def matmul(a, b):
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=torch.float16)
    grid = (triton.cdiv(M, 128), triton.cdiv(N, 128))
    matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                        c.stride(0), c.stride(1), BM=128, BN=128, BK=64, num_warps=8, num_stages=3)
    return c


def main():
    torch.manual_seed(0)
    for m, n, k in ((1024, 1024, 1024), (2048, 1536, 768)):
        a = torch.randn(m, k, device="cuda", dtype=torch.float16)
        b = torch.randn(k, n, device="cuda", dtype=torch.float16)
        matmul(a, b)  # compiles outside the range
        torch.cuda.synchronize()
        with torch.cuda.nvtx.range(f"triton matmul {m}x{n}x{k}"):
            c = matmul(a, b)
            torch.cuda.synchronize()
        err = (c.float() - a.float() @ b.float()).abs().max().item()
        print(f"triton matmul {m}x{n}x{k}: max abs error {err:.3g}")
        assert err < 1.0, "the Triton matmul is wrong"


if __name__ == "__main__":
    main()
