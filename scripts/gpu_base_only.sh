#!/usr/bin/env bash
# One single-GPU call: is flopline's measurement dear because a set of many passes was
# configured on the range profiler object (docs/results/2026-11-29-measurement-floor-h200.md,
# finding 4)? FLOPLINE_COUNTERS_BASE_ONLY=1 (an experiment for cost: tensor work is not
# counted) measures every launch with the two-pass base set and never configures the
# six-pass learning set. samples/vector_add and bench/train_loop.py (60 steps), default
# --counters against it: measurement costs (scripts/measurement_times.py) and wall times.
# Logs go into $OUT/base-only.tgz; the table is printed last.
#   Run there: ln -sfn build-gpu-slim build-gpu; scripts/gpu_base_only.sh
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work=/tmp/flopline-base-only
source "$root/scripts/gpu_round_lib.sh"
export CUDA_VISIBLE_DEVICES="${BASE_ONLY_GPU:-0}"
table="$work/logs/table.txt"
secs() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f} s')" "$1" "$2"; }
for base in 0 1; do
  FLOPLINE_COUNTERS_BASE_ONLY=$base FLOPLINE_COUNTERS_DEBUG=1 timeout 90 "$fl" run --counters \
    -o "$work/va-$base.json" -- "$build/samples/vector_add" --sizes 16777216 \
    --blocks 128,256,512,1024 --reps 4 > "$work/logs/va-$base.log" 2>&1
  note "vector_add, base only $base: exit $?"
  { echo "== vector_add, base only $base"
    python3 "$root/scripts/measurement_times.py" "$work/logs/va-$base.log"; } >> "$table" 2>&1
done
timeout 150 "$fl" run --no-summary -o "$work/warm.json" -- python3 "$root/bench/train_loop.py" \
  --steps 5 --warmup 10 --label warm-up > "$work/logs/warm-up.log" 2>&1
t0=$(date +%s.%N)
timeout 150 "$fl" run --no-summary -o "$work/plain.json" -- python3 "$root/bench/train_loop.py" \
  --steps 60 --warmup 10 --label plain > "$work/logs/train-plain.log" 2>&1
t1=$(date +%s.%N)
echo "== train_loop 60 steps uncounted: $(secs "$t0" "$t1")" >> "$table"
for base in 1 0; do
  t0=$(date +%s.%N)
  FLOPLINE_COUNTERS_BASE_ONLY=$base FLOPLINE_COUNTERS_DEBUG=1 timeout 240 "$fl" run --counters \
    -o "$work/train-$base.json" -- python3 "$root/bench/train_loop.py" --steps 60 --warmup 10 \
    --label "base-$base" > "$work/logs/train-$base.log" 2>&1
  rc=$?
  t2=$(date +%s.%N)
  note "train_loop, base only $base: exit $rc"
  { echo "== train_loop 60 steps, base only $base: $(secs "$t0" "$t2"), exit $rc"
    python3 "$root/scripts/measurement_times.py" "$work/logs/train-$base.log"
    grep -h "^counters: time measuring" "$work/logs/train-$base.log"; } >> "$table" 2>&1
done
tar czf "$OUT/base-only.tgz" -C "$work" logs
cat "$table"
echo "== summary"; cat "$summary"
