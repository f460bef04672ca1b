"""Run under `flopline run -o FILE` by gpu_run_tests (Runs.CompileWorkersWriteNoTrace).

torch.compile with several compile threads starts worker processes that load CUDA's
libraries but launch nothing; the script's own process runs the compiled function on
the GPU. Only the script's trace may be written, and it must be FILE.
"""
import os

os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "4")

import torch  # noqa: E402


@torch.compile
def f(x, y):
    return torch.softmax(x @ y, dim=-1) * 2.0 + 1.0


def main():
    x = torch.randn(512, 512, device="cuda")
    y = torch.randn(512, 512, device="cuda")
    for _ in range(5):
        z = f(x, y)
    torch.cuda.synchronize()
    print("sum", float(z.sum()))


if __name__ == "__main__":
    main()
