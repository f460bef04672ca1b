#!/usr/bin/env bash
# One single-GPU call on where a one-pass part's time goes in flopline (far more a part
# under FLOPLINE_COUNTERS_PARTS=1 than the same CUPTI steps cost in
# bench/counters_pass_cost; docs/COUNTERS.md, "One-pass parts"):
#   1. samples/vector_add, a bare CUDA program, under --counters with parts: what a part
#      costs without PyTorch
#   2. bench/counters_parts_probe.py under --counters with parts: each part's Start,
#      launch and Stop, and its metrics (FLOPLINE_COUNTERS_DEBUG)
#   3. bench/counters_pass_cost with the probe's own part metric lists
#      (COUNTERS_PASS_COST_SETS), bare and inside a PyTorch process after a training step:
#      whether flopline's metric lists, not flopline, make a part dear
# Logs go into $OUT/logs.tgz; the summary is printed last.
#   Run there: ln -sfn build-gpu-slim build-gpu; scripts/gpu_part_anatomy.sh
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work=/tmp/flopline-part-anatomy
source "$root/scripts/gpu_round_lib.sh"
export CUDA_VISIBLE_DEVICES="${PARTS_GPU:-0}"
by_kind() {  # the FLOPLINE_COUNTERS_DEBUG measurement lines of a log, summed up
  python3 "$root/scripts/measurement_times.py" "$1"
}
part_sets() {  # COUNTERS_PASS_COST_SETS from the parts' metric lists of a debug log
  python3 - "$1" <<'PY'
import re, sys
seen = []
for line in open(sys.argv[1], errors="replace"):
    m = re.search(r"\(a one-pass part\).*metrics: (\S+)", line)
    if m and m[1] not in seen:
        seen.append(m[1])
print(";".join(f"part {i + 1}={s}" for i, s in enumerate(seen[:3])))
PY
}

FLOPLINE_COUNTERS_PARTS=1 FLOPLINE_COUNTERS_DEBUG=1 timeout 120 "$fl" run --counters \
  -o "$work/vector_add.json" -- "$build/samples/vector_add" --sizes 16777216 \
  --blocks 128,256,512,1024 --reps 6 > "$work/logs/vector-add.log" 2>&1
note "vector_add with parts: exit $?"
FLOPLINE_COUNTERS_PARTS=1 FLOPLINE_COUNTERS_DEBUG=1 timeout 120 "$fl" run --counters \
  -o "$work/probe.json" -- python3 "$root/bench/counters_parts_probe.py" --rounds 10 \
  > "$work/logs/probe.log" 2>&1
note "parts probe: exit $?"
sets="$(part_sets "$work/logs/probe.log")"
echo "$sets" > "$work/logs/part-sets.txt"
COUNTERS_PASS_COST_SETS="$sets" COUNTERS_PASS_COST_ONLY=1 timeout 60 \
  "$build/bench/counters_pass_cost" 0 > "$work/logs/pass-cost-bare.log" 2>&1
note "pass cost of the parts' metric lists, bare: exit $?"
COUNTERS_PASS_COST_SETS="$sets" COUNTERS_PASS_COST_ONLY=1 timeout 120 python3 \
  "$root/bench/counters_pass_cost_torch.py" --lib "$build/bench/libcounters_pass_cost.so" \
  --setups ops > "$work/logs/pass-cost-torch.log" 2>&1
note "pass cost of the parts' metric lists, PyTorch: exit $?"

tar czf "$OUT/logs.tgz" -C "$work" logs
for f in vector-add probe; do
  echo "== $f"; by_kind "$work/logs/$f.log"; grep -h "time measuring" "$work/logs/$f.log"
done
echo "== the parts' metric lists"; tr ';' '\n' < "$work/logs/part-sets.txt" | cut -c1-400
echo "== pass cost of those lists, bare"; cut -c1-120 "$work/logs/pass-cost-bare.log"
echo "== pass cost of those lists, PyTorch"; cut -c1-120 "$work/logs/pass-cost-torch.log"
echo "== summary"; cat "$summary"
