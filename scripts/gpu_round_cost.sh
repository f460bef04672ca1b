#!/usr/bin/env bash
# One four-GPU call for the cost of default --counters and the checks owed with it:
#   GPU 0     bench/train_loop.py once, untimed, to warm the compile caches; then 60
#             steps after 10 of warm-up uncounted and under default --counters,
#             COST_PAIRS times (default 2): wall times, measurements and why each key
#             was new (FLOPLINE_COUNTERS_DEBUG)
#   GPU 1     the endings and counters gpu tests (gpu_ending_tests, gpu_counter_tests),
#             then default --counters against --counters=all on work_keys_loop.py
#   GPUs 2,3  the DDP job under --counters (late, lost and unfinished records fail it),
#             then every rank check (tests/gpu/ranks/check_ranks.py)
#   passcost  (not in the default parts) bench/counters_pass_cost.cu at 0 and 16 GiB held,
#             on COST_GPU after the cost pairs: each configuration's passes, cost and
#             values (docs/COUNTERS.md, "One-pass parts")
# ROUND_PARTS (default "cost tests ranks") picks the parts and COST_GPU, TEST_GPU and
# RANK_GPUS (default 0, 1 and 2,3) their GPUs: on two GPUs, one call with
# ROUND_PARTS="cost tests" and one with ROUND_PARTS=ranks RANK_GPUS=0,1.
# Logs go into $OUT/logs.tgz; the summary is printed last.
#   Run there: ln -sfn build-gpu-slim build-gpu; scripts/gpu_round_cost.sh
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work=/tmp/flopline-cost
source "$root/scripts/gpu_round_lib.sh"
limit="${ROUND_LIMIT_S:-560}"
parts=" ${ROUND_PARTS:-cost tests ranks} "
has() { [[ "$parts" == *" $1 "* ]]; }
cost=""; tests=""; passcost=""
# CUPTI's profiler serves one process per GPU at a time: parts that run at once on one GPU
# get CUPTI_ERROR_HARDWARE_BUSY, and a DDP rank's replay beside a counted test hung there.
# (passcost waits for cost, so those two may share one.)
shares() { local g; for g in ${2//,/ }; do [[ ",$1," == *",$g,"* ]] && return 0; done; return 1; }
for pair in "cost:${COST_GPU:-0} tests:${TEST_GPU:-1}" "cost:${COST_GPU:-0} ranks:${RANK_GPUS:-2,3}" \
            "tests:${TEST_GPU:-1} ranks:${RANK_GPUS:-2,3}"; do
  a=${pair%% *}; b=${pair##* }
  if has "${a%%:*}" && has "${b%%:*}" && shares "${a#*:}" "${b#*:}"; then
    echo "gpu_round_cost.sh: parts ${a%%:*} (GPUs ${a#*:}) and ${b%%:*} (GPUs ${b#*:}) would" \
      "count on one GPU at once; give them separate GPUs or separate calls" >&2
    exit 2
  fi
done

has cost && (
  export CUDA_VISIBLE_DEVICES="${COST_GPU:-0}"
  # A fresh machine compiles train_loop's kernels on the first run (run_s 10 s against
  # 3 s warm): one uncounted run first, not timed, so every pair finds warm caches.
  timeout 150 "$fl" run --no-summary -o "$work/warm.json" -- python3 "$root/bench/train_loop.py" \
    --steps 5 --warmup 10 --label warm-up > "$work/logs/cost-warm-up.log" 2>&1
  for i in $(seq 1 "${COST_PAIRS:-2}"); do
    t0=$(date +%s.%N)
    timeout 150 "$fl" run --no-summary -o "$work/plain-$i.json" -- python3 "$root/bench/train_loop.py" \
      --steps 60 --warmup 10 --label plain > "$work/logs/cost-plain-$i.log" 2>&1
    t1=$(date +%s.%N)
    FLOPLINE_COUNTERS_DEBUG=1 timeout 240 "$fl" run --counters -o "$work/counted-$i.json" -- python3 \
      "$root/bench/train_loop.py" --steps 60 --warmup 10 --label counted > "$work/logs/cost-counted-$i.log" 2>&1
    t2=$(date +%s.%N)
    python3 - "$work/logs/cost-counted-$i.log" "$t0" "$t1" "$t2" "$i" "$work/logs/cost-plain-$i.log" \
      >> "$work/logs/cost-summary.log" <<'PY'
import re, sys
log, t0, t1, t2, i, plain_log = sys.argv[1], *map(float, sys.argv[2:5]), sys.argv[5], sys.argv[6]
text = open(log, errors="replace").read()
# The steady state: train_loop's median step after its warm-up, which a long run's cost
# tends to once every piece of work has been measured.
def median_ms(t):
    m = re.search(r"median_ms=([0-9.]+)", t)
    return float(m.group(1)) if m else float("nan")
step_plain = median_ms(open(plain_log, errors="replace").read())
step_counted = median_ms(text)
why = {}
for m in re.finditer(r"counters: measuring .*?\(measurement \d+\): (.*?); metrics", text):
    w = m.group(1)
    w = "first of its shape" if w.startswith("first") else "differs in " + w.split(" in ")[1].split(":")[0]
    why[w] = why.get(w, 0) + 1
print(f"pair {i}: uncounted {t1 - t0:.1f} s, default --counters {t2 - t1:.1f} s ({(t2 - t1) / (t1 - t0):.2f}x); "
      f"{sum(why.values())} measurements: " + ", ".join(f"{v} {k}" for k, v in sorted(why.items(), key=lambda x: -x[1])[:6]))
print(f"    median step: uncounted {step_plain:.2f} ms, default --counters {step_counted:.2f} ms")
for line in text.splitlines():
    if "counters: time measuring" in line or "counted kernel time" in line or line.startswith("counters: of"):
        print("   ", line.strip()[:200])
PY
  done
  note "train_loop cost pairs done"
) &
has cost && cost=$!
has passcost && (
  [ -n "$cost" ] && while kill -0 "$cost" 2>/dev/null; do sleep 2; done  # the GPU to itself
  CUDA_VISIBLE_DEVICES="${COST_GPU:-0}" timeout 240 "$build/bench/counters_pass_cost" 0,16 \
    > "$work/logs/pass-cost.log" 2>&1
  note "pass-cost experiment: exit $?"
) &
has passcost && passcost=$!

has tests && (
  export CUDA_VISIBLE_DEVICES="${TEST_GPU:-1}" FLOPLINE_GPU_TEST_OUT="$work/gpu-test-traces"
  (cd "$build" && timeout 300 ctest -R 'gpu\.(endings|counters)\.' -E 'DdpJob|DefaultAgrees' \
    --output-on-failure --timeout 200 > "$work/logs/ctest.log" 2>&1)
  note "ctest endings, counters: exit $?"
  left=$(( limit - $(since) ))
  timeout $(( left - 5 )) python3 "$root/bench/counters_default_vs_all.py" --flopline "$fl" \
    --out "$work/keys" --timeout $(( left - 15 )) --top 8 > "$work/logs/default-vs-all.log" 2>&1
  note "default --counters against --counters=all: exit $?"
) &
has tests && tests=$!

if has ranks; then
  export CUDA_VISIBLE_DEVICES="${RANK_GPUS:-2,3}"
  timeout 150 python3 "$root/bench/counters_default_vs_all.py" --flopline "$fl" --out "$work/ddp" \
    --ddp --timeout 140 > "$work/logs/ddp.log" 2>&1
  note "DDP under --counters: exit $?"
  timeout $(( limit - 30 - $(since) )) python3 "$root/tests/gpu/ranks/check_ranks.py" --flopline "$fl" \
    --out "$work/ranks" > "$work/logs/ranks.log" 2>&1
  note "rank checks: exit $?"
  cp "$work"/ranks/*.log "$work/logs/" 2>/dev/null
fi
# shellcheck disable=SC2086
wait $cost $tests $passcost
tar czf "$OUT/logs.tgz" -C "$work" logs
touch "$work"/logs/{ctest,ddp,ranks,default-vs-all,cost-summary,pass-cost}.log
echo "== ctest"; grep -hE "tests passed|Failed|\*\*\*|Not Run|Timeout" "$work/logs/ctest.log" | tail -12
echo "== DDP"; tail -14 "$work/logs/ddp.log"
echo "== ranks"; tail -16 "$work/logs/ranks.log"
echo "== default against all"; tail -16 "$work/logs/default-vs-all.log"
echo "== cost"; cat "$work/logs/cost-summary.log"
echo "== pass cost"; cat "$work/logs/pass-cost.log"
echo "== summary"; cat "$summary"
