#!/usr/bin/env bash
# One single-GPU call that looks inside a measured launch that costs more in flopline
# than in bench/counters_pass_cost (scripts/gpu_part_bisect.sh: not the activity
# records, not the metric lists, not the passes): what the launching thread waits in,
# sampled from /proc (scripts/syscall_sampler.py), and a few host stacks from plain gdb
# where there is one (attaching cuda-gdb crashed the experiment), attached
# mid-measurement, for vector_add under --counters and for the experiment.
# Logs go into $OUT/logs.tgz; the summary is printed last.
#   Run there: ln -sfn build-gpu-slim build-gpu; scripts/gpu_part_stacks.sh
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work=/tmp/flopline-part-stacks
source "$root/scripts/gpu_round_lib.sh"
export CUDA_VISIBLE_DEVICES="${PARTS_GPU:-0}"
gdb="$(command -v gdb)"  # not cuda-gdb: attaching it crashed the experiment
note "debugger: ${gdb:-none}"
look() {  # NAME PROCESS-PATTERN: sample the newest process matching it until it ends
  local name=$1 pattern=$2 pid=""  # pattern: the process name (15 characters)
  for _ in $(seq 200); do pid=$(pgrep -n -x "$pattern" | head -1); [ -n "$pid" ] && break; sleep 0.02; done
  [ -z "$pid" ] && { note "$name: no process"; return; }
  python3 "$root/scripts/syscall_sampler.py" "$pid" > "$work/logs/$name-syscalls.txt" 2>&1 &
  local sampler=$!
  sleep "${STACK_AT:-2}"
  if [ -n "$gdb" ]; then
    for i in 1 2 3; do
      timeout 60 "$gdb" -batch -p "$pid" -ex "thread apply all bt 25" > "$work/logs/$name-stack-$i.txt" 2>&1
      sleep 0.3
    done
  fi
  wait "$sampler"
}
blocks=$(seq -s, 32 32 1024)
FLOPLINE_COUNTERS_PARTS=1 FLOPLINE_COUNTERS_DEBUG=1 timeout 150 "$fl" run --counters --kinds kernel \
  -o "$work/va.json" -- "$build/samples/vector_add" --sizes 16777216 --blocks "$blocks" --reps 3 \
  > "$work/logs/va.log" 2>&1 &
look va vector_add
wait; note "vector_add under --counters: done"
sets="part 2=dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,gpu__time_duration.sum"
COUNTERS_PASS_COST_SETS="$sets;again=$sets;once more=$sets" COUNTERS_PASS_COST_ONLY=1 timeout 100 \
  "$build/bench/counters_pass_cost" 0 > "$work/logs/pc.log" 2>&1 &
STACK_AT=1 look pc counters_pass_c
wait; note "experiment: done"

tar czf "$OUT/logs.tgz" -C "$work" logs
for f in va pc; do
  echo "== $f: system calls by thread (1 ms samples)"; head -6 "$work/logs/$f-syscalls.txt" | cut -c1-200
  for s in "$work"/logs/$f-stack-*.txt; do
    [ -e "$s" ] || continue
    echo "-- $(basename "$s"): the thread in libcupti or libcuda"
    grep -E "^#|^Thread" "$s" | grep -v "^Thread" | awk '/^#0/{n++} n<=3' | grep -iE "cupti|libcuda|ioctl|sleep|poll|futex|launch|vector|axpy|Range|flopline|^#0" | head -25 | cut -c1-160
  done
done
echo "== summary"; cat "$summary"
