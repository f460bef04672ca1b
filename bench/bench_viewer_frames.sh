#!/usr/bin/env bash
# Frame times of flopline-view's scripted --bench (fit all, zoom in by halves to 1 us,
# pan, zoom out) at 1600x900 under Mesa's llvmpipe, on a synthetic 10-million-event
# Kineto-style trace (written once by bench_viewer_load) and on the largest corpus
# trace. Prints median and p99 frame time per zoom level and overall, and VmRSS.
# Runs under its own Xvfb when there is no display. Figures: docs/PERFORMANCE.md.
# Usage: bench/bench_viewer_frames.sh [BUILD_DIR [FLOPLINE-VIEW OPTIONS...]]
#        (a Release build; default build/; e.g. `build --bench-frames 100`)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
shift || true
extra=("$@")  # more flopline-view options, e.g. --bench-frames 100
data="$root/bench-data"
corpus="${FLOPLINE_CORPUS_DIR:-$root/../shared/corpus/traces}"
mkdir -p "$data"
cmake --build "$build" --target flopline_view bench_viewer_load >/dev/null
big="$data/viewer_10m.json"
# bench_viewer_load writes the trace when it does not exist (and measures loading it).
[ -f "$big" ] || "$build/bench/bench_viewer_load" "$big" --events 10000000 --runs 1

run_view() {
  if [ -n "${DISPLAY:-}" ]; then
    "$build/viewer/flopline-view" "$@"
  else
    xvfb-run -a -s "-screen 0 1920x1080x24" "$build/viewer/flopline-view" "$@"
  fi
}

echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(date -u +%F), load $(cut -d' ' -f1-3 /proc/loadavg)"
for trace in "$big" "$corpus/hta__mtia_rank_0.json.gz"; do
  echo "== flopline-view --bench $(basename "$trace") --size 1600x900"
  run_view --bench "$trace" --size 1600x900 "${extra[@]}"
done
