#!/usr/bin/env bash
# Copies the GPU executables of build-gpu into build-gpu-run/ (same layout) so a device
# call carries only what it runs: the whole build folder is over the carry limit. The
# capture library (profiler/libflopline.so) goes too; run with
# LD_LIBRARY_PATH=build-gpu-run/profiler, since the build's rpath names this machine's path.
#   Usage: scripts/gpu_pack.sh [TARGET_PATH...]   (paths relative to build-gpu)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
case "${1:-}" in -h|--help) sed -n 2,6p "$0"; exit 0 ;; esac
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(tests/gpu/kernels/gpu_kernel_tests bench/kernels/bench_matmul
                                     bench/kernels/bench_softmax bench/kernels/bench_elementwise)
targets+=(profiler/libflopline.so)
rm -rf "$root/build-gpu-run"
for t in "${targets[@]}"; do
  [ -e "$root/build-gpu/$t" ] || { echo "gpu_pack.sh: build-gpu/$t is not built" >&2; exit 1; }
  mkdir -p "$root/build-gpu-run/$(dirname "$t")"
  cp "$root/build-gpu/$t" "$root/build-gpu-run/$t"
done
du -sh "$root/build-gpu-run"
