#!/usr/bin/env bash
# The main job: installs what is missing, builds everything an install needs (Release:
# flopline, flopline-view, and with the CUDA toolkit the capture libraries,
# flopline-calibrate, the kernels and the samples), and shows where GPU time goes as
# FLOP/s tables. On a machine with a CUDA GPU it runs the samples under `flopline run`
# (traces in build/main-traces/); without one it shows the bundled traces recorded on an
# H200 (samples/traces/). `cmake --install build --prefix DIR` then installs flopline.
# `build/viewer/flopline-view TRACE` (or `flopline view TRACE`) opens them in the
# desktop timeline.
# Usage: scripts/main.sh [TRACE...]   (given traces: just their tables)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/deps.sh"
flopline_install_packages "${FLOPLINE_BUILD_PACKAGES[@]}" "${FLOPLINE_VIEWER_PACKAGES[@]}"

build="$root/build"
mkdir -p "$build"
# The configure step's own lines say which parts are built and which are off (no CUDA
# toolkit, no viewer libraries) and why; everything else it prints only on failure.
if ! cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLOPLINE_BUILD_TESTS=OFF \
  -DFLOPLINE_BUILD_BENCH=OFF >"$build/configure.log" 2>&1; then
  cat "$build/configure.log" >&2
  exit 1
fi
sed -n 's/^-- flopline: /flopline: /p' "$build/configure.log"
# The default target: every library and program an install needs (tests and benchmarks
# are off above).
cmake --build "$build" --parallel "$(nproc)"

# With a GPU and the CUDA toolkit: record the samples here (a quick version of
# scripts/gpu_samples.sh). Any failure falls back to the bundled traces, and says so.
record_samples() {
  command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q "^GPU" || return 1
  cmake --build "$build" --target help | grep -c "matmul_bench" >/dev/null || {
    echo "flopline: a GPU is present but the samples are not built (no CUDA toolkit?)" >&2; return 1; }
  echo "flopline: a GPU is present: recording the samples"
  local out="$build/main-traces" s="$build/samples"
  rm -rf "$out" && mkdir -p "$out"
  local failed="flopline: a sample failed under flopline run (output above); showing the bundled traces instead"
  local run=("$build/profiler/flopline" run --no-summary)
  "${run[@]}" -o "$out/matmul_bench.json.gz" -- "$s/matmul_bench" --size 8192 --provider all --validate &&
    "${run[@]}" -o "$out/fused_softmax_bench.json.gz" -- "$s/fused_softmax_bench" --sizes 512,2048,4096 --reps 5 &&
    "${run[@]}" -o "$out/vector_add.json.gz" -- "$s/vector_add" --sizes 16777216 --reps 5 &&
    "${run[@]}" -o "$out/plain_cuda.json.gz" -- "$s/plain_cuda" || { echo "$failed" >&2; return 1; }
  if python3 -c "import torch, triton" 2>/dev/null; then
    "${run[@]}" -o "$out/triton_samples.json.gz" -- python3 "$root/samples/python/triton_samples.py" ||
      { echo "$failed" >&2; return 1; }
  fi
}

traces=("$@")
given=${#traces[@]}
shopt -s nullglob
if [ ${#traces[@]} -eq 0 ] && record_samples; then
  traces=("$build"/main-traces/*.json.gz)
elif [ ${#traces[@]} -eq 0 ]; then
  echo "flopline: showing the traces bundled in samples/traces/ (recorded on an NVIDIA H200)"
  traces=("$root"/samples/traces/*.json.gz)
fi
if [ ${#traces[@]} -eq 0 ]; then
  echo "flopline: no bundled traces under samples/traces/ and none given" >&2
  exit 1
fi
fl="$build/profiler/flopline"
if [ "$given" -gt 0 ]; then
  # Traces the user named: their whole tables.
  for t in "${traces[@]}"; do
    echo
    "$fl" stats "$t" --top 15
    "$fl" stats "$t" --by op --top 10 2>/dev/null || true
  done
  exit 0
fi
# One screen: what each trace spends its GPU time on, then where to look next.
echo
"$fl" stats --report overview "${traces[@]}" 2>/dev/null
first="${traces[0]}"
echo
echo "Next:"
echo "  $fl stats $first                   every kernel, with FLOP/s and % of peak"
echo "  $fl stats $first --by op           per operator (NVTX or torch.profiler ranges)"
echo "  $fl diff A B                       what changed between two runs"
if [ -x "$build/viewer/flopline-view" ]; then
  echo "  $build/viewer/flopline-view $first   the timeline and roofline"
fi
