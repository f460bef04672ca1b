#!/usr/bin/env python3
"""`flopline stats --by op --cat cpu_op` on torch.profiler traces against PyTorch's own
key_averages() of the same runs.

tests/data/torch_profiler_*.json.gz and torch_profiler_key_averages.json were written by
tests/data/record_torch_profiler_ops.py on a GPU (fp32 and bf16 autocast; mm, linear ->
addmm, bmm, conv2d; with_flops on and off). For aten::mm, aten::addmm, aten::bmm and
aten::conv2d, flopline's row must have PyTorch's count, its FLOPs within 1% (from the
with_flops run of the same dtype: the trace itself carries no FLOPs, they come from the
shapes in both runs), its self GPU time within 2 ns per instance, and a TFLOP/s.
"""
import csv
import io
import json
import os
import subprocess
import sys

from cli_checker import Checker, script_args

OPS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::conv2d")


def main():
    a, _ = script_args(__doc__.splitlines()[0], "test_stats_torch_profiler")
    c = Checker()
    check = c.check

    with open(os.path.join(a.data, "torch_profiler_key_averages.json")) as f:
        ref = json.load(f)
    # PyTorch's CPU-side rows (key_averages also lists kernels and GPU annotations).
    averages = {name: {r["key"]: r for r in t["key_averages"] if r["device_type"].endswith("CPU")}
                for name, t in ref["traces"].items()}
    check(len(averages) == 4, f"four traces in the reference, {sorted(averages)}")
    for name, t in sorted(ref["traces"].items()):
        path = os.path.join(a.data, name)
        p = subprocess.run([a.flopline, "stats", path, "--by", "op", "--cat", "cpu_op", "--csv"],
                           capture_output=True, text=True, timeout=120)
        if not check(p.returncode == 0, f"{name}: stats exits 0 ({p.stderr.strip()[:300]})"):
            continue
        rows = {r["name"]: r for r in csv.DictReader(io.StringIO(p.stdout))}
        flops_run = f"torch_profiler_{t['dtype']}_flops.json.gz"
        for op in OPS:
            ours = rows.get(op)
            theirs = averages[name].get(op)
            with_flops = averages[flops_run].get(op)
            if not check(ours is not None and theirs is not None and with_flops is not None,
                         f"{name}: {op} in both tables"):
                continue
            count = int(ours["count"])
            check(count == theirs["count"], f"{name}: {op} count {count} vs PyTorch {theirs['count']}")
            expect_flops = float(with_flops["flops"])
            got = float(ours["flops"]) if ours["flops"] else 0.0
            check(expect_flops > 0 and abs(got - expect_flops) <= 0.01 * expect_flops,
                  f"{name}: {op} FLOPs {got} vs PyTorch {expect_flops}")
            self_ns = theirs["self_device_time_total_us"] * 1000.0
            check(abs(int(ours["self_ns"]) - self_ns) <= 2 * count,
                  f"{name}: {op} self {ours['self_ns']} ns vs PyTorch {self_ns:.1f} ns")
            check(ours["tflops"] != "" and float(ours["tflops"]) > 0,
                  f"{name}: {op} has a TFLOP/s ({ours['tflops']!r})")
            expect_precision = "bf16" if t["dtype"] == "bf16" else "fp32"
            check(ours["precision"] == expect_precision,
                  f"{name}: {op} precision {ours['precision']!r}, expected {expect_precision}")
            check(ours["flops_source"] == "shapes", f"{name}: {op} FLOPs from {ours['flops_source']!r}")
    print(f"{c.passed} passed, {c.failed} failed")
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
