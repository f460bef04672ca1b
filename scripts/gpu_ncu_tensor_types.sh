#!/usr/bin/env bash
# Nsight Compute's tensor instruction counts by type for bench/tensor_types_probe.py's
# kernels: whether HMMA holds GMMA and HFMA2 (the two-pass first set's rule,
# function_metrics.h) and where integer GMMA is counted. Prints one row per kernel.
#   Run there: scripts/gpu_ncu_tensor_types.sh
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
out="${OUT:-/tmp}"
p=sm__inst_executed_pipe_tensor
metrics="$p.sum,${p}_op_hmma.sum,${p}_op_hmma_type_hfma2.sum,${p}_op_gmma.sum,${p}_op_imma.sum,${p}_op_dmma.sum"
timeout 240 ncu --metrics "$metrics" --csv --page raw python3 "$root/bench/tensor_types_probe.py" \
  > "$out/ncu-tensor-types.csv" 2> "$out/ncu-tensor-types.err"
echo "ncu exit $?"
python3 - "$out/ncu-tensor-types.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1], errors="replace")) if len(r) > 5]
if not rows:
    print("no rows"); sys.exit(0)
head = rows[0]
col = {n: i for i, n in enumerate(head)}
p = "sm__inst_executed_pipe_tensor"
keys = [f"{p}.sum", f"{p}_op_hmma.sum", f"{p}_op_hmma_type_hfma2.sum", f"{p}_op_gmma.sum",
        f"{p}_op_imma.sum", f"{p}_op_dmma.sum"]
print(f"{'pipe':>12}{'hmma':>12}{'hfma2':>12}{'gmma':>12}{'imma':>12}{'dmma':>12}  hmma-hfma2-gmma  kernel")
for r in rows[2:]:
    try:
        v = [float(r[col[k]].replace(",", "")) for k in keys]
    except (KeyError, ValueError):
        continue
    name = r[col.get("Kernel Name", 4)][:70]
    print("".join(f"{x:>12.0f}" for x in v) + f"  {v[1] - v[2] - v[3]:>15.0f}  {name}")
PY
