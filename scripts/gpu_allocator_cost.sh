#!/usr/bin/env bash
# One single-GPU call: does what a measurement costs in a PyTorch process follow its
# allocator? Kernel replay there cost more with the number of separate allocations
# (docs/results/2026-11-29-measurement-floor-h200.md, finding 4). bench/train_loop.py
# (ALLOC_STEPS steps, default 60) under default --counters with PyTorch's default caching
# allocator, with expandable segments, and with CUDA's stream-ordered allocator
# (backend:cudaMallocAsync), each also uncounted: wall times, measurements and their
# median cost (scripts/measurement_times.py).
# Logs go into $OUT/allocator-cost.tgz; the table is printed last.
#   Run there: ln -sfn build-gpu-slim build-gpu; scripts/gpu_allocator_cost.sh
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work=/tmp/flopline-allocator-cost
source "$root/scripts/gpu_round_lib.sh"
export CUDA_VISIBLE_DEVICES="${ALLOC_GPU:-0}"
steps="${ALLOC_STEPS:-60}"
timeout 150 "$fl" run --no-summary -o "$work/warm.json" -- python3 "$root/bench/train_loop.py" \
  --steps 5 --warmup 10 --label warm-up > "$work/logs/warm-up.log" 2>&1
note "warm-up: exit $?"
table="$work/logs/table.txt"
for alloc in default expandable_segments:True backend:cudaMallocAsync; do
  name=${alloc%%:*}
  conf=(); [ "$alloc" != default ] && conf=(env "PYTORCH_CUDA_ALLOC_CONF=$alloc")
  t0=$(date +%s.%N)
  "${conf[@]}" timeout 150 "$fl" run --no-summary -o "$work/plain-$name.json" -- python3 \
    "$root/bench/train_loop.py" --steps "$steps" --warmup 10 --label "plain-$name" \
    > "$work/logs/plain-$name.log" 2>&1
  t1=$(date +%s.%N)
  "${conf[@]}" env FLOPLINE_COUNTERS_DEBUG=1 timeout 240 "$fl" run --counters -o \
    "$work/counted-$name.json" -- python3 "$root/bench/train_loop.py" --steps "$steps" --warmup 10 \
    --label "counted-$name" > "$work/logs/counted-$name.log" 2>&1
  rc=$?
  t2=$(date +%s.%N)
  note "$alloc: counted exit $rc"
  {
    python3 -c "import sys; a, b, c = map(float, sys.argv[1:4]); print(f'== {sys.argv[4]}: uncounted {b - a:.1f} s, counted {c - b:.1f} s ({(c - b) / (b - a):.2f}x)')" \
      "$t0" "$t1" "$t2" "$alloc"
    grep -h "^train_loop" "$work/logs/plain-$name.log" "$work/logs/counted-$name.log"
    python3 "$root/scripts/measurement_times.py" "$work/logs/counted-$name.log"
    grep -h "^counters: \(of\|time measuring\|failed\)" "$work/logs/counted-$name.log" | cut -c1-200
  } >> "$table" 2>&1
done
tar czf "$OUT/allocator-cost.tgz" -C "$work" logs
cat "$table"
echo "== summary"; cat "$summary"
