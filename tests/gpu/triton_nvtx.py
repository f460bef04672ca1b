"""Run under `flopline run` by gpu_capture_tests (Capture.TritonKernelsInsideTheirNvtxRanges).

A hand-written Triton kernel launched 10 times inside one NVTX range whose message
carries its FLOP and byte counts (docs/NVTX.md), and a torch.compile'd function (whose
generated Triton kernels and cuBLAS matmul) run 5 times inside another range. Nothing
here knows flopline: the ranges are plain torch.cuda.nvtx ranges.
"""
import torch
import triton
import triton.language as tl


@triton.jit
def flopline_add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def main():
    n = 1 << 24
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda")
    out = torch.full_like(x, float("nan"))
    grid = (triton.cdiv(n, 1024),)
    flopline_add_kernel[grid](x, y, out, n, BLOCK=1024)  # compiles outside the range
    torch.cuda.synchronize()
    reps = 10
    # One FLOP per element per launch; 12 bytes per element per launch.
    with torch.cuda.nvtx.range(f"triton_add [flops={reps * n} bytes={reps * 12 * n}]"):
        for _ in range(reps):
            flopline_add_kernel[grid](x, y, out, n, BLOCK=1024)
        torch.cuda.synchronize()
    torch.testing.assert_close(out, x + y)

    @torch.compile
    def softmax_matmul(a, b):
        return torch.softmax(a @ b, dim=-1) * 2.0

    a = torch.randn(1024, 1024, device="cuda")
    b = torch.randn(1024, 1024, device="cuda")
    softmax_matmul(a, b)  # compiles outside the range
    torch.cuda.synchronize()
    with torch.cuda.nvtx.range("compiled_softmax_matmul"):
        for _ in range(5):
            r = softmax_matmul(a, b)
        torch.cuda.synchronize()
    torch.testing.assert_close(r, torch.softmax(a @ b, dim=-1) * 2.0, rtol=1e-2, atol=1e-3)
    print("triton_nvtx: ok")


if __name__ == "__main__":
    main()
