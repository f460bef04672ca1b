#!/usr/bin/env bash
# Everything issue-sized about hardware counters and the files of a run, on a GPU machine,
# in one call: the gpu tests of counters and run files, flopline against Nsight Compute
# on a training step, the counted share of a training loop's kernel time and the cost of
# --counters, and what --gpu-metrics costs per step. Logs and traces go to $OUT; a short
# table is printed last.
#   Build here:  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLOPLINE_BUILD_VIEWER=OFF
#                cmake --build build-gpu && scripts/gpu_pack.sh --slim
#   Run there:   scripts/gpu_counters.sh [all|tests|ncu|dram|bundle|loop|metrics|overhead|selftime ...]   (carry build-gpu-slim)
# all: every gpu test; tests: those of counters, run files and endings only; others: every
# gpu test but those; runs: the run-file tests only (for a two-GPU kind: torchrun, 2 ranks).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[ -e "$root/build-gpu" ] || ln -s build-gpu-slim "$root/build-gpu"
build="${FLOPLINE_GPU_BUILD:-$root/build-gpu}"
OUT="${OUT:-$root/gpu-out}"
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
source "$root/scripts/gpu_env.sh"
flopline="$build/profiler/flopline"
parts=("$@")
[ ${#parts[@]} -gt 0 ] || parts=(tests ncu loop metrics)
status=0
summary="$OUT/summary.txt"
: > "$summary"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/machine.txt"

for part in "${parts[@]}"; do
  case "$part" in
  all)
    echo "== every gpu test"
    (cd "$build" && ctest -L gpu --output-on-failure 2>&1) | tee "$OUT/ctest.log"
    grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run" "$OUT/ctest.log" | sed 's/^/ctest: /' >> "$summary"
    grep -qE "100% tests passed" "$OUT/ctest.log" || status=1
    ;;
  overhead)
    # Interleaved rounds of the four configurations; as many as fit in what is left of
    # FLOPLINE_CALL_SECONDS (the device call's limit) after the parts before, at least one.
    left=$(( ${FLOPLINE_CALL_SECONDS:-570} - SECONDS ))
    echo "== the cost of recording on a training step (${left} s left)"
    if [ "$left" -lt 120 ]; then echo "overhead: not enough time left for one round" | tee -a "$summary"; continue; fi
    python3 "$root/bench/bench_train_overhead.py" --flopline "$flopline" \
      --floor "$build/bench/libflopline_floor.so" --configs none,floor,flopline,torch \
      --rounds "${FLOPLINE_OVERHEAD_ROUNDS:-10}" --steps "${FLOPLINE_OVERHEAD_STEPS:-30}" --warmup 10 \
      --layers "${FLOPLINE_OVERHEAD_LAYERS:-6}" --cpus "${FLOPLINE_OVERHEAD_CPUS:-}" \
      --deadline "$left" --out "$OUT/overhead" 2>&1 | tee "$OUT/overhead.log"
    sed -n '/^config/,$p' "$OUT/overhead.log" >> "$summary"
    grep -E "^deadline" "$OUT/overhead.log" >> "$summary"
    ;;
  selftime)
    # Where flopline's own time goes on the training step: flopline beside itself with
    # FLOPLINE_SELF_TIMING=1 (its step time shows the timing's own cost).
    echo "== flopline's own time on a training step"
    python3 "$root/bench/bench_train_overhead.py" --flopline "$flopline" \
      --configs none,flopline,self-timed --rounds "${FLOPLINE_SELFTIME_ROUNDS:-3}" --steps 30 --warmup 10 \
      --layers "${FLOPLINE_OVERHEAD_LAYERS:-6}" --out "$OUT/selftime" 2>&1 | tee "$OUT/selftime.log"
    sed -n '/^config/,$p' "$OUT/selftime.log" >> "$summary"
    ;;
  tests|others|runs)
    case "$part" in
      tests) select=(-R "gpu\.(counters|runs|endings)\.") ;;
      others) select=(-E "gpu\.(counters|runs|endings)\.") ;;
      runs) select=(-R "gpu\.runs\.") ;;
    esac
    echo "== gpu tests: $part"
    (cd "$build" && ctest -L gpu "${select[@]}" --output-on-failure 2>&1) | tee "$OUT/ctest-$part.log"
    grep -E "tests passed|tests failed|\(Failed\)|\(Timeout\)|Not Run" "$OUT/ctest-$part.log" |
      sed "s/^/ctest $part: /" >> "$summary"
    grep -qE "100% tests passed" "$OUT/ctest-$part.log" || status=1
    ;;
  bundle)
    # The two bundled --counters traces (samples/traces/README.md): copy them from
    # $OUT/bundle.tgz into samples/traces/.
    echo "== bundled traces recorded with --counters"
    mkdir -p "$OUT/bundle"
    gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -oE "H100|H200" | tr A-Z a-z)
    "$flopline" run --counters -o "$OUT/bundle/matmul_bench_${gpu}_counters.json" -- \
      "$build/samples/matmul_bench" --size 4096 --provider all --dtype bf16 --reps 2 --seed 1 \
      > "$OUT/bundle/matmul.log" 2>&1 || status=1
    "$flopline" run --counters -o "$OUT/bundle/train_loop_${gpu}_counters.json" -- \
      python3 "$root/bench/train_loop.py" --steps 3 --warmup 2 > "$OUT/bundle/train_loop.log" 2>&1 || status=1
    tail -n 3 "$OUT"/bundle/*.log | tee -a "$summary"
    (cd "$OUT/bundle" && gzip -9 -f ./*.json && tar czf "$OUT/bundle.tgz" . && cd .. && rm -rf bundle)
    ;;
  dram)
    # What counted DRAM bytes hold: kernels of known traffic, flopline and ncu's two cache settings.
    echo "== DRAM bytes of kernels of known traffic"
    python3 "$root/bench/dram_bytes_probe.py" --probe "$build/tests/gpu/counters/dram_probe" --flopline "$flopline" \
      --out "$OUT/dram" 2>&1 | tee "$OUT/dram.log"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    cat "$OUT/dram.log" >> "$summary"
    ;;
  ncu)
    echo "== flopline against Nsight Compute, five kernels of a training step"
    python3 "$root/bench/counters_vs_ncu.py" --flopline "$flopline" --out "$OUT/ncu" \
      --cache-control "${FLOPLINE_NCU_CACHE_CONTROL:-all}" 2>&1 | tee "$OUT/ncu.log"
    rc=${PIPESTATUS[0]}
    [ "$rc" -eq 0 ] || tail -20 "$OUT/ncu/ncu.log" 2>/dev/null
    [ "$rc" -eq 0 ] || status=1
    grep -E "^(matmul|triton|elementwise|reduction|optimizer) " "$OUT/ncu.log" >> "$summary"
    ;;
  loop)
    echo "== the training loop with and without --counters"
    timed() {  # LABEL CMD...: runs CMD, prints "LABEL_wall_s S"
      local label=$1 t0 t1; shift
      t0=$(date +%s.%N); "$@"; t1=$(date +%s.%N)
      echo "${label}_wall_s $(python3 -c "print(round($t1 - $t0, 2))")"
    }
    for round in 1 2; do
      timed plain "$flopline" run --no-summary -o "$OUT/loop-plain.json" -- \
        python3 "$root/bench/train_loop.py" --steps 60 --warmup 10 --label plain 2>&1 | grep -E "train_loop|wall_s" | tee -a "$OUT/loop.log"
      timed counted "$flopline" run --counters -o "$OUT/loop-counted.json" -- \
        python3 "$root/bench/train_loop.py" --steps 60 --warmup 10 --label counted 2>&1 | tee "$OUT/loop-counted-run.log" | grep -E "train_loop|wall_s|counters" | tee -a "$OUT/loop.log"
    done
    python3 "$root/bench/counted_coverage.py" "$OUT/loop-counted.json" --min-pct 90 | tee -a "$OUT/loop.log" || status=1
    grep -E "wall_s|kernel time with|train_loop" "$OUT/loop.log" >> "$summary"
    ;;
  metrics)
    echo "== --gpu-metrics per step, interleaved"
    python3 "$root/bench/bench_train_overhead.py" --flopline "$flopline" --configs flopline,gpu-metrics \
      --rounds "${FLOPLINE_METRICS_ROUNDS:-4}" --cpus "${FLOPLINE_OVERHEAD_CPUS:-}" --out "$OUT/metrics" 2>&1 | tee "$OUT/metrics.log"
    # The samples themselves: counter events in each trace, and what flopline said of them.
    for t in "$OUT"/metrics/gpu-metrics-*.trace.json; do
      python3 -c "import json,sys; e=json.load(open(sys.argv[1]))['traceEvents']; \
print(sys.argv[1].rsplit('/',1)[1], sum(1 for x in e if x.get('ph') == 'C'), 'counter events')" "$t"
    done | tee -a "$OUT/metrics.log" >> "$summary"
    grep -h "GPU metrics" "$OUT"/metrics/*.log | sort | uniq -c >> "$summary"
    sed -n '/^config/,$p' "$OUT/metrics.log" >> "$summary"
    ;;
  *) echo "unknown part $part"; status=2 ;;
  esac
done
(cd "$OUT" && tar czf traces.tgz --exclude='*.tgz' --exclude='*.trace.json' ncu/*.csv loop-counted.json \
  metrics/summary.json metrics/*.log overhead/*.json overhead/*.log selftime/*.json selftime/*.log 2>/dev/null)
# The gpu tests' own logs and traces, for reading a failure here.
(cd "$build/tests/gpu" && tar czf "$OUT/test-out.tgz" counters/out/*.log counters/out/matmul_fp32_1536.json \
  run_files/out endings/out/*.log 2>/dev/null)
# At most a few files come back: the ncu outputs go into one archive.
(cd "$OUT" && dirs=$(ls -d ncu dram 2>/dev/null) && [ -n "$dirs" ] && tar czf ncu.tgz $dirs && rm -rf $dirs)
echo
echo "== summary"
cat "$summary"
exit $status
