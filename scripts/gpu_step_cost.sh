#!/usr/bin/env bash
# One single-GPU call for where a counted training step loses time after its
# measurements (docs/COUNTERS.md, "Where a measurement's time goes"): bench/train_loop.py for
# STEP_COST_STEPS steps (default 150) without and with --counters, FLOPLINE_SELF_TIMING=1
# (the counter profiler's share of the callbacks apart), then bench/counters_step_cost.py
# on the two traces: per step in the later half, wall, kernel and launch-call time, and the
# kernels whose duration grew. Then, unless STEP_COST_TESTS=0, the endings and counters
# gpu tests.
# Logs go into $OUT/step-cost.tgz; the tables are printed last.
#   Run there: ln -sfn build-gpu-slim build-gpu; scripts/gpu_step_cost.sh
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work=/tmp/flopline-step-cost
source "$root/scripts/gpu_round_lib.sh"
export CUDA_VISIBLE_DEVICES="${STEP_COST_GPU:-0}"
steps="${STEP_COST_STEPS:-150}"
# A fresh machine compiles train_loop's kernels on its first run: not timed.
timeout 150 "$fl" run --no-summary -o "$work/warm.json" -- python3 "$root/bench/train_loop.py" \
  --steps 5 --warmup 10 --label warm-up > "$work/logs/warm-up.log" 2>&1
note "warm-up: exit $?"
for mode in plain counted; do
  flag=(); [ "$mode" = counted ] && flag=(--counters)
  FLOPLINE_SELF_TIMING=1 timeout 240 "$fl" run "${flag[@]}" -o "$work/train-$mode.json" \
    -- python3 "$root/bench/train_loop.py" --steps "$steps" --warmup 10 --label "$mode" \
    --json "$work/logs/steps-$mode.json" > "$work/logs/train-$mode.log" 2>&1
  note "train_loop $steps steps, $mode: exit $?"
done
python3 "$root/bench/counters_step_cost.py" "$work/train-plain.json" "$work/train-counted.json" \
  > "$work/logs/step-cost.log" 2>&1
note "step cost: exit $?"
python3 - "$work/logs/steps-plain.json" "$work/logs/steps-counted.json" > "$work/logs/step-series.log" <<'PY'
import json, statistics, sys
# Each run's step times by tenths of the run: when the counted run's steps settle.
for path in sys.argv[1:]:
    d = json.load(open(path))
    s = d["step_ms"]
    n = max(1, len(s) // 10)
    tenths = [statistics.median(s[i:i + n]) for i in range(0, len(s), n)]
    print(f"{d['label']:8} run {d['run_s']:.2f} s; median step by tenths (ms): "
          + " ".join(f"{t:.1f}" for t in tenths))
PY
if [ "${STEP_COST_TESTS:-1}" != 0 ]; then
  (cd "$build" && FLOPLINE_GPU_TEST_OUT="$work/gpu-test-traces" timeout 300 ctest \
    -R 'gpu\.(endings|counters)\.' -E 'DdpJob|DefaultAgrees' --output-on-failure --timeout 200 \
    > "$work/logs/ctest.log" 2>&1)
  note "ctest endings, counters: exit $?"
fi
tar czf "$OUT/step-cost.tgz" -C "$work" logs
for mode in plain counted; do
  echo "== train_loop, $mode"; grep -h "^train_loop\|self timing\|time measuring\|^counters: of" \
    "$work/logs/train-$mode.log" | cut -c1-200 | head -14
done
echo "== step series"; cat "$work/logs/step-series.log"
echo "== step cost"; cat "$work/logs/step-cost.log"
touch "$work/logs/ctest.log"
echo "== ctest"; grep -hE "tests passed|Failed|\*\*\*|Not Run|Timeout" "$work/logs/ctest.log" | tail -12
echo "== summary"; cat "$summary"
