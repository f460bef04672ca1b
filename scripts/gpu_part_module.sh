#!/usr/bin/env bash
# One single-GPU call on whether a measured launch's cost follows the size of the module
# its kernel lives in (samples/vector_add's kernel sits in a large device-linked module
# and costs far more a measurement than the experiment's axpy in its small one):
#   plain_cuda (its kernels in a 25 KB module, SGEMMs in cuBLAS's) under --counters=all:
#   every launch measured, by function
#   vector_add and bench/counters_parts_probe.py with parts, one-pass sets in kernel
#   replay and in user replay (FLOPLINE_COUNTERS_PART_REPLAY=user, an experiment)
# Logs go into $OUT/logs.tgz; the summary is printed last.
#   Run there: ln -sfn build-gpu-slim build-gpu; scripts/gpu_part_module.sh
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work=/tmp/flopline-part-module
source "$root/scripts/gpu_round_lib.sh"
export CUDA_VISIBLE_DEVICES="${PARTS_GPU:-0}"
by_function() {  # the FLOPLINE_COUNTERS_DEBUG measurement lines of a log, summed up
  python3 "$root/scripts/measurement_times.py" --by function "$1"
}
FLOPLINE_COUNTERS_DEBUG=1 timeout 120 "$fl" run --counters=all --kinds kernel -o "$work/plain.json" \
  -- "$build/samples/plain_cuda" --iters 6 > "$work/logs/plain-all.log" 2>&1
note "plain_cuda --counters=all: exit $?"
blocks=128,256,512,1024
for replay in kernel user; do
  FLOPLINE_COUNTERS_PARTS=1 FLOPLINE_COUNTERS_PART_REPLAY=$replay FLOPLINE_COUNTERS_DEBUG=1 \
    timeout 90 "$fl" run --counters --kinds kernel -o "$work/va-$replay.json" -- \
    "$build/samples/vector_add" --sizes 16777216 --blocks $blocks --reps 4 \
    > "$work/logs/va-$replay.log" 2>&1
  note "vector_add, parts in $replay replay: exit $?"
  FLOPLINE_COUNTERS_PARTS=1 FLOPLINE_COUNTERS_PART_REPLAY=$replay FLOPLINE_COUNTERS_DEBUG=1 \
    timeout 90 "$fl" run --counters -o "$work/probe-$replay.json" -- \
    python3 "$root/bench/counters_parts_probe.py" --rounds 8 > "$work/logs/probe-$replay.log" 2>&1
  note "probe, parts in $replay replay: exit $?"
done

tar czf "$OUT/logs.tgz" -C "$work" logs
for f in plain-all va-kernel va-user probe-kernel probe-user; do
  echo "== $f"; by_function "$work/logs/$f.log"
done
grep -h "FFMA\|error\|fail" "$work"/logs/va-user.log | head -5
echo "== summary"; cat "$summary"
