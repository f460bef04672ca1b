"""bench/counters_step_cost.py: kernels and launch calls are given to the step whose
NVTX range began last before them, the earlier steps are skipped, and a kernel that
runs longer in the counted run is named with the time it adds a step."""
import json
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "counters_step_cost.py")


def trace(kernel_us, call_us):
    """Four steps 1000 us apart, each with one launch call and two kernels: gemm
    (kernel_us) and copy (5 us); a kernel before the first step belongs to none."""
    events = [{"ph": "X", "cat": "kernel", "name": "warmup", "ts": 1.0, "dur": 500.0}]
    for i in range(4):
        t0 = 100.0 + 1000.0 * i
        events += [
            {"ph": "X", "cat": "user_annotation", "name": f"step {i}", "ts": t0, "dur": 900.0},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": t0 + 1, "dur": call_us},
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaMalloc", "ts": t0 + 20, "dur": 50.0},
            {"ph": "X", "cat": "kernel", "name": "gemm", "ts": t0 + 10, "dur": kernel_us},
            {"ph": "X", "cat": "kernel", "name": "copy", "ts": t0 + 400, "dur": 5.0},
        ]
    return {"traceEvents": events}


def main():
    with tempfile.TemporaryDirectory() as d:
        paths = []
        for label, kernel_us, call_us in (("plain", 100.0, 4.0), ("counted", 150.0, 24.0)):
            p = os.path.join(d, label + ".json")
            with open(p, "w") as f:
                json.dump(trace(kernel_us, call_us), f)
            paths.append(p)
        out = subprocess.run([sys.executable, SCRIPT, *paths, "--from", "0.5"],
                             capture_output=True, text=True, check=True).stdout
        print(out)
        rows = {line.split()[0]: line.split() for line in out.splitlines()
                if line.startswith(("plain ", "counted "))}
        # The later half of the synthetic steps, with the kernel and call times written above.
        assert rows["plain"][1:] == ["2", "0.90", "0.105", "0.004", "1", "4.00"], rows["plain"]
        assert rows["counted"][1:] == ["2", "0.90", "0.155", "0.024", "1", "24.00"], rows["counted"]
        grown = [line for line in out.splitlines() if line.rstrip().endswith("gemm")]
        assert grown and grown[0].split()[0] == "50.0", grown
        assert "warmup" not in out.split("grew most")[1].split("launches in")[0]
        missing = subprocess.run([sys.executable, SCRIPT, paths[0], os.path.join(d, "none.json")],
                                 capture_output=True, text=True)
        assert missing.returncode != 0 and "no such file" in missing.stderr, missing
    print("ok")


if __name__ == "__main__":
    main()
