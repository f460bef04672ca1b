#!/usr/bin/env bash
# One single-GPU call that answers what one-pass parts (FLOPLINE_COUNTERS_PARTS=1) still
# need (docs/COUNTERS.md, "One-pass parts"):
#   1. bench/counters_pass_cost 0, bare: do the carry-over's fixes hold ("re-enabled",
#      "drained": right when "other FFMA" is 2^26) and what do they cost; does the
#      context synchronize in the launch callback ("cb+sync") make a part dear
#   2. the same inside PyTorch processes: after a training step (kernel replay costs
#      more there), holding 4,000 separate allocations, with about 150 kernels
#      loaded: which of them the replay's extra cost follows
#   3. bench/counters_parts_probe.py under --counters with parts: a part's cost in a small
#      PyTorch process (plain and with cuBLAS loaded)
#   4. train_loop.py, 20 steps, with parts: a part's cost there
#   5. default (with parts) against --counters=all on the probe: do parts agree
# Each run's "measurement N took" lines are summed by kind (passes, part or not).
# Logs go into $OUT/logs.tgz; the summary is printed last.
#   Run there: ln -sfn build-gpu-slim build-gpu; scripts/gpu_parts_check.sh
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work=/tmp/flopline-parts
source "$root/scripts/gpu_round_lib.sh"
export CUDA_VISIBLE_DEVICES="${PARTS_GPU:-0}"
times() {  # the FLOPLINE_COUNTERS_DEBUG measurement lines of a log, summed up
  python3 "$root/scripts/measurement_times.py" "$1"
}

timeout 120 "$build/bench/counters_pass_cost" 0 > "$work/logs/pass-cost-bare.log" 2>&1
note "pass cost, bare: exit $?"
timeout 150 python3 "$root/bench/counters_pass_cost_torch.py" --lib "$build/bench/libcounters_pass_cost.so" \
  --setups ops,allocs,kernels > "$work/logs/pass-cost-torch.log" 2>&1
note "pass cost, PyTorch: exit $?"
for variant in plain matmul; do
  flag=""; [ "$variant" = matmul ] && flag=--matmul
  FLOPLINE_COUNTERS_PARTS=1 FLOPLINE_COUNTERS_DEBUG=1 timeout 120 "$fl" run --counters \
    -o "$work/probe-$variant.json" -- python3 "$root/bench/counters_parts_probe.py" $flag \
    > "$work/logs/probe-$variant.log" 2>&1
  note "parts probe ($variant): exit $?"
done
FLOPLINE_COUNTERS_PARTS=1 FLOPLINE_COUNTERS_DEBUG=1 timeout 200 "$fl" run --counters \
  -o "$work/train.json" -- python3 "$root/bench/train_loop.py" --steps 20 --warmup 5 \
  --label parts > "$work/logs/train-parts.log" 2>&1
note "train_loop with parts: exit $?"

FLOPLINE_COUNTERS_PARTS=1 timeout 200 python3 "$root/bench/counters_default_vs_all.py" \
  --flopline "$fl" --out "$work/agree" --timeout 60 --top 6 -- \
  python3 "$root/bench/counters_parts_probe.py" --rounds 15 --matmul > "$work/logs/agree.log" 2>&1
note "parts against every launch: exit $?"

tar czf "$OUT/logs.tgz" -C "$work" logs
echo "== pass cost, bare (the rows that matter here)"
grep -E "^configuration|after|re-enabled|drained|in callback|cb\+sync|same between  " \
  "$work/logs/pass-cost-bare.log" | cut -c1-150
echo "== pass cost, PyTorch processes"
grep -E "^==|after|re-enabled|drained|cb\+sync|SIMT\+DRAM, kernel" "$work/logs/pass-cost-torch.log" | cut -c1-150
for f in probe-plain probe-matmul train-parts; do
  echo "== $f"; times "$work/logs/$f.log"; grep -h "time measuring" "$work/logs/$f.log"
done
echo "== parts against every launch on the probe"; tail -8 "$work/logs/agree.log"
echo "== summary"; cat "$summary"
