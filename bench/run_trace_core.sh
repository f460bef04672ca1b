#!/usr/bin/env bash
# Runs the trace-core benchmarks in one go and prints their figures:
#   reader on a 1 GB Kineto-style trace (made once by make_kineto_trace.py) beside
#   python3's json.load on the same file, the writer, and model memory per slice.
# Usage: bench/run_trace_core.sh [BUILD_DIR]   (a Release build; default build/)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
data="$root/bench-data"
mkdir -p "$data"
trace="$data/kineto_1g.json"
[ -f "$trace" ] || python3 "$root/bench/make_kineto_trace.py" "$trace"
cmake --build "$build" --target bench_reader bench_writer bench_model_memory >/dev/null

echo "== machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(date -u +%F)"
echo "== reader: read_chrome_trace_file on $(du -h "$trace" | cut -f1) (3 runs)"
"$build/bench/bench_reader" "$trace" 3
echo "== python3 json.load on the same file (1 run)"
python3 "$root/bench/compare_python_json.py" "$trace" 1
echo "== writer: 5 million kernels with Kineto args"
"$build/bench/bench_writer" 5000000
echo "== model memory: 10 million slices"
"$build/bench/bench_model_memory" 10000000
