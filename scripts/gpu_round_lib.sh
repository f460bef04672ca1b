# Sourced by the one-call GPU rounds (gpu_round_x2.sh, gpu_round_x4.sh,
# gpu_round_checks.sh) after they set $root and $work: the carried build, the output
# folder, a fresh work folder with logs/, the GPU environment (gpu_env.sh, NVLink
# multicast off as KINDS.md asks), and note(), which stamps a line with the seconds
# since the start and keeps it in logs/summary.txt.
[ -e "$root/build-gpu" ] || ln -s build-gpu-slim "$root/build-gpu"
build="$root/build-gpu"
fl="$build/profiler/flopline"
OUT="${OUT:-$root/gpu-out}"
rm -rf "$work"; mkdir -p "$work/logs" "$OUT"
source "$root/scripts/gpu_env.sh" >/dev/null 2>&1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
start=$(date +%s)
since() { echo $(( $(date +%s) - start )); }
summary="$work/logs/summary.txt"
note() { echo "[$(since) s] $*" | tee -a "$summary"; }
