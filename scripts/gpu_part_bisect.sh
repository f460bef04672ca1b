#!/usr/bin/env bash
# One single-GPU call that narrows down what makes a measured launch dearer in flopline
# than bench/counters_pass_cost times the same metric lists
# (scripts/gpu_part_anatomy.sh found the time inside the launch call, between CUPTI's
# enter and exit callbacks, in a bare CUDA program too):
#   vector_add under --counters with parts: default kinds, kernels alone, and every
#   launch with every metric (FLOPLINE_COUNTERS_SETS=0)
#   counters_pass_cost with those metric lists, bare and with kernel activity records on
#   (COUNTERS_PASS_COST_ACTIVITY=1), its "cb+sync" rows started in the launch's callback
# Logs go into $OUT/logs.tgz; the summary is printed last.
#   Run there: ln -sfn build-gpu-slim build-gpu; scripts/gpu_part_bisect.sh
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work=/tmp/flopline-part-bisect
source "$root/scripts/gpu_round_lib.sh"
export CUDA_VISIBLE_DEVICES="${PARTS_GPU:-0}"
launch_ms() {  # the FLOPLINE_COUNTERS_DEBUG measurement lines of a log, summed up
  python3 "$root/scripts/measurement_times.py" "$1"
}
va=("$build/samples/vector_add" --sizes 16777216 --blocks 128,256,512,1024 --reps 4)
sets="part 2=dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,gpu__time_duration.sum"
sets="$sets;simt=sm__sass_thread_inst_executed_op_ffma_pred_on.sum,sm__sass_thread_inst_executed_op_fadd_pred_on.sum"

run_va() {  # NAME KINDS [ENV...]
  local name=$1 kinds=$2; shift 2
  env FLOPLINE_COUNTERS_PARTS=1 FLOPLINE_COUNTERS_DEBUG=1 "$@" timeout 90 "$fl" run --counters \
    --kinds "$kinds" -o "$work/$name.json" -- "${va[@]}" > "$work/logs/$name.log" 2>&1
  note "$name: exit $?"
}
run_va va-default default
run_va va-kernel kernel
run_va va-kernel-sets0 kernel FLOPLINE_COUNTERS_SETS=0
for activity in 0 1; do
  COUNTERS_PASS_COST_SETS="$sets" COUNTERS_PASS_COST_ONLY=1 COUNTERS_PASS_COST_ACTIVITY=$activity \
    timeout 60 "$build/bench/counters_pass_cost" 0 > "$work/logs/pc-activity-$activity.log" 2>&1
  note "pass cost, kernel records $activity: exit $?"
done

tar czf "$OUT/logs.tgz" -C "$work" logs
for f in va-default va-kernel va-kernel-sets0; do
  echo "== $f"; launch_ms "$work/logs/$f.log"
done
for f in pc-activity-0 pc-activity-1; do
  echo "== $f"; grep -v "^flopline" "$work/logs/$f.log" | cut -c1-110 | head -12
done
echo "== summary"; cat "$summary"
