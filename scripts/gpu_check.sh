#!/usr/bin/env bash
# Everything that must run on a GPU machine, in one call: the gpu-labelled tests of a
# build made elsewhere and carried along (build-gpu), then the capture-overhead
# benchmark (no profiler / CUPTI alone / flopline, twice each) and the time from exit
# to trace on disk for 1M kernels. Logs and traces go to $OUT; a short table is
# printed last. Exits 1 when a gpu test failed (the benchmarks still run).
#   Build here:  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release \
#                  -DFLOPLINE_BUILD_VIEWER=OFF && cmake --build build-gpu
#   Run there:   scripts/gpu_check.sh            (device tool: carry build-gpu)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${FLOPLINE_GPU_BUILD:-$root/build-gpu}"
OUT="${OUT:-$root/gpu-out}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1

source "$root/scripts/gpu_env.sh"

{
  echo "== machine"; date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  uname -r; nproc
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)' 2>&1
  echo "== libraries"
  ldd "$build/profiler/libflopline_inject.so" | grep -E "cupti|not found"
} 2>&1 | tee "$OUT/machine.txt"

export FLOPLINE_GPU_TEST_OUT="$OUT/traces"
mkdir -p "$FLOPLINE_GPU_TEST_OUT"
echo "== gpu tests"
(cd "$build" && ctest -L gpu --output-on-failure 2>&1) | tee "$OUT/ctest.log"
tests_rc=${PIPESTATUS[0]}
"$build/tests/gpu/gpu_capture_tests" --gtest_brief=0 --gtest_filter=Capture.Cublas* 2>&1 | grep "launch sites" | tee -a "$OUT/ctest.log"

echo "== capture overhead"
bench="$build/bench/bench_capture_overhead"
flopline="$build/profiler/flopline"
: > "$OUT/bench.txt"
for round in 1 2 3; do
  "$bench" none | tee -a "$OUT/bench.txt"
  "$bench" cupti | tee -a "$OUT/bench.txt"
  "$bench" cupti-sub | tee -a "$OUT/bench.txt"
  "$flopline" run --no-summary -o "$OUT/traces/bench.json" -- "$bench" flopline 2>>"$OUT/bench.err" \
    | grep '^mode=' | tee -a "$OUT/bench.txt"
done
"$bench" cupti-kernel | tee -a "$OUT/bench.txt"
"$flopline" run --no-summary --kinds kernel -o "$OUT/traces/bench.json" -- "$bench" flopline-kernel \
  2>>"$OUT/bench.err" | grep '^mode=' | tee -a "$OUT/bench.txt"
for round in 1 2; do
  python3 "$root/bench/bench_torch_overhead.py" none | tee -a "$OUT/bench.txt"
  python3 "$root/bench/bench_torch_overhead.py" torch 2>/dev/null | tee -a "$OUT/bench.txt"
  "$flopline" run --no-summary -o "$OUT/traces/torch_bench.json" -- \
    python3 "$root/bench/bench_torch_overhead.py" flopline 2>>"$OUT/bench.err" | grep '^torchmode=' | tee -a "$OUT/bench.txt"
done
# The same with every kind, query calls included.
"$flopline" run --no-summary --kinds all -o "$OUT/traces/torch_bench.json" -- \
  python3 "$root/bench/bench_torch_overhead.py" flopline-all 2>>"$OUT/bench.err" | grep '^torchmode=' | tee -a "$OUT/bench.txt"
"$flopline" run --no-summary --kinds kernel -o "$OUT/traces/torch_bench.json" -- \
  python3 "$root/bench/bench_torch_overhead.py" flopline-kernel 2>>"$OUT/bench.err" | grep '^torchmode=' | tee -a "$OUT/bench.txt"
echo "== exit to trace on disk, 1M kernels"
exit_line="$("$flopline" run --no-summary -o /tmp/flopline-1m.json -- "$bench" exit 1000000 2>>"$OUT/bench.err" | grep exit_at_ns)"
done_ns="$(date +%s%N)"
exit_ns="${exit_line##*exit_at_ns=}"
trace_mb="$(( $(stat -c %s /tmp/flopline-1m.json 2>/dev/null || echo 0) / 1048576 ))"
echo "exit_to_disk_ms=$(( (done_ns - exit_ns) / 1000000 )) trace_MB=$trace_mb" | tee -a "$OUT/bench.txt"
grep -h "dropped\|wrote" "$OUT/bench.err" | tail -3

echo "== calibrate, then a capture that uses the calibration"
"$flopline" calibrate 2>&1 | tee "$OUT/calibrate.txt"
cp ~/.cache/flopline/peaks-*.json "$OUT/" 2>/dev/null
"$flopline" run --no-summary -o "$OUT/traces/calibrated.json" -- "$build/tests/gpu/gpu_workload" launches 10 >/dev/null 2>&1
grep -o '"peakSource":"[a-z]*"' "$OUT/traces/calibrated.json" | tee -a "$OUT/calibrate.txt"

# Traces and logs back to the caller (at most a few files: one archive).
(cd "$OUT/traces" && ls -la > "$OUT/traces.txt" && \
  tar czf "$OUT/traces.tgz" --exclude='bench.json' --exclude='threads.json' --exclude='torch_bench.json' . 2>/dev/null)
rm -rf "$OUT/traces"

echo
echo "== summary"
grep -E "^\s*[0-9]+/[0-9]+ Test" "$OUT/ctest.log" | sed -E 's/ +/ /g'
grep -E "tests passed|tests failed" "$OUT/ctest.log"
awk '/^mode=/{for(i=1;i<=NF;i++){split($i,kv,"="); v[kv[1]]=kv[2]}
     printf "%-9s empty %7s us/launch   add %7s us/launch  %6s GB/s  records %s\n", v["mode"], v["empty_us_per_launch"], v["add_us_per_launch"], v["add_GBps"], v["records"]}' "$OUT/bench.txt"
grep '^torchmode=' "$OUT/bench.txt"
grep exit_to_disk "$OUT/bench.txt"
grep -E "TFLOP/s|TB/s|peakSource" "$OUT/calibrate.txt"
if [ "$tests_rc" != 0 ]; then
  echo "gpu_check.sh: gpu tests failed (ctest exit $tests_rc)" >&2
  exit 1
fi
