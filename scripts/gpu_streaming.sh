#!/usr/bin/env bash
# The streaming capture's long-run checks on a GPU machine (tests/gpu/streaming/): runs of
# 30,000 launches a second under `flopline run` (plain, --gpu-metrics, and one killed with
# SIGKILL), each on its own GPU when the machine has three, checked for dropped records,
# resident-memory growth after the first minute, every kernel in the trace, and
# `flopline stats` reading the file (the killed one: holding its first minutes). Logs,
# RSS samples and traces go to $OUT; the table is printed last.
#   Build here:  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLOPLINE_BUILD_VIEWER=OFF
#                cmake --build build-gpu && scripts/gpu_pack.sh --slim
#   Run there:   ln -sfn build-gpu-slim build-gpu; source scripts/gpu_env.sh; scripts/gpu_streaming.sh
#                (on nvidia-h200-x4: the three runs in parallel, about 9.5 minutes with the
#                default 8; STREAMING_MINUTES=6 STREAMING_KILL_AT=4 fits a 10-minute call
#                with room to spare)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ -e "$root/build-gpu" ] || ln -s build-gpu-slim "$root/build-gpu"
build="${FLOPLINE_GPU_BUILD:-$root/build-gpu}"
OUT="${OUT:-$root/gpu-out}/streaming"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1
source "$root/scripts/gpu_env.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/machine.txt"
python3 "$root/tests/gpu/streaming/check_streaming.py" --flopline "$build/profiler/flopline" \
  --out "$OUT" --minutes "${STREAMING_MINUTES:-8}" --kill-at "${STREAMING_KILL_AT:-5}" \
  --rate "${STREAMING_RATE:-30000}" --modes "${STREAMING_MODES:-plain,metrics,kill}" \
  --format "${STREAMING_FORMAT:-json.gz}" --read "${STREAMING_READ:-stats}" \
  2>&1 | tee "$OUT/check.log"
status=${PIPESTATUS[0]}
# The big traces stay on the machine; what comes back is the logs and RSS samples.
rm -f "$OUT"/*/trace.json.gz "$OUT"/*/trace.json
exit "$status"
