#!/usr/bin/env bash
# The test job: installs what is missing, builds everything with clang under address
# and undefined-behaviour sanitizers with warnings as errors, builds what
# scripts/main.sh builds with gcc and warnings as errors too (the parts that need no
# CUDA toolkit), and runs every test (unit, corpus, command line, install, a bounded
# fuzz run, flopline-view's tests under Xvfb with Mesa's llvmpipe). Tests labelled `gpu`
# report "skipped: no CUDA device" on machines without one.
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

# gcc warns where clang does not (-Wshadow on scoped enumerators, -Wrestrict), and
# it is what scripts/main.sh builds with on Debian: that build, Release and without
# tests, must stay free of warnings too. FLOPLINE_GCC_CHECK=0 leaves it out.
if [ "${FLOPLINE_GCC_CHECK:-1}" != 0 ]; then
  gcc_build="$root/build-gcc"
  cmake -S "$root" -B "$gcc_build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=gcc -DCMAKE_CXX_COMPILER=g++ -DFLOPLINE_WERROR=ON \
    -DFLOPLINE_BUILD_CUDA=OFF -DFLOPLINE_BUILD_TESTS=OFF -DFLOPLINE_BUILD_BENCH=OFF
  cmake --build "$gcc_build" --parallel "$jobs"
fi

cd "$build"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --output-on-failure --parallel "$jobs" --timeout 900 "$@"
