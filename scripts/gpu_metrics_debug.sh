#!/usr/bin/env bash
# Where a `flopline run --gpu-metrics` waits, on a GPU machine: a cuBLAS matmul sample
# under PM sampling with FLOPLINE_GPU_METRICS_DEBUG, once per sampling interval, each
# with a time limit; a run still going after it gets its threads' stacks (gdb or cuda-gdb
# when there, else the kernel's wait channels) and is killed. Logs go to $OUT/gpu-metrics-<label>.log.
#   Run there:   scripts/gpu_metrics_debug.sh [SECONDS]   (carry build-gpu-slim)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ -e "$root/build-gpu" ] || ln -s build-gpu-slim "$root/build-gpu"
build="${FLOPLINE_GPU_BUILD:-$root/build-gpu}"
OUT="${OUT:-$root/gpu-out}"
limit="${1:-40}"
mkdir -p "$OUT"
source "$root/scripts/gpu_env.sh"

stacks() {  # PID: every thread's stack of PID and its children
  local p
  for p in $1 $(pgrep -P "$1") $(pgrep -P "$(pgrep -P "$1" | head -1)" 2>/dev/null); do
    echo "-- pid $p: $(tr '\0' ' ' < /proc/$p/cmdline 2>/dev/null)"
    local gdb=gdb
    command -v gdb > /dev/null || gdb=cuda-gdb  # the GPU machines have only cuda-gdb
    if command -v "$gdb" > /dev/null; then
      timeout 60 "$gdb" -q -batch -p "$p" -ex "thread apply all bt 12" 2>/dev/null | grep -E "^#|^Thread"
    else
      for t in /proc/$p/task/*; do echo "  task ${t##*/}: $(cat $t/wchan 2>/dev/null) $(cat $t/comm)"; done
    fi
  done
}

status=0
intervals="${FLOPLINE_GM_INTERVALS:-50us 100us 1ms}"
n=0
for interval in $intervals; do
  n=$((n + 1)); label="$n-$interval"
  log="$OUT/gpu-metrics-$label.log"
  echo "== every $interval" | tee "$log"
  FLOPLINE_GPU_METRICS_DEBUG=1 \
    "$build/profiler/flopline" run --gpu-metrics="$interval" -o "$OUT/gm-$label.json.gz" -- \
    "$build/samples/matmul_bench" --size 4096 --provider cublas --dtype bf16 --reps 20 >> "$log" 2>&1 &
  pid=$!
  for _ in $(seq "$limit"); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
  if kill -0 "$pid" 2>/dev/null; then
    echo "== still running after ${limit} s: stacks" >> "$log"
    stacks "$pid" >> "$log" 2>&1
    pkill -KILL -P "$pid"; kill -KILL "$pid"
    status=1
  fi
  wait "$pid"; echo "exit $?" >> "$log"
  grep -E "stop: done|unavailable|exit |still running|wrote|did not return" "$log" | sed "s/^/$label: /"
  grep -c "decoded" "$log" | sed "s/^/$label: decode calls: /"
  python3 -c "import gzip,json,sys; e=json.load(gzip.open(sys.argv[1]))['traceEvents']; \
print(sum(1 for x in e if x.get('ph') == 'C'), 'counter events')" "$OUT/gm-$label.json.gz" 2>&1 |
    sed "s/^/$label: /"
done
exit $status
