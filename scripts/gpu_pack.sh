#!/usr/bin/env bash
# Copies the GPU executables of build-gpu into build-gpu-run/ (same layout) so a device
# call carries only what it runs: the whole build folder is over the carry limit. The
# capture library (profiler/libflopline.so) goes too; run with
# LD_LIBRARY_PATH=build-gpu-run/profiler, since the build's rpath names this machine's path.
#   Usage: scripts/gpu_pack.sh [TARGET_PATH...]   (paths relative to build-gpu)
#          scripts/gpu_pack.sh --slim   build-gpu-slim/: the build tree less objects,
#            static libraries, benchmarks (but the floor library of the overhead
#            benchmark), CMake's own files and the CPU-only test
#            executables (unit, viewer: not labelled gpu; about 56 MB), for the
#            whole `ctest -L gpu` there (carry build-gpu-slim; the tests record
#            build-gpu's absolute paths, and the benchmarks of gpu_check.sh are left out):
#              ln -s build-gpu-slim build-gpu; root=$PWD build=$PWD/build-gpu
#              source scripts/gpu_env.sh; (cd build-gpu && ctest -L gpu --output-on-failure)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
case "${1:-}" in -h|--help) sed -n 2,12p "$0"; exit 0 ;; esac
if [ "${1:-}" = --slim ]; then
  rm -rf "$root/build-gpu-slim"
  mkdir -p "$root/build-gpu-slim"
  (cd "$root/build-gpu" &&
   find . -type f ! -name '*.o' ! -name '*.a' \( ! -path './bench/*' -o -name 'libflopline_floor.so' \) \
     ! -path '*/CMakeFiles/*' ! -name '*.ninja' \
     ! -name '.ninja*' ! -path './tests/flopline_unit_tests' ! -path './tests/viewer/flopline_viewer_core_tests' |
     tar -cf - -T - | tar -xf - -C "$root/build-gpu-slim")
  du -sh "$root/build-gpu-slim"
  exit 0
fi
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
