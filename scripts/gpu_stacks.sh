#!/usr/bin/env bash
# Where a stuck job waits: for each process whose command line matches PATTERN, its
# threads' names and kernel wait channels, and every thread's backtrace when gdb (or
# cuda-gdb) is there; then what the GPUs are doing. For a run that passed its time
# limit, before it is killed.
#   scripts/gpu_stacks.sh PATTERN
pattern="$1"
debugger="$(command -v gdb || command -v cuda-gdb || true)"
for pid in $(pgrep -f "$pattern"); do
  [ "$pid" = "$$" ] && continue
  echo "== pid $pid: $(tr '\0' ' ' < /proc/$pid/cmdline 2>/dev/null | cut -c1-200)"
  for t in /proc/$pid/task/*; do
    echo "  thread $(basename "$t") $(cat "$t/comm" 2>/dev/null) wchan=$(cat "$t/wchan" 2>/dev/null) state=$(awk '{print $3}' "$t/stat" 2>/dev/null)"
  done
  if [ -n "$debugger" ]; then
    timeout 60 "$debugger" -p "$pid" -batch -ex "thread apply all bt 25" 2>&1 | grep -E "^#|^Thread" | cut -c1-220 | head -300
  fi
done
nvidia-smi --query-gpu=index,utilization.gpu,memory.used --format=csv,noheader 2>&1
