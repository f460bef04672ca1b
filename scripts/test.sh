#!/usr/bin/env bash
# The test job: installs what is missing, builds everything with clang under address
# and undefined-behaviour sanitizers with warnings as errors, and runs every test
# (unit, corpus, command line, install, a bounded fuzz run, flopline-view's tests under
# Xvfb with Mesa's llvmpipe). Tests labelled `gpu` report "skipped: no CUDA device" on
# machines without one.
# Usage: scripts/test.sh [extra ctest arguments]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/deps.sh"
flopline_install_packages "${FLOPLINE_BUILD_PACKAGES[@]}" "${FLOPLINE_TEST_PACKAGES[@]}" \
  "${FLOPLINE_VIEWER_PACKAGES[@]}" "${FLOPLINE_VIEWER_TEST_PACKAGES[@]}"

build="$root/build-test"
jobs="$(nproc)"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CUDA_HOST_COMPILER=g++ \
  -DFLOPLINE_SANITIZE=ON -DFLOPLINE_WERROR=ON -DFLOPLINE_BUILD_BENCH=ON \
  -DFLOPLINE_FUZZ_SECONDS="${FLOPLINE_FUZZ_SECONDS:-60}"
cmake --build "$build" --parallel "$jobs"
cd "$build"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --output-on-failure --parallel "$jobs" --timeout 900 "$@"
