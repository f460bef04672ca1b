#!/usr/bin/env bash
# One single-GPU call for FLOPLINE_COUNTERS_REPLAY=checkpoint (an experiment: a learned
# set's passes run in the launch's own callback, device memory saved and restored with
# CUPTI's checkpoint, the launch itself unmeasured): does it make measurements cheaper
# than kernel replay, and are its values and records right?
#   1. samples/vector_add with and without it: measurements, their cost, kernel records;
#   2. bench/train_loop.py (60 steps) uncounted, default --counters, and with it (freeing
#      and keeping the checkpoint's copy): wall times and measurement costs;
#   3. bench/counters_default_vs_all.py on work_keys_loop.py with it (--counters=all, the
#      reference, never replays in the callback).
# Logs go into $OUT/checkpoint-replay.tgz; the tables are printed last.
#   Run there: ln -sfn build-gpu-slim build-gpu; scripts/gpu_checkpoint_replay.sh
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work=/tmp/flopline-checkpoint-replay
source "$root/scripts/gpu_round_lib.sh"
export CUDA_VISIBLE_DEVICES="${CHECKPOINT_GPU:-0}"
table="$work/logs/table.txt"
kernels() {  # kernel events in a trace
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(sum(1 for e in d['traceEvents'] if e.get('cat') == 'kernel'))" "$1" 2>/dev/null || echo "?"
}
for mode in kernel checkpoint; do
  FLOPLINE_COUNTERS_REPLAY=$mode FLOPLINE_COUNTERS_DEBUG=1 timeout 90 "$fl" run --counters \
    -o "$work/va-$mode.json" -- "$build/samples/vector_add" --sizes 16777216 \
    --blocks 128,256,512,1024 --reps 4 > "$work/logs/va-$mode.log" 2>&1
  note "vector_add, replay $mode: exit $?"
  {
    echo "== vector_add, replay $mode: $(kernels "$work/va-$mode.json") kernel events"
    python3 "$root/scripts/measurement_times.py" "$work/logs/va-$mode.log"
    grep -h "^counters: \|counters without\|failed" "$work/logs/va-$mode.log" | cut -c1-200 | head -8
  } >> "$table" 2>&1
done
timeout 150 "$fl" run --no-summary -o "$work/warm.json" -- python3 "$root/bench/train_loop.py" \
  --steps 5 --warmup 10 --label warm-up > "$work/logs/warm-up.log" 2>&1
note "warm-up: exit $?"
t0=$(date +%s.%N)
timeout 150 "$fl" run --no-summary -o "$work/train-plain.json" -- python3 "$root/bench/train_loop.py" \
  --steps 60 --warmup 10 --label plain > "$work/logs/train-plain.log" 2>&1
t1=$(date +%s.%N)
echo "== train_loop 60 steps uncounted: $(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f} s')" "$t0" "$t1")" >> "$table"
for mode in kernel checkpoint checkpoint-keep; do
  t0=$(date +%s.%N)
  FLOPLINE_COUNTERS_REPLAY=$mode FLOPLINE_COUNTERS_DEBUG=1 timeout 240 "$fl" run --counters \
    -o "$work/train-$mode.json" -- python3 "$root/bench/train_loop.py" --steps 60 --warmup 10 \
    --label "$mode" > "$work/logs/train-$mode.log" 2>&1
  rc=$?
  t2=$(date +%s.%N)
  note "train_loop, replay $mode: exit $rc"
  {
    echo "== train_loop 60 steps, replay $mode: $(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f} s')" "$t0" "$t2"), exit $rc, $(kernels "$work/train-$mode.json") kernel events (uncounted: $(kernels "$work/train-plain.json"))"
    grep -h "^train_loop" "$work/logs/train-$mode.log"
    python3 "$root/scripts/measurement_times.py" "$work/logs/train-$mode.log"
    grep -h "^counters: \|counters without\|failed\|Error\|error" "$work/logs/train-$mode.log" | cut -c1-200 | head -8
  } >> "$table" 2>&1
done
left=$(( 560 - $(since) ))
FLOPLINE_COUNTERS_REPLAY=checkpoint timeout $(( left - 5 )) python3 "$root/bench/counters_default_vs_all.py" \
  --flopline "$fl" --out "$work/keys" --timeout $(( left - 15 )) --top 8 > "$work/logs/default-vs-all.log" 2>&1
note "default (checkpoint replay) against all: exit $?"
tar czf "$OUT/checkpoint-replay.tgz" -C "$work" logs
cat "$table"
echo "== default (checkpoint replay) against all"; tail -20 "$work/logs/default-vs-all.log"
echo "== summary"; cat "$summary"
