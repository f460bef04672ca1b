#!/usr/bin/env bash
# One two-GPU call for the checks of capture windows and counters after a change there:
#   GPUs 0,1  the straggler check (tests/gpu/ranks, two DDP ranks); its two traces come
#             back gzipped for the HTA comparison (scripts/compare_hta.py) here
#   GPU 0     then the capture-window and endings tests (ctest gpu.capture_range.*,
#             gpu.endings.*), the on-demand window files' first one kept
#   GPU 1     meanwhile default --counters against --counters=all, launch by launch
#             (bench/counters_default_vs_all.py on work_keys_loop.py)
# Logs go into $OUT/logs.tgz; the summary is printed last.
#   Run there: ln -sfn build-gpu-slim build-gpu; scripts/gpu_round_x2.sh
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work=/tmp/flopline-x2
source "$root/scripts/gpu_round_lib.sh"

timeout "${STRAGGLER_LIMIT_S:-120}" python3 "$root/tests/gpu/ranks/check_ranks.py" --flopline "$fl" \
  --out "$work/ranks" --parts straggler > "$work/logs/ranks-straggler.log" 2>&1
note "straggler check: exit $?"
for f in "$work"/ranks/straggler/*.json; do [ -e "$f" ] && gzip -c "$f" > "$OUT/$(basename "$f").gz"; done

(
  export CUDA_VISIBLE_DEVICES=0
  cd "$build" && timeout "${CTEST_LIMIT_S:-330}" ctest -R 'gpu\.(capture_range|endings)\.' \
    --output-on-failure --timeout 300 > "$work/logs/ctest.log" 2>&1
  note "ctest capture_range, endings: exit $?"
  kept="$build/tests/gpu/capture_range/out_on_demand/launch-window1.json"
  [ -e "$kept" ] && gzip -c "$kept" > "$OUT/launch-window1.json.gz"
) &
tests=$!
(
  export CUDA_VISIBLE_DEVICES=1
  timeout "${KEYS_LIMIT_S:-330}" python3 "$root/bench/counters_default_vs_all.py" --flopline "$fl" \
    --out "$work/keys" --timeout 300 > "$work/logs/default-vs-all.log" 2>&1
  note "default --counters against --counters=all: exit $?"
) &
keys=$!
wait "$tests" "$keys"
tar czf "$OUT/logs.tgz" -C "$work" logs
echo "== straggler"; tail -8 "$work/logs/ranks-straggler.log"
echo "== ctest"; grep -E "Test +#|tests passed|FAIL|window" "$work/logs/ctest.log" | tail -24
echo "== default against all"; tail -30 "$work/logs/default-vs-all.log"
echo "== summary"; cat "$summary"
