#!/usr/bin/env bash
# The main job: installs what is missing, builds flopline and flopline-view (Release),
# and shows where GPU time goes in the bundled traces (recorded on an H100/H200) as the
# FLOP/s table. `build/viewer/flopline-view TRACE` (or `flopline view TRACE`) opens them
# in the desktop timeline.
# Usage: scripts/main.sh [TRACE...]   (default: the bundled traces)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/deps.sh"
flopline_install_packages "${FLOPLINE_BUILD_PACKAGES[@]}" "${FLOPLINE_VIEWER_PACKAGES[@]}"

build="$root/build"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DFLOPLINE_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" --parallel "$(nproc)" --target flopline
# The viewer is built when its libraries are there (the configure step says so if not).
if cmake --build "$build" --target help | grep -c flopline_view >/dev/null; then  # -c reads all: no SIGPIPE
  cmake --build "$build" --parallel "$(nproc)" --target flopline_view
fi

traces=("$@")
if [ ${#traces[@]} -eq 0 ]; then
  shopt -s nullglob
  traces=("$root"/samples/traces/*.json.gz)
fi
if [ ${#traces[@]} -eq 0 ]; then
  echo "flopline: no bundled traces under samples/traces/ and none given" >&2
  exit 1
fi
for t in "${traces[@]}"; do
  echo
  "$build/profiler/flopline" stats "$t" --top 15
  "$build/profiler/flopline" stats "$t" --by op --top 10 2>/dev/null || true
done
