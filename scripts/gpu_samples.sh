#!/usr/bin/env bash
# The samples' GPU work in one call (device tool, the build carried): their gpu tests,
# then each sample recorded under `flopline run` at the sizes the bundled traces use
# (samples/traces/), and the FLOP/s table of every trace last. Logs and traces go to $OUT.
#   Build here:  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLOPLINE_BUILD_VIEWER=OFF
#                cmake --build build-gpu
#   Run there:   scripts/gpu_samples.sh [--no-tests] [--no-big]
#                (--no-big skips the 46000^3 matmuls of the classic experiment)
# Exits 1 when a gpu test failed or a sample exited non-zero.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${FLOPLINE_GPU_BUILD:-$root/build-gpu}"
OUT="${OUT:-$root/gpu-out}"
tests=1 big=1
for a in "$@"; do
  case "$a" in
    --no-tests) tests=0 ;;
    --no-big) big=0 ;;
    -h|--help) sed -n 2,8p "$0"; exit 0 ;;
    *) echo "gpu_samples.sh: unknown argument $a" >&2; exit 2 ;;
  esac
done
mkdir -p "$OUT/logs" "$OUT/traces"
failures=0
export PYTHONUNBUFFERED=1 TORCHINDUCTOR_COMPILE_THREADS=1
source "$root/scripts/gpu_env.sh"
flopline="$build/profiler/flopline"
samples="$build/samples"

gpu="$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
tag="$(echo "$gpu" | grep -oiE 'H100|H200|A100|B200|L40S' | head -1 | tr 'A-Z' 'a-z')"
tag="${tag:-gpu}"
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv,noheader
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)' 2>&1
} | tee "$OUT/machine.txt"

if [ "$tests" = 1 ]; then
  echo "== sample gpu tests"
  FLOPLINE_GPU_TEST_OUT="$OUT/test-traces" "$build/tests/gpu/samples/gpu_sample_tests" > "$OUT/logs/sample_tests.log" 2>&1
  rc=$?
  grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED) +\]|Failure|error:|skipped:" "$OUT/logs/sample_tests.log"
  case "$rc" in
    0) ;;
    77) echo "   sample gpu tests: all skipped (see the log)" ;;
    *) echo "   sample gpu tests: exit $rc"; failures=$((failures + 1)) ;;
  esac
  rm -rf "$OUT/test-traces"
fi

# record NAME ARGS...: `flopline run` the command into traces/NAME.json.gz, its output in logs/NAME.log.
record() {
  local name="$1"; shift
  echo "== $name: $*"
  local t0=$(date +%s)
  "$flopline" run -o "$OUT/traces/$name.json.gz" -- "$@" > "$OUT/logs/$name.log" 2>&1
  local rc=$?
  echo "   exit $rc after $(( $(date +%s) - t0 )) s; $(grep -c . "$OUT/logs/$name.log") lines of output"
  [ "$rc" = 0 ] || { tail -20 "$OUT/logs/$name.log"; failures=$((failures + 1)); }
}

record "matmul_bench_${tag}_tf32_8192" "$samples/matmul_bench" --size 8192 --provider all --dtype tf32 --reps 3 --seed 1 --validate
record "matmul_bench_${tag}_bf16_8192" "$samples/matmul_bench" --size 8192 --provider all --dtype bf16 --reps 3 --seed 1 --validate
if [ "$big" = 1 ]; then
  record "matmul_bench_${tag}_tf32_46000" "$samples/matmul_bench" --size 46000 --provider all --dtype tf32 --seed 1
  record "matmul_bench_${tag}_fp32_46000" "$samples/matmul_bench" --size 46000 --provider all --dtype fp32 --seed 1
fi
record "fused_softmax_bench_${tag}" "$samples/fused_softmax_bench" --seed 1
record "fused_softmax_bench_${tag}_rows" "$samples/fused_softmax_bench" --dim rows --sizes 512,2048,4096 --seed 1
record "vector_add_${tag}" "$samples/vector_add"
record "plain_cuda_${tag}" "$samples/plain_cuda"
record "triton_samples_${tag}" python3 "$root/samples/python/triton_samples.py"

echo
echo "== tables"
for t in "$OUT"/traces/*.json.gz; do
  echo "--- $(basename "$t") ($(stat -c %s "$t") bytes)"
  "$flopline" stats "$t" --by op --top 12 2>&1
done | tee "$OUT/tables.txt"

# Back to the caller as one archive (the device tool returns a limited number of files).
tar czf "$OUT/samples-out.tgz" -C "$OUT" traces logs && rm -rf "$OUT/traces" "$OUT/logs"

echo
echo "== summary"
tar xzf "$OUT/samples-out.tgz" -O --wildcards 'logs/*.log' \
  | grep -E "^\[  (PASSED|FAILED) |Matmul completed|Validation|^builtin|^cublas|fastest|test: max abs|triton_samples: (ok|fused)"
if [ "$failures" != 0 ]; then
  echo "gpu_samples.sh: $failures failed (tests or samples; see above)" >&2
  exit 1
fi
