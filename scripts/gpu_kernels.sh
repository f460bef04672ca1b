#!/usr/bin/env bash
# The kernels' GPU work in one call (device tool, build-gpu carried): the gpu tests of
# the kernels, the compiler's resource report and the tensor-core instructions in the
# SASS, then the benchmarks against cuBLAS, PyTorch's softmax(A @ B) and the copy
# bandwidth; a short table last.
#   Build here:  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLOPLINE_BUILD_VIEWER=OFF
#                cmake --build build-gpu --target gpu_kernel_tests bench_matmul bench_softmax bench_elementwise
#   Carry:       scripts/gpu_pack.sh (the executables and libflopline.so: build-gpu is
#                over the carry limit), then run with FLOPLINE_GPU_BUILD=build-gpu-run
#   Run there:   scripts/gpu_kernels.sh [--quick] [--big] [--no-tests]
# Exits 1 when a kernel gpu test failed or a benchmark exited non-zero. Before/after
# timings of two builds: scripts/gpu_kernels_ab.sh.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${FLOPLINE_GPU_BUILD:-$root/build-gpu}"
OUT="${OUT:-$root/gpu-out}"
mkdir -p "$OUT"
quick="" big="" tests=1 failures=0
for a in "$@"; do
  case "$a" in
    --quick) quick="--quick" ;;
    --big) big="--big" ;;
    --no-tests) tests=0 ;;
    -h|--help) sed -n 2,10p "$0"; exit 0 ;;
    *) echo "gpu_kernels.sh: unknown argument $a" >&2; exit 2 ;;
  esac
done
export PATH="/usr/local/cuda/bin:$PATH"
[ -e /usr/local/cuda/lib64/libcublas.so.13 ] && export LD_LIBRARY_PATH="/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The build's rpath names the machine it was built on: find libflopline.so beside it.
export LD_LIBRARY_PATH="$build/profiler${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$OUT/machine.txt"

if [ "$tests" = 1 ]; then
  echo "== kernel gpu tests"
  "$build/tests/gpu/kernels/gpu_kernel_tests" > "$OUT/kernel_tests.log" 2>&1
  rc=$?
  grep -E "FAILED|PASSED|Failure|error|skipped:" "$OUT/kernel_tests.log" | head -40
  case "$rc" in
    0) ;;
    77) echo "kernel gpu tests: all skipped" ;;
    *) echo "kernel gpu tests: exit $rc"; failures=$((failures + 1)) ;;
  esac
fi

echo "== resource usage and tensor-core instructions"
# The kernels as linked into a benchmark (the library itself may not travel).
lib="$build/kernels/libflopline_kernels.a"
[ -e "$lib" ] || lib="$build/bench/kernels/bench_softmax"
if command -v cuobjdump >/dev/null; then
  cuobjdump --dump-resource-usage "$lib" > "$OUT/resource_usage.txt" 2>&1
  cuobjdump -sass "$lib" > "$OUT/sass.txt" 2>&1
  grep -E "Function|REG|STACK|SHARED|LOCAL" "$OUT/resource_usage.txt" | head -200 > "$OUT/resource_summary.txt"
  echo "HGMMA instructions: $(grep -c HGMMA "$OUT/sass.txt")  HMMA: $(grep -c HMMA "$OUT/sass.txt")  UTMALDG: $(grep -c UTMALDG "$OUT/sass.txt")" | tee "$OUT/sass_counts.txt"
  gzip -f "$OUT/sass.txt"
else
  echo "cuobjdump not found" | tee "$OUT/sass_counts.txt"
fi

echo "== benchmarks"
: > "$OUT/bench.txt"
for b in bench_matmul bench_softmax bench_elementwise; do
  exe="$build/bench/kernels/$b"
  [ -x "$exe" ] || { echo "missing $b" | tee -a "$OUT/bench.txt"; continue; }
  extra="$quick"
  [ "$b" = bench_matmul ] && extra="$quick $big"
  timeout 300 "$exe" $extra 2>&1 | tee -a "$OUT/bench.txt"
  rc=${PIPESTATUS[0]}
  [ "$rc" = 0 ] || { echo "$b: exit $rc" | tee -a "$OUT/bench.txt"; failures=$((failures + 1)); }
done
# The fused softmax with bf16 output at the anchor shapes.
if [ -x "$build/bench/kernels/bench_softmax" ]; then
  timeout 300 "$build/bench/kernels/bench_softmax" $quick --out bf16 --shape 4096 4096 4096 --shape 8192 8192 1024 \
    --shape 16384 2048 128 --shape 16384 1024 64 2>&1 | tee -a "$OUT/bench.txt"
fi

# PyTorch's own softmax(A @ B) pair at the same anchors, where PyTorch is installed.
if python3 -c "import torch" 2>/dev/null; then
  timeout 300 python3 "$root/bench/kernels/bench_torch_softmax.py" 2>&1 | tee -a "$OUT/bench.txt"
fi

echo
echo "== summary"
grep -E "PASSED|FAILED|tests ran" "$OUT/kernel_tests.log" 2>/dev/null
cat "$OUT/sass_counts.txt"
grep -E "^bench=" "$OUT/bench.txt" | sed -E 's/bench=//' | column -t 2>/dev/null || grep -E "^bench=" "$OUT/bench.txt"
if [ "$failures" != 0 ]; then
  echo "gpu_kernels.sh: $failures failed (tests or benchmarks; see above)" >&2
  exit 1
fi
