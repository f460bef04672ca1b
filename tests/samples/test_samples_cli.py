#!/usr/bin/env python3
"""Every sample answers --help (exit 0, a usage text naming its options) and refuses an
unknown option with a message and exit 2; on a machine without a GPU a real run says
"no CUDA device" and exits 3 instead of crashing. (Runs on a GPU machine are the gpu
tests in tests/gpu/samples.)
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import check_support  # noqa: E402

OPTIONS = {  # sample -> options its --help must name
    "matmul_bench": ["--size", "--provider", "--dtype", "--validate", "--seed", "--skip-run"],
    "fused_softmax_bench": ["--sizes", "--provider", "--dim", "--dtype", "--reps"],
    "vector_add": ["--sizes", "--blocks", "--reps"],
    "plain_cuda": ["--iters", "--n", "--gemm"],
}


def run(argv, timeout=120):
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
    return r.returncode, r.stdout, r.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True, help="folder with the sample binaries")
    ap.add_argument("--python-sample", required=True)
    a = ap.parse_args()
    passed = failed = 0

    def check(cond, what):
        nonlocal passed, failed
        print(("ok: " if cond else "FAIL: ") + what)
        passed, failed = passed + bool(cond), failed + (not cond)

    gpu = check_support.visible_gpus() > 0
    for sample, options in OPTIONS.items():
        exe = f"{a.bin}/{sample}"
        rc, out, err = run([exe, "--help"])
        check(rc == 0 and out.startswith("Usage: " + sample), f"{sample} --help (exit {rc}) {err[:200]}")
        for o in options:
            check(o in out, f"{sample} --help names {o}")
        rc, out, err = run([exe, "--no-such-option"])
        check(rc == 2 and "--no-such-option" in err, f"{sample} refuses an unknown option (exit {rc}: {err.strip()[:200]})")
        if sample in ("matmul_bench", "fused_softmax_bench"):
            rc, out, err = run([exe, "--dtype", "fp8"])
            check(rc == 2 and "--dtype" in err, f"{sample} refuses --dtype fp8 (exit {rc}: {err.strip()[:200]})")
        if not gpu:
            rc, out, err = run([exe])
            check(rc == 3 and "no CUDA device" in err, f"{sample} without a GPU: exit {rc}, {err.strip()[:200]}")
    # The Python sample parses its own --help without a GPU; where torch or triton is
    # missing it fails naming that module (the one a plain import names), nothing else.
    probe_rc, _, probe_err = run([sys.executable, "-c", "import torch, triton"])
    rc, out, err = run([sys.executable, a.python_sample, "--help"])
    if probe_rc == 0:
        check(rc == 0 and "--sizes" in out, f"triton_samples.py --help (exit {rc}) {err.strip()[-200:]}")
    else:
        missing = probe_err.strip().splitlines()[-1] if probe_err.strip() else "?"
        check(rc != 0 and missing in err,
              f"triton_samples.py --help without torch/triton says {missing!r} (exit {rc}) {err.strip()[-200:]}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
