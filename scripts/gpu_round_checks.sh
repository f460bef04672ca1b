#!/usr/bin/env bash
# One four-GPU call for the checks owed after a change to capture or counters:
#   GPUs 0,1  every gpu-labelled test but the kernels', capture windows', endings' and
#             the default-against-all one (the DDP, NCCL and rank tests among them)
#   GPUs 2,3  DDP under --counters (DDP_MODES: default, and unflushed for
#             FLOPLINE_COUNTERS_FORCED_FLUSH=0), each output line stamped with its time; past DDP_LIMIT_S
#             (default 200) every thread's stack (scripts/gpu_stacks.sh), then the
#             traces' own notes (late records, lost measurements, flows);
#             then GPU metrics around matmuls with and without streaming, three times
#             each: where the samples end against the last kernel; then the capture
#             window and endings tests (on demand's window files among them); the
#             straggler job (its two traces gzipped into $OUT for HTA); default
#             --counters against --counters=all with its figures (the bench, in place
#             of the ctest that runs it without printing them)
# Logs go into $OUT/logs.tgz; the summary is printed last.
#   Run there: ln -sfn build-gpu-slim build-gpu; scripts/gpu_round_checks.sh
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work=/tmp/flopline-checks
source "$root/scripts/gpu_round_lib.sh"
stamp() { python3 -u -c 'import sys,time
t0=time.monotonic()
for line in sys.stdin: sys.stdout.write("%7.2f %s" % (time.monotonic()-t0, line))'; }

(
  export CUDA_VISIBLE_DEVICES=0,1 FLOPLINE_GPU_TEST_OUT="$work/gpu-test-traces"
  cd "$build" && timeout "${CTEST_LIMIT_S:-540}" ctest -L gpu \
    -E 'gpu\.(kernels|capture_range|endings)\.|DefaultAgreesWithEveryLaunchMeasured' \
    --output-on-failure --timeout 300 > "$work/logs/ctest.log" 2>&1
  note "ctest -L gpu but capture_range, endings: exit $?"
) &
tests=$!

export CUDA_VISIBLE_DEVICES=2,3
# DDP under --counters, with (the default) or without the forced flush after each
# measured launch (FLOPLINE_COUNTERS_FORCED_FLUSH, docs/COUNTERS.md): its late records
# and flows.
ddp_run() {
  local mode="$1" d="$work/ddp-$1" t0 job
  mkdir -p "$d"
  local env_mode=(); [ "$mode" = unflushed ] && env_mode=(env FLOPLINE_COUNTERS_FORCED_FLUSH=0)
  t0=$(date +%s)
  (FLOPLINE_COUNTERS_DEBUG=1 timeout -s KILL $(( ${DDP_LIMIT_S:-200} + 90 )) "${env_mode[@]}" "$fl" run --counters \
    -o "$d/ddp.json" -- torchrun --standalone --nproc_per_node=2 "$root/tests/gpu/counters/ddp_loop.py" 2>&1 |
    stamp > "$work/logs/ddp-$mode.log") &
  job=$!
  while kill -0 "$job" 2>/dev/null && [ $(( $(date +%s) - t0 )) -lt "${DDP_LIMIT_S:-200}" ]; do sleep 2; done
  if kill -0 "$job" 2>/dev/null; then
    note "DDP under --counters ($mode) still running at ${DDP_LIMIT_S:-200} s: stacks in ddp-$mode-stacks.log"
    "$root/scripts/gpu_stacks.sh" ddp_loop.py > "$work/logs/ddp-$mode-stacks.log" 2>&1
    pkill -KILL -f ddp_loop.py; pkill -KILL -f torchrun
  fi
  wait "$job"
  note "DDP under --counters ($mode): ended after $(( $(date +%s) - t0 )) s"
  echo "-- $mode" >> "$work/logs/ddp-notes.log"
  (cd "$root/bench" && python3 -c '
import os, sys
import counters_default_vs_all as c
d = sys.argv[1]
for f in sorted(os.listdir(d)):
    if not f.endswith(".json"): continue
    p = os.path.join(d, f); ks = c.kernels(p); flows = c.flow_ends(p); notes = c.flopline_notes(p)
    basis = {}
    for k in ks:
        s = str(k.get("args", {}).get("flops source", "none")); basis[s] = basis.get(s, 0) + 1
    unlinked = sum(1 for k in ks if (k.get("pid"), k.get("tid"), k.get("ts")) not in flows)
    print(f, len(ks), "kernels;", unlinked, "without a launch flow;", basis)
    for key in ("GPU records after their call was written", "counters without their kernel",
                "GPU records unfinished at a forced flush", "droppedRecords"):
        if key in notes: print("  ", key + ":", notes[key])
' "$d") >> "$work/logs/ddp-notes.log" 2>&1
  grep -h "counters: time measuring" "$work/logs/ddp-$mode.log" | head -2 >> "$work/logs/ddp-notes.log"
}
for mode in ${DDP_MODES:-default}; do ddp_run "$mode"; done

# GPU metrics around matmuls: where the samples end against the last kernel's end.
export CUDA_VISIBLE_DEVICES=2
for i in 1 2 3; do
  for mode in streaming off; do
    env_flush=(); [ "$mode" = off ] && env_flush=(env FLOPLINE_FLUSH_INTERVAL=off)
    g="$work/gm-$mode-$i"; mkdir -p "$g"
    FLOPLINE_GPU_METRICS_DEBUG=1 FLOPLINE_WRITE_DEBUG=1 timeout 60 "${env_flush[@]}" "$fl" run --no-summary \
      --gpu-metrics=50us -o "$g/gm.json" -- "$build/samples/matmul_bench" --size 4096 --provider cublas \
      --dtype bf16 --reps 200 2>&1 | stamp > "$work/logs/gm-$mode-$i.log"
    python3 - "$g/gm.json" >> "$work/logs/gm-summary.log" 2>&1 <<PY
import json, sys
d = json.load(open(sys.argv[1])); ev = d["traceEvents"]
ks = [e for e in ev if e.get("cat") == "kernel"]
cs = sorted(float(e["ts"]) for e in ev if e.get("ph") == "C")
last = max(float(k["ts"]) + float(k["dur"]) for k in ks)
mm = [k for k in ks if k["name"].startswith("nvjet")]
inside = sum(1 for t in cs if mm and min(float(k["ts"]) for k in mm) <= t <= last)
print("$mode $i: %d kernels, %d samples, samples end %.1f ms %s the last kernel's end, %d samples during the matmuls" % (
    len(ks), len(cs), abs(cs[-1] - last) / 1000 if cs else -1, "after" if cs and cs[-1] >= last else "before", inside))
PY
  done
done
note "GPU metrics runs done"
# The capture-window and endings tests on GPU 2, beside the rest.
(cd "$build" && FLOPLINE_GPU_TEST_OUT="$work/gpu-test-traces-2" timeout $(( ${CTEST_LIMIT_S:-540} - $(since) )) \
  ctest -R 'gpu\.(capture_range|endings)\.' --output-on-failure --timeout 300 > "$work/logs/ctest-windows.log" 2>&1)
note "ctest capture_range, endings: exit $?"
# The straggler job on GPUs 2,3 (its traces come back for HTA, scripts/compare_hta.py,
# run where HTA's plotly is), then default against every launch on GPU 2 with its figures.
export CUDA_VISIBLE_DEVICES=2,3
timeout 150 python3 "$root/tests/gpu/ranks/check_ranks.py" --flopline "$fl" --out "$work/ranks" \
  --parts straggler > "$work/logs/ranks-straggler.log" 2>&1
note "straggler check: exit $?"
for f in "$work"/ranks/straggler/*.json; do [ -e "$f" ] && gzip -c "$f" > "$OUT/$(basename "$f").gz"; done
export CUDA_VISIBLE_DEVICES=2
left=$(( ${CTEST_LIMIT_S:-540} - $(since) ))
if [ "$left" -gt 200 ]; then
  timeout $(( left - 10 )) python3 "$root/bench/counters_default_vs_all.py" --flopline "$fl" \
    --out "$work/keys" --timeout $(( left - 20 )) > "$work/logs/default-vs-all.log" 2>&1
  note "default --counters against --counters=all: exit $?"
else
  note "default --counters against --counters=all: skipped, $left s left"
fi
wait "$tests"
tar czf "$OUT/logs.tgz" -C "$work" logs
echo "== ctest"; grep -hE "tests passed|Failed|\*\*\*|Not Run|Timeout|window" "$work"/logs/ctest*.log | tail -30
echo "== DDP"; cat "$work/logs/ddp-notes.log"
echo "== DDP stacks"; cat "$work"/logs/ddp-*-stacks.log 2>/dev/null | grep -E "== pid|wchan" | head -30
echo "== GPU metrics"; cat "$work/logs/gm-summary.log"
echo "== straggler"; tail -10 "$work/logs/ranks-straggler.log" 2>/dev/null
echo "== default against all"; tail -12 "$work/logs/default-vs-all.log" 2>/dev/null
echo "== summary"; cat "$summary"
