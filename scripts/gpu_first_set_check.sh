#!/usr/bin/env bash
# One single-GPU call that checks default --counters after a change to how it measures
# (first written for the two-pass first set, function_metrics.h), in the order that
# matters when device time runs short:
#   1. bench/train_loop.py, 60 steps, uncounted and counted (after an untimed warm-up):
#      wall times, measurements by kind (scripts/measurement_times.py), incomplete ones;
#   2. bench/counters_default_vs_all.py on work_keys_loop.py: per-launch agreement;
#   3. ctest's endings and counters gpu tests, in what time is left.
# CHECK_LIMIT_S (default 400) bounds the whole call. Logs go into $OUT/check.tgz; the
# tables are printed last. The default run of step 2 logs its measurements
# (FLOPLINE_COUNTERS_DEBUG): the table names the sets that measured any function whose
# launches disagree.
# Switches in the environment reach every run (the default-against-all reference,
# --counters=all, ignores the first set), e.g. to start every function with the
# learning set:
#   Run there: ln -sfn build-gpu-slim build-gpu; FLOPLINE_COUNTERS_FIRST_SET=learning \
#     scripts/gpu_first_set_check.sh
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work=/tmp/flopline-first-set-check
source "$root/scripts/gpu_round_lib.sh"
export CUDA_VISIBLE_DEVICES="${CHECK_GPU:-0}"
limit="${CHECK_LIMIT_S:-400}"
table="$work/logs/table.txt"
secs() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$2"; }
timeout 120 "$fl" run --no-summary -o "$work/warm.json" -- python3 "$root/bench/train_loop.py" \
  --steps 2 --warmup 3 --label warm-up > "$work/logs/warm-up.log" 2>&1
note "warm-up: exit $?"
t0=$(date +%s.%N)
timeout 120 "$fl" run --no-summary -o "$work/plain.json" -- python3 "$root/bench/train_loop.py" \
  --steps 60 --warmup 10 --label plain > "$work/logs/train-plain.log" 2>&1
t1=$(date +%s.%N)
FLOPLINE_COUNTERS_DEBUG=1 timeout 150 "$fl" run --counters -o "$work/counted.json" -- python3 \
  "$root/bench/train_loop.py" --steps 60 --warmup 10 --label counted > "$work/logs/train-counted.log" 2>&1
rc=$?
t2=$(date +%s.%N)
note "train_loop pair: counted exit $rc"
{
  plain=$(secs "$t0" "$t1"); counted=$(secs "$t1" "$t2")
  echo "== train_loop 60 steps: uncounted $plain s, default --counters $counted s" \
    "($(python3 -c "import sys; print(f'{float(sys.argv[2]) / float(sys.argv[1]):.2f}x')" "$plain" "$counted"))"
  grep -h "^train_loop" "$work/logs/train-plain.log" "$work/logs/train-counted.log"
  python3 "$root/scripts/measurement_times.py" "$work/logs/train-counted.log"
  echo "incomplete: $(grep -c 'counters: measurement [0-9]* incomplete' "$work/logs/train-counted.log")"
  echo "tensor instruction counts read as NaN: $(grep -c 'instructions: [^;]*nan' "$work/logs/train-counted.log")" \
    "of $(grep -c 'instructions: ' "$work/logs/train-counted.log") measurements with them"
  grep -h "incomplete:" "$work/logs/train-counted.log" | sed 's/.*incomplete: //' | sort | uniq -c | head -5
  grep -h "^counters: " "$work/logs/train-counted.log" | cut -c1-220
} >> "$table" 2>&1
left=$(( limit - 70 - $(since) ))
FLOPLINE_COUNTERS_DEBUG=1 timeout "$left" python3 "$root/bench/counters_default_vs_all.py" \
  --flopline "$fl" --out "$work/keys" --timeout $(( left - 10 )) --top 8 \
  > "$work/logs/default-vs-all.log" 2>&1
note "default against all: exit $?"
# The debug lines name functions mangled; the comparison names them demangled.
(c++filt < "$work/keys/on.log" || cat "$work/keys/on.log") > "$work/logs/default-vs-all-on.log" 2>/dev/null
# Which set measured each function whose launches disagree, and what it read.
{
  echo "== sets of the default run's measurements of functions that disagree"
  grep -h "^ .* us \(measured\|same work\)" "$work/logs/default-vs-all.log" | sed 's/.*: //' \
    | cut -c1-60 | sort -u | while read -r name; do
      grep -F "measuring $name" "$work/logs/default-vs-all-on.log" | sed 's/.*(measurement [0-9]*)//' \
        | cut -c1-160 | sort | uniq -c | head -6
    done
} >> "$work/logs/default-vs-all.log" 2>&1
left=$(( limit - 5 - $(since) ))
(cd "$build" && FLOPLINE_GPU_TEST_OUT="$work/gpu-test-traces" timeout "$left" ctest \
  -R 'gpu\.(endings|counters)\.' -E 'DdpJob|DefaultAgrees' --output-on-failure --timeout 120 \
  > "$work/logs/ctest.log" 2>&1)
note "ctest endings, counters: exit $?"
tar czf "$OUT/check.tgz" -C "$work" logs
cat "$table"
echo "== default against all"; grep -v "^flopline" "$work/logs/default-vs-all.log" | tail -30
echo "== ctest"; grep -hE "tests passed|Failed|\*\*\*|Not Run|Timeout" "$work/logs/ctest.log" | tail -12
echo "== summary"; cat "$summary"
