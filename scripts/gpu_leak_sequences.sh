#!/usr/bin/env bash
# One single-GPU call for what the next design of one-pass measurements rests on
# (docs/COUNTERS.md, "One-pass parts" and "Where a measurement's time goes"):
# bench/counters_pass_cost's leak sequences (COUNTERS_PASS_COST_LEAKS=1), each range's
# configuring and measuring timed apart, with each range started around the launch and
# in the launch's own callback (as flopline must), bare and inside a PyTorch process after
# a training step: which ranges carry SIMT counts from earlier ones, and whether a range
# configured right before it is cheap where one measured again on its set is dear.
# Then flopline itself, default --counters on samples/vector_add and
# bench/counters_parts_probe.py: what its measurements cost beside those ranges (once also
# with every measurement configured afresh, which changed nothing; that switch is gone:
# docs/COUNTERS.md, "Where a measurement's time goes").
# Last, train_loop.py (150 steps) uncounted and counted with FLOPLINE_SELF_TIMING=1: the
# steady-state step under --counters (slower than uncounted in one pair) and flopline's
# own share of it.
# Logs go into $OUT/leak-sequences.tgz; the tables are printed last.
#   Run there: ln -sfn build-gpu-slim build-gpu; scripts/gpu_leak_sequences.sh
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work=/tmp/flopline-leak-sequences
source "$root/scripts/gpu_round_lib.sh"
export CUDA_VISIBLE_DEVICES="${PARTS_GPU:-0}" COUNTERS_PASS_COST_LEAKS=1
for cb in 0 1; do
  COUNTERS_PASS_COST_LEAKS_IN_CALLBACK=$cb timeout 90 "$build/bench/counters_pass_cost" \
    > "$work/logs/bare-cb$cb.log" 2>&1
  note "leak sequences, bare, in callback $cb: exit $?"
  COUNTERS_PASS_COST_LEAKS_IN_CALLBACK=$cb timeout 120 python3 "$root/bench/counters_pass_cost_torch.py" \
    --lib "$build/bench/libcounters_pass_cost.so" --setups ops > "$work/logs/torch-cb$cb.log" 2>&1
  note "leak sequences, PyTorch, in callback $cb: exit $?"
done
unset COUNTERS_PASS_COST_LEAKS
FLOPLINE_COUNTERS_DEBUG=1 timeout 90 "$fl" run --counters -o "$work/va.json" -- \
  "$build/samples/vector_add" --sizes 16777216 --blocks 128,256,512,1024 --reps 4 \
  > "$work/logs/va.log" 2>&1
note "vector_add: exit $?"
FLOPLINE_COUNTERS_DEBUG=1 timeout 90 "$fl" run --counters -o "$work/probe.json" -- python3 \
  "$root/bench/counters_parts_probe.py" --rounds 8 --matmul > "$work/logs/probe.log" 2>&1
note "probe: exit $?"
for mode in plain counted; do
  flag=(); [ "$mode" = counted ] && flag=(--counters)
  FLOPLINE_SELF_TIMING=1 timeout 200 "$fl" run "${flag[@]}" --no-summary -o "$work/train-$mode.json" \
    -- python3 "$root/bench/train_loop.py" --steps 150 --warmup 10 --label "$mode" \
    > "$work/logs/train-$mode.log" 2>&1
  note "train_loop 150 steps, $mode: exit $?"
done
tar czf "$OUT/leak-sequences.tgz" -C "$work" logs
for f in bare-cb0 bare-cb1 torch-cb0 torch-cb1; do
  echo "== $f"; cut -c1-400 "$work/logs/$f.log"
done
for f in va probe; do
  echo "== $f"; python3 "$root/scripts/measurement_times.py" "$work/logs/$f.log"
  grep -h "^counters: \(of\|time measuring\|failed\)" "$work/logs/$f.log" | cut -c1-160
done
for mode in plain counted; do
  echo "== train_loop, $mode"; grep -h "^train_loop\|self timing\|callback\|time measuring" \
    "$work/logs/train-$mode.log" | cut -c1-200 | head -12
done
echo "== summary"; cat "$summary"
