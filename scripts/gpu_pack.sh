#!/usr/bin/env bash
# Copies the GPU executables of build-gpu into build-gpu-run/ (same layout) so a device
# call carries only what it runs: the whole build folder is over the carry limit. The
# capture library (profiler/libflopline.so) goes too; run with
# LD_LIBRARY_PATH=build-gpu-run/profiler, since the build's rpath names this machine's path.
#   Usage: scripts/gpu_pack.sh [--from BUILD] [--to DIR] [--xz] [TARGET_PATH...]
#            (paths relative to BUILD, build-gpu by default; DIR build-gpu-run by default;
#            the executables are stripped of host symbols, the device code stays;
#            --xz compresses each file to FILE.xz, a fifth of the size, which
#            scripts/gpu_unpack.sh DIR restores on the device)
#          scripts/gpu_pack.sh --slim   build-gpu-slim/: the build tree less objects,
#            static libraries, benchmarks (but the floor library of the overhead
#            benchmark and the counters_pass_cost experiment, binary and library), CMake's own files and the CPU-only test
#            executables (unit, viewer: not labelled gpu; about 56 MB), for the
#            whole `ctest -L gpu` there (carry build-gpu-slim; the tests record
#            build-gpu's absolute paths, and the benchmarks of gpu_check.sh are left out):
#              ln -s build-gpu-slim build-gpu; root=$PWD build=$PWD/build-gpu
#              source scripts/gpu_env.sh; (cd build-gpu && ctest -L gpu --output-on-failure)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
case "${1:-}" in -h|--help) sed -n 2,14p "$0"; exit 0 ;; esac
from="$root/build-gpu" to="$root/build-gpu-run" xz=0
while [ $# -gt 0 ]; do
  case "$1" in
    --from) from="$(cd "$2" && pwd)"; shift 2 ;;
    --to) mkdir -p "$2" && to="$(cd "$2" && pwd)"; shift 2 ;;
    --xz) xz=1; shift ;;
    *) break ;;
  esac
done
if [ "${1:-}" = --slim ]; then
  rm -rf "$root/build-gpu-slim"
  mkdir -p "$root/build-gpu-slim"
  (cd "$root/build-gpu" &&
   find . -type f ! -name '*.o' ! -name '*.a' \( ! -path './bench/*' -o -name 'libflopline_floor.so' -o -name 'counters_pass_cost' -o -name 'libcounters_pass_cost.so' \) \
     ! -path '*/CMakeFiles/*' ! -name '*.ninja' \
     ! -name '.ninja*' ! -path './tests/flopline_unit_tests' ! -path './tests/viewer/flopline_viewer_core_tests' \
     ! -path './tests/flopline_unit_tests\[1\]_tests.cmake' ! -name compile_commands.json |
     tar -cf - -T - | tar -xf - -C "$root/build-gpu-slim")
  # Symbols no loader needs: the carry limit is 64 MiB.
  find "$root/build-gpu-slim" -type f -perm -u+x -exec sh -c \
    'file -b "$1" | grep -q ELF && strip --strip-unneeded "$1"' _ {} \;
  du -sh "$root/build-gpu-slim"
  exit 0
fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(tests/gpu/kernels/gpu_kernel_tests bench/kernels/bench_matmul
                                     bench/kernels/bench_softmax bench/kernels/bench_elementwise)
[ -e "$from/profiler/libflopline.so" ] && targets+=(profiler/libflopline.so)
case "$(basename "$to")" in build*) ;; *) echo "gpu_pack.sh: --to $to: the folder is replaced, so its name must start with build" >&2; exit 2 ;; esac
rm -rf "$to"
for t in "${targets[@]}"; do
  [ -e "$from/$t" ] || { echo "gpu_pack.sh: $from/$t is not built" >&2; exit 1; }
  mkdir -p "$to/$(dirname "$t")"
  cp "$from/$t" "$to/$t"
  case "$t" in *.so) ;; *) strip --strip-unneeded "$to/$t" 2>/dev/null || true ;; esac
  [ "$xz" = 1 ] && xz -T0 -6 "$to/$t"
done
du -sh "$to"
