#!/usr/bin/env bash
# Peak memory and time of `flopline stats DIR` over N tiny trace files (issue 36: a
# summary over many files must hold one file at a time, not all of them).
#   Usage: bench/bench_stats_many_files.sh FLOPLINE [N...]   (default N: 1000 20000 120000)
set -euo pipefail
flopline="$1"; shift
sizes=("$@"); [ ${#sizes[@]} -gt 0 ] || sizes=(1000 20000 120000)
dir="$(mktemp -d)"; trap 'rm -rf "$dir"' EXIT
for n in "${sizes[@]}"; do
  rm -rf "$dir/t"; mkdir -p "$dir/t"
  python3 - "$dir/t" "$n" <<'PY'
import sys
d, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    with open(f"{d}/r{i:07d}.json", "w") as f:
        f.write('{"traceEvents":[{"ph":"X","cat":"kernel","name":"k%d","pid":0,"tid":7,"ts":1,"dur":%d}]}' % (i % 50, 1 + i % 7))
PY
  /usr/bin/time -f "%M %e" -o "$dir/time" "$flopline" stats "$dir/t" --csv > /dev/null
  read -r kb s < "$dir/time"
  echo "files $n: peak RSS $((kb / 1024)) MB, $s s"
done
