#!/usr/bin/env bash
# Restores the files `scripts/gpu_pack.sh --xz` compressed, in place, on the GPU machine
# (xz where it is installed, else Python's lzma).
#   Usage: scripts/gpu_unpack.sh DIR...
set -euo pipefail
for dir in "$@"; do
  while IFS= read -r -d '' f; do
    if command -v xz >/dev/null; then
      xz -d -f "$f"
    else
      python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[1][:-3], "wb"))' "$f"
      rm -f "$f"
    fi
    case "${f%.xz}" in *.so) ;; *) chmod +x "${f%.xz}" ;; esac
  done < <(find "$dir" -name '*.xz' -print0)
done
