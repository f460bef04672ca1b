"""Records the torch.profiler (Kineto) traces that test flopline's per-op GPU time and
FLOPs against PyTorch's own `key_averages()`, and saves those numbers beside them.

Usage: python3 record_torch_profiler_ops.py OUTDIR [--reps N]

Four small traces, each of the same step (aten::mm, aten::linear -> aten::addmm,
aten::bmm, aten::conv2d, inside a record_function range), recorded with
record_shapes=True:

  torch_profiler_fp32_flops.json.gz   fp32, with_flops=True
  torch_profiler_bf16_flops.json.gz   bf16 autocast, with_flops=True
  torch_profiler_fp32_shapes.json.gz  fp32, with_flops=False (FLOPs only from shapes)
  torch_profiler_bf16_shapes.json.gz  bf16 autocast, with_flops=False

and torch_profiler_key_averages.json: for every trace, key_averages() of the same
profiler run (count, flops, self and total device time, CPU times) and, for the four
ops the test compares, every instance (prof.events()). Times are PyTorch's
microseconds, as floats.

The fp32 run turns TF32 off for cuBLAS and cuDNN, so "float" inputs really ran as fp32
and % of peak is measured against the fp32 peak.
"""
import argparse
import gzip
import json
import os
import shutil
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile, record_function

COMPARED_OPS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::conv2d", "aten::linear",
                "aten::convolution")


def make_step(dev):
    torch.manual_seed(0)
    a = torch.randn(256, 128, device=dev)
    b = torch.randn(128, 192, device=dev)
    lin = torch.nn.Linear(128, 96).to(dev)
    x = torch.randn(64, 128, device=dev)  # 2-D input: linear runs as aten::addmm
    p = torch.randn(8, 64, 32, device=dev)
    q = torch.randn(8, 32, 48, device=dev)
    conv = torch.nn.Conv2d(16, 32, kernel_size=3, padding=1).to(dev)
    img = torch.randn(4, 16, 32, 32, device=dev)

    def step():
        with record_function("flopline_step"):
            torch.mm(a, b)
            lin(x)
            torch.bmm(p, q)
            conv(img)

    return step


def first(obj, *names):
    for n in names:
        v = getattr(obj, n, None)
        if v is not None:
            return v
    return None


def averages(prof):
    rows = []
    for e in prof.key_averages():
        rows.append({
            "key": e.key,
            "count": e.count,
            "flops": e.flops,
            "self_device_time_total_us": first(e, "self_device_time_total",
                                               "self_cuda_time_total"),
            "device_time_total_us": first(e, "device_time_total", "cuda_time_total"),
            "self_cpu_time_total_us": e.self_cpu_time_total,
            "cpu_time_total_us": e.cpu_time_total,
            "device_type": str(e.device_type),
        })
    return rows


def instances(prof):
    rows = []
    for e in prof.events():
        if e.name not in COMPARED_OPS:
            continue
        rows.append({
            "name": e.name,
            "id": e.id,
            "thread": e.thread,
            "start_us": e.time_range.start,
            "end_us": e.time_range.end,
            "flops": e.flops,
            "input_shapes": e.input_shapes,
            "self_device_time_total_us": first(e, "self_device_time_total",
                                               "self_cuda_time_total"),
            "device_time_total_us": first(e, "device_time_total", "cuda_time_total"),
            "kernels": [{"name": k.name, "duration_us": k.duration} for k in e.kernels],
        })
    return rows


def record(outdir, name, dtype, with_flops, reps, dev):
    fp32 = dtype == "fp32"
    torch.backends.cuda.matmul.allow_tf32 = not fp32
    torch.backends.cudnn.allow_tf32 = not fp32
    step = make_step(dev)

    def run():
        if fp32:
            step()
        else:
            with torch.autocast("cuda", dtype=torch.bfloat16):
                step()

    for _ in range(3):  # cuBLAS/cuDNN heuristics and the caching allocator warm up
        run()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 record_shapes=True, with_flops=with_flops) as prof:
        for _ in range(reps):
            run()
        torch.cuda.synchronize()
    fd, tmp = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    prof.export_chrome_trace(tmp)
    path = os.path.join(outdir, name)
    with open(tmp, "rb") as src, gzip.open(path, "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    os.remove(tmp)
    print("wrote", path, os.path.getsize(path), "bytes")
    return {
        "dtype": dtype,
        "autocast": not fp32,
        "with_flops": with_flops,
        "record_shapes": True,
        "reps": reps,
        "key_averages": averages(prof),
        "instances": instances(prof),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--reps", type=int, default=3)
    args = ap.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    dev = torch.device("cuda")
    out = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "device": torch.cuda.get_device_name(),
        "script": "tests/data/record_torch_profiler_ops.py",
        "traces": {},
    }
    for dtype in ("fp32", "bf16"):
        for with_flops in (True, False):
            name = f"torch_profiler_{dtype}_{'flops' if with_flops else 'shapes'}.json.gz"
            out["traces"][name] = record(args.outdir, name, dtype, with_flops, args.reps, dev)
    path = os.path.join(args.outdir, "torch_profiler_key_averages.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print("wrote", path, "on", out["device"], "torch", out["torch"])


if __name__ == "__main__":
    main()
