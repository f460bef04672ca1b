#!/usr/bin/env bash
# Before/after check of a kernels change on one GPU machine, in one call: the kernel gpu
# tests of the after-build, then the kernel benchmarks of both builds in alternating
# rounds (before, after; after, before; ...: whatever the clocks do over the call lands
# on both alike), and last a table of the medians per case with after/before.
#   Build both here (each a Release build without the viewer, packed small):
#     mkdir -p build-before-src && git archive BEFORE_COMMIT | tar -x -C build-before-src
#     cmake -S build-before-src -B build-before -G Ninja -DCMAKE_BUILD_TYPE=Release \
#       -DFLOPLINE_BUILD_VIEWER=OFF -DFLOPLINE_BUILD_BENCH=ON
#     cmake --build build-before -j2 --target bench_softmax bench_matmul
#     cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLOPLINE_BUILD_VIEWER=OFF \
#       -DFLOPLINE_BUILD_BENCH=ON
#     cmake --build build-gpu -j2 --target gpu_kernel_tests bench_softmax bench_matmul
#     scripts/gpu_pack.sh --xz --from build-before --to build-ab-before bench/kernels/bench_softmax \
#       bench/kernels/bench_matmul
#     scripts/gpu_pack.sh --xz --from build-gpu --to build-ab-after tests/gpu/kernels/gpu_kernel_tests \
#       bench/kernels/bench_softmax bench/kernels/bench_matmul
#   Carry build-ab-before and build-ab-after (compressed: about 8 MB together); run there:
#     scripts/gpu_kernels_ab.sh build-ab-before build-ab-after [--rounds N] [--no-tests]
#   (--rounds 0: the tests only; a round of both builds takes a few minutes, so for the
#   10-minute device calls: the tests in one call, --no-tests --rounds 2 in the next)
# Exits 1 when a kernel gpu test failed or a benchmark exited non-zero.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="${OUT:-$root/gpu-out}"
rounds=3 tests=1 builds=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift ;;
    --no-tests) tests=0 ;;
    -h|--help) sed -n 2,20p "$0"; exit 0 ;;
    -*) echo "gpu_kernels_ab.sh: unknown argument $1" >&2; exit 2 ;;
    *) builds+=("$1") ;;
  esac
  shift
done
[ ${#builds[@]} = 2 ] || { echo "gpu_kernels_ab.sh: give the before and the after build folders" >&2; exit 2; }
before="${builds[0]}" after="${builds[1]}"
"$root/scripts/gpu_unpack.sh" "$before" "$after"
mkdir -p "$OUT"
export PATH="/usr/local/cuda/bin:$PATH"
[ -e /usr/local/cuda/lib64/libcublas.so.13 ] && export LD_LIBRARY_PATH="/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
failures=0
{ date -u +%FT%TZ; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader; } | tee "$OUT/machine.txt"

if [ "$tests" = 1 ]; then
  echo "== kernel gpu tests ($after)"
  LD_LIBRARY_PATH="$after/profiler${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
    "$after/tests/gpu/kernels/gpu_kernel_tests" > "$OUT/kernel_tests.log" 2>&1
  rc=$?
  grep -E "^\[  (PASSED|FAILED|SKIPPED) |Failure|skipped:" "$OUT/kernel_tests.log" | head -60
  [ "$rc" = 0 ] || { echo "kernel gpu tests: exit $rc"; failures=$((failures + 1)); }
fi

# The anchors of docs/PERFORMANCE.md (fp32 output; bf16 output at the two large ones),
# a group-rows shape and the split-k square.
softmax_shapes=(--shape 4096 4096 4096 --shape 8192 8192 1024 --shape 16384 2048 128 --shape 16384 1024 64
                --shape 4096 2048 512 --shape 1024 1024 1024)
bf16_out_shapes=(--shape 4096 4096 4096 --shape 8192 8192 1024)
run_benches() {  # run_benches LABEL BUILD ROUND
  local label="$1" build="$2" round="$3" b rc
  for b in "bench_softmax ${softmax_shapes[*]}" "bench_softmax --out bf16 ${bf16_out_shapes[*]}" "bench_matmul --quick"; do
    # The build's rpath names the machine it was built on: its libflopline.so is beside it.
    LD_LIBRARY_PATH="$build/profiler${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
      timeout 400 "$build/bench/kernels/"$b > "$OUT/bench_${label}_${round}.part" 2>&1
    rc=$?
    sed "s/^/build=$label round=$round /" "$OUT/bench_${label}_${round}.part" >> "$OUT/bench_ab.txt"
    [ "$rc" = 0 ] || { echo "$label: $b: exit $rc"; tail -5 "$OUT/bench_${label}_${round}.part"; failures=$((failures + 1)); }
  done
  rm -f "$OUT/bench_${label}_${round}.part"
}
: > "$OUT/bench_ab.txt"
for ((r = 1; r <= rounds; ++r)); do
  echo "== round $r"
  if [ $((r % 2)) = 1 ]; then
    run_benches before "$before" "$r"; run_benches after "$after" "$r"
  else
    run_benches after "$after" "$r"; run_benches before "$before" "$r"
  fi
done

echo
echo "== before/after (median over $rounds rounds; ms; ratio after/before)"
python3 - "$OUT/bench_ab.txt" <<'PY' | tee "$OUT/ab_table.txt"
import collections, statistics, sys
times = collections.defaultdict(lambda: collections.defaultdict(list))
plans = {}  # the after-build's plan per case (the before-build does not print it)
for line in open(sys.argv[1]):
    f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv and not kv.startswith("device"))
    if f.get("bench") == "matmul_softmax":
        case = f"softmax {f['dim']} {f['dtype']}->{f['out']} {f['m']}x{f['n']}x{f['k']}"
        if "plan" in f:
            plans[case] = f["plan"]
        times[case][f["build"]].append(float(f["fused_ms"]))
        times[case + " (cuBLAS+softmax)"][f["build"]].append(float(f["unfused_ms"]))
    elif f.get("bench") == "matmul":
        case = f"matmul {f['path']} {f['dtype']}->{f['out']} {f['m']}x{f['n']}x{f['k']}"
        times[case][f["build"]].append(float(f["ms"]))
ratios = []
print(f"{'case':58} {'before':>9} {'after':>9} {'after/before':>12}  plan (after)")
for case, by in times.items():
    if "before" not in by or "after" not in by:
        continue
    b, a = statistics.median(by["before"]), statistics.median(by["after"])
    mark = "" if 0.97 <= a / b <= 1.03 else "  <-"
    print(f"{case:58} {b:9.4f} {a:9.4f} {a / b:12.3f}  {plans.get(case, '')}{mark}")
    if "(cuBLAS" not in case:
        ratios.append(a / b)
if ratios:
    print(f"ours: {len(ratios)} cases, after/before median {statistics.median(ratios):.3f}, "
          f"range {min(ratios):.3f}-{max(ratios):.3f} (the cuBLAS rows show the noise of the call)")
PY
if [ "$failures" != 0 ]; then
  echo "gpu_kernels_ab.sh: $failures failed (tests or benchmarks; see above)" >&2
  exit 1
fi
