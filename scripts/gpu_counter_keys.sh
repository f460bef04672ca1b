#!/usr/bin/env bash
# The checks of counter work keys on a GPU machine (docs/COUNTERS.md), in one call:
#   cost   bench/train_loop.py (60 steps) uncounted and with default --counters: wall times
#   nccl   NCCL kernels' sizes and bandwidths (tests/gpu/nccl/check_collectives.py, 2 GPUs)
#   tests  the counters gpu tests (gpu_counter_tests), then default against --counters=all
#          launch by launch (work_keys_loop.py) and the DDP job (two GPUs)
#   measure  what one measurement costs against the device memory held
#          (bench/counters_measurement_cost.py, 0 and 16 GiB)
# Build here (scripts/gpu_counters.sh's header), carry build-gpu-slim; run there:
#   scripts/gpu_counter_keys.sh [cost] [nccl] [tests]      (logs and traces under $OUT)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ -e "$root/build-gpu" ] || ln -s build-gpu-slim "$root/build-gpu"
build="$root/build-gpu"
OUT="${OUT:-$root/gpu-out}"
source "$root/scripts/gpu_env.sh" >/dev/null
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
o=/tmp/flopline-keys; mkdir -p "$o" "$OUT"
fl="$build/profiler/flopline"
status=0
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(cost tests)
for part in "${parts[@]}"; do
  case "$part" in
  cost)
    t0=$(date +%s.%N)
    timeout 120 "$fl" run --no-summary -o "$o/plain.json" -- python3 "$root/bench/train_loop.py" --steps 60 --warmup 10 --label plain 2>&1 | grep train_loop
    t1=$(date +%s.%N)
    timeout 240 "$fl" run --counters -o "$o/counted.json" -- python3 "$root/bench/train_loop.py" --steps 60 --warmup 10 --label counted > "$o/counted.log" 2>&1
    t2=$(date +%s.%N)
    grep -E "train_loop|counters" "$o/counted.log"
    # How many launches each metric set measured, and how many were incomplete.
    python3 -c "import json,sys; m=json.load(open(sys.argv[1])).get('flopline',{}); [print(k+':',v) for k,v in m.items() if k.startswith('counters') and ('passes' in k or 'incomplete' in k or k=='counters' or 'measured' in k or 'time' in k)]" "$o/counted.json" | tee -a "$OUT/summary.txt"
    python3 -c "print('train_loop wall s: uncounted %.1f, default --counters %.1f (%.2fx)' % ($t1-$t0, $t2-$t1, ($t2-$t1)/($t1-$t0)))" | tee -a "$OUT/summary.txt"
    [ -e "$o/counted.json" ] && gzip -c "$o/counted.json" > "$OUT/loop-counted.json.gz"
    ;;
  nccl)
    timeout 200 python3 "$root/tests/gpu/nccl/check_collectives.py" --flopline "$fl" --out "$o/nccl" --timeout 180 2>&1 | tee -a "$OUT/summary.txt" || status=1
    (cd "$o/nccl/traces" && for f in *.json; do gzip -c "$f" > "$OUT/nccl-$f.gz"; done)
    ;;
  tests)
    (cd "$build/tests/gpu/counters" && timeout 200 ./gpu_counter_tests --gtest_brief=1 2>&1 | tail -15) | tee -a "$OUT/summary.txt"
    # The GPUs this run may use: CUDA_VISIBLE_DEVICES's list where it is set.
    if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then gpus=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | wc -l)
    else gpus=$(nvidia-smi -L | wc -l); fi
    if [ "$gpus" -ge 2 ]; then
      timeout 100 python3 "$root/bench/counters_default_vs_all.py" --flopline "$fl" --out "$o/ddp" --ddp --timeout 90 2>&1 | tail -4 | tee -a "$OUT/summary.txt" || status=1
    else
      echo "DDP under --counters: skipped, one GPU here" | tee -a "$OUT/summary.txt"
    fi
    timeout 260 python3 "$root/bench/counters_default_vs_all.py" --flopline "$fl" --out "$o/dva" --min-pct 99 --timeout 240 --top 8 2>&1 | tee -a "$OUT/summary.txt" || status=1
    (cd "$o" && gzip -c dva/on.json > "$OUT/on.json.gz"; gzip -c dva/all.json > "$OUT/all.json.gz")
    ;;
  measure)
    timeout 400 python3 "$root/bench/counters_measurement_cost.py" --flopline "$fl" --gib 0,16 2>&1 | tail -6 | tee -a "$OUT/summary.txt"
    ;;
  esac
done
echo "== summary"; cat "$OUT/summary.txt"
exit $status
