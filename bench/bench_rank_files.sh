#!/usr/bin/env bash
# Reading many rank files at once (issue 34's scale): `flopline stats DIR` and its
# per-rank breakdown over N synthetic rank traces, read on one thread and on the
# default reading threads (profiler/cli/trace_loading.h), with their wall time and peak
# resident memory, beside one file alone: memory follows the largest file times the
# reading threads, not the files' sum.
#   Usage: bench/bench_rank_files.sh FLOPLINE [FILES] [KERNELS_PER_FILE]   (64, 40000)
set -euo pipefail
flopline="$1"
files="${2:-64}"
kernels="${3:-40000}"
dir="$(mktemp -d)"; trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/ranks"
python3 - "$dir/ranks" "$files" "$kernels" <<'PY'
import json, sys
d, files, kernels = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for r in range(files):
    ev = []
    t = 1000
    for i in range(kernels):
        nccl = i % 10 == 9
        name = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)" if nccl else "gemm_%d" % (i % 20)
        dur = 40 + (i * 7 + r) % 50
        ev.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": 7 if not nccl else 9,
                   "ts": t / 1000.0 * 1000, "dur": dur, "args": {"device": 0, "stream": 7 if not nccl else 9,
                   "correlation": i, "flops": 1.0e9, "flops source": "shapes"}})
        t += dur + 5
    meta = {"traceEvents": ev, "distributedInfo": {"backend": "nccl", "rank": r, "world_size": files},
            "deviceProperties": [{"id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150754820096,
                                  "computeMajor": 9, "computeMinor": 0, "numSms": 132}]}
    with open("%s/rank%03d.json" % (d, r), "w") as f:
        json.dump(meta, f)
PY
total=$(du -sm "$dir/ranks" | cut -f1)
one=$(ls -S "$dir/ranks" | head -1)
echo "$files files of $kernels kernels, $total MB in all; machine: $(nproc) cores"
printf "%-34s %8s %10s\n" "what" "wall s" "peak MB"
measure() {
  local what="$1"; shift
  /usr/bin/time -f "%M %e" -o "$dir/time" "$@" > /dev/null
  read -r kb s < "$dir/time"
  printf "%-34s %8s %10s\n" "$what" "$s" "$((kb / 1024))"
}
measure "one file, stats" "$flopline" stats "$dir/ranks/$one"
for report in "" "--report breakdown"; do
  label="${report:-stats}"
  # shellcheck disable=SC2086
  FLOPLINE_READ_THREADS=1 measure "all, $label, 1 thread" "$flopline" stats "$dir/ranks" $report
  # shellcheck disable=SC2086
  measure "all, $label, default threads" "$flopline" stats "$dir/ranks" $report
done
