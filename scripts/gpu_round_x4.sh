#!/usr/bin/env bash
# One four-GPU call that runs the checks of streaming capture, GPU metrics, counters on
# NCCL jobs and the multi-rank reports side by side, within the device tool's 10 minutes:
#   GPUs 0-2   scripts/gpu_streaming.sh: plain, --gpu-metrics and SIGKILL runs at 30,000
#              launches a second (STREAMING_MINUTES, default 8)
#   GPU 3      the GPU-metrics counter test with streaming and with --flush-interval off
#              (and one trace of each kept), then tests/gpu/ranks' tf32 and batch diffs
#   GPUs 2,3   once the kill run is over: the straggler check, DDP under --counters
#              (bench/counters_default_vs_all.py --ddp) and the NCCL collectives check
# The device tool brings back at most 8 files: logs go into $OUT/logs.tgz; the summary
# is printed last.
#   Run there: ln -sfn build-gpu-slim build-gpu; scripts/gpu_round_x4.sh
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work=/tmp/flopline-round
source "$root/scripts/gpu_round_lib.sh"

(OUT="$work" STREAMING_FORMAT="${STREAMING_FORMAT:-json}" STREAMING_READ="${STREAMING_READ:-summary}" STREAMING_MINUTES="${STREAMING_MINUTES:-8}" STREAMING_KILL_AT="${STREAMING_KILL_AT:-5}" \
  timeout "${STREAMING_LIMIT_S:-575}" "$root/scripts/gpu_streaming.sh" > "$work/logs/streaming.log" 2>&1) &
streaming=$!

# GPU 3: GPU metrics with and without streaming, then the single-GPU diffs.
(
  export CUDA_VISIBLE_DEVICES=3
  for mode in streaming off; do
    env_flush=(); [ "$mode" = off ] && env_flush=(env FLOPLINE_FLUSH_INTERVAL=off)
    (cd "$build/tests/gpu/counters" && timeout 60 "${env_flush[@]}" ./gpu_counter_tests \
      --gtest_filter='*GpuMetricsShow*' --gtest_brief=1 > "$work/logs/gpu-metrics-$mode.log" 2>&1)
    note "GPU metrics test, flush $mode: exit $?"
    timeout 60 "${env_flush[@]}" "$fl" run --gpu-metrics=50us -o "$work/gm-$mode.json" -- sh -c \
      "$build/samples/matmul_bench --size 4096 --provider cublas --dtype bf16 --reps 20 && $build/samples/vector_add --sizes 67108864 --blocks 256 --reps 20" \
      > "$work/logs/gm-run-$mode.log" 2>&1
    ls "$work"/gm-"$mode"*.json 2>/dev/null | head -2 | while read -r f; do gzip -c "$f" > "$OUT/$(basename "$f").gz"; done
  done
  timeout 200 python3 "$root/tests/gpu/ranks/check_ranks.py" --flopline "$fl" --out "$work/ranks1" \
    --parts tf32,batch > "$work/logs/ranks-diff.log" 2>&1
  note "rank checks tf32,batch: exit $?"
) &
lane3=$!

# GPUs 2,3 once the kill run has ended and lane 3 is done.
wait "$lane3"
for _ in $(seq 1 400); do
  grep -q "kill: ended" "$work/streaming/check.log" 2>/dev/null && break
  kill -0 "$streaming" 2>/dev/null || break
  sleep 1
done
note "kill run over; two-GPU checks on GPUs 2,3"
export CUDA_VISIBLE_DEVICES=2,3
timeout 150 python3 "$root/tests/gpu/ranks/check_ranks.py" --flopline "$fl" --out "$work/ranks2" \
  --parts straggler > "$work/logs/ranks-straggler.log" 2>&1
note "rank check straggler: exit $?"
# Mangled names on a real trace, and HTA against the per-rank breakdown on the same two
# NCCL traces (HTA from build-gpu/hta when carried; exit 77 when pandas is missing).
straggler_dir="$work/ranks2/straggler"
first=$(ls "$straggler_dir"/*.json 2>/dev/null | head -1)
if [ -n "$first" ]; then
  grep -c '"mangledKernelNames"' "$first" > "$work/logs/mangled.log" 2>&1
  "$fl" stats "$first" --names mangled --top 8 >> "$work/logs/mangled.log" 2>&1
  note "mangled names: key in file $(head -1 "$work/logs/mangled.log"), rows with _Z: $(grep -c '_Z' "$work/logs/mangled.log")"
fi
if [ -d "$build/hta" ]; then
  timeout 120 python3 "$root/scripts/compare_hta.py" --hta "$build/hta" --flopline "$fl" \
    "$straggler_dir" > "$work/logs/hta.log" 2>&1
  note "HTA against flopline on the straggler traces: exit $?"
fi
left=$(( 560 - $(since) ))
if [ "$left" -gt 60 ]; then
  timeout $(( left < 120 ? left - 10 : 110 )) python3 "$root/bench/counters_default_vs_all.py" --flopline "$fl" \
    --out "$work/ddp" --ddp --timeout 100 > "$work/logs/ddp-counters.log" 2>&1
  note "DDP under --counters: exit $?"
fi
left=$(( 560 - $(since) ))
if [ "$left" -gt 60 ]; then
  timeout $(( left - 10 )) python3 "$root/tests/gpu/nccl/check_collectives.py" --flopline "$fl" \
    --out "$work/nccl" --timeout $(( left - 20 )) > "$work/logs/nccl.log" 2>&1
  note "NCCL collectives check: exit $?"
fi
unset CUDA_VISIBLE_DEVICES
wait "$streaming"
note "streaming: exit $?"
cp "$work/streaming/check.log" "$work/logs/streaming-check.log" 2>/dev/null
for m in plain metrics kill; do
  for f in rss.txt run.log row.json; do
    [ -e "$work/streaming/$m/$f" ] && cp "$work/streaming/$m/$f" "$work/logs/streaming-$m-$f"
  done
done
tar czf "$OUT/logs.tgz" -C "$work" logs
for f in ranks-diff.log ranks-straggler.log; do echo "== $f"; tail -14 "$work/logs/$f"; done
echo "== DDP under --counters"; tail -12 "$work/logs/ddp-counters.log" 2>/dev/null
echo "== NCCL"; tail -6 "$work/logs/nccl.log" 2>/dev/null
echo "== HTA"; tail -14 "$work/logs/hta.log" 2>/dev/null
echo "== GPU metrics"; grep -hE "Failure|Expected|actual|PASSED|FAILED" "$work"/logs/gpu-metrics-*.log | head -12
echo "== streaming"; tail -8 "$work/logs/streaming-check.log" 2>/dev/null
echo "== summary"; cat "$summary"
