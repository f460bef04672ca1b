#!/usr/bin/env bash
# One single-GPU call testing why a measured launch costs more under flopline than in
# bench/counters_pass_cost with the same metric lists (gpu_part_bisect.sh,
# gpu_part_module.sh). In the experiment, each list measured: configured afresh; in the
# launch's callback after a 2-pass measurement of another kernel; after a many-pass
# (4-pass) one before every launch ("after many"); after one only before the first
# launch ("many once": does an object once set with a many-pass configuration keep later
# measurements dear?); and so with the range profiler re-enabled after each launch
# ("many once, re-enabled": does a fresh object make them cheap again?). Optional
# variants: EXPERIMENT_VARIANTS="base RUNTIME_CB" adds the runtime's launch callbacks
# (COUNTERS_PASS_COST_RUNTIME_CB=1). Then the probe with one-pass parts in user replay
# (FLOPLINE_COUNTERS_PART_REPLAY=user), its failures named.
# Logs go into $OUT/logs.tgz; the summary is printed last.
#   Run there: ln -sfn build-gpu-slim build-gpu; scripts/gpu_part_hypotheses.sh
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work=/tmp/flopline-part-hypotheses
source "$root/scripts/gpu_round_lib.sh"
export CUDA_VISIBLE_DEVICES="${PARTS_GPU:-0}"
simt=$(printf "sm__sass_thread_inst_executed_op_%s_pred_on.sum," dadd dmul dfma fadd fmul ffma hadd hmul hfma)
bytes="dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,gpu__time_duration.sum"
sets="bytes=$bytes;two=$simt$bytes"
variants="${EXPERIMENT_VARIANTS:-base}"
for v in $variants; do
  flag=(); [ "$v" != base ] && flag=("COUNTERS_PASS_COST_$v=1")
  env COUNTERS_PASS_COST_SETS="$sets" COUNTERS_PASS_COST_ONLY=1 "${flag[@]}" \
    timeout 90 "$build/bench/counters_pass_cost" 0 > "$work/logs/pc-$v.log" 2>&1
  note "experiment, $v: exit $?"
done
FLOPLINE_COUNTERS_PARTS=1 FLOPLINE_COUNTERS_PART_REPLAY=user FLOPLINE_COUNTERS_DEBUG=1 \
  timeout 90 "$fl" run --counters -o "$work/probe-user.json" -- \
  python3 "$root/bench/counters_parts_probe.py" --rounds 6 > "$work/logs/probe-user.log" 2>&1
note "probe, parts in user replay: exit $?"

tar czf "$OUT/part-hypotheses.tgz" -C "$work" logs
for v in $variants; do
  echo "== experiment, $v"; grep -v "^configuration\|^(exact" "$work/logs/pc-$v.log" | cut -c1-75
done
echo "== probe in user replay: failures"
grep -h "failed:" "$work/logs/probe-user.log" | sed 's/measurement [0-9]*/measurement N/' | sort | uniq -c | head
grep -h "^counters: \(of\|failed\)" "$work/logs/probe-user.log" | cut -c1-200
echo "== summary"; cat "$summary"
