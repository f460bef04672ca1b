# Sourced by the scripts that run a carried build on a GPU machine (gpu_check.sh,
# gpu_samples.sh). Expects $root and $build; makes the build's recorded source path lead
# to $root, and finds libcupti and cuBLAS for the binaries.

# The build records absolute paths of the tree it was made in (test commands, RPATHs,
# the Python scripts): make that path lead here when the copy lives elsewhere.
built_in="$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt")"
if [ -n "$built_in" ] && [ "$built_in" != "$root" ] && [ ! -e "$built_in" ]; then
  mkdir -p "$(dirname "$built_in")" && ln -s "$root" "$built_in"
  echo "linked $built_in -> $root"
fi
# libcupti is found through the build's RUNPATH (/usr/local/cuda); fall back to the copy
# carried in the build folder when this machine keeps it elsewhere.
if ldd "$build/profiler/libflopline_inject.so" | grep -q "libcupti.*not found"; then
  export LD_LIBRARY_PATH="$build/cuda-lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "using the carried libcupti"
fi
# cuBLAS (dlopened by tests and samples, linked by plain_cuda): the toolkit's, else PyTorch's.
if ! ldconfig -p | grep -q libcublas.so.13 && [ ! -e /usr/local/cuda/lib64/libcublas.so.13 ]; then
  cublas="$(find /usr /opt -name libcublas.so.13 2>/dev/null | head -1)"
  [ -n "$cublas" ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$(dirname "$cublas")"
fi
[ -e /usr/local/cuda/lib64/libcublas.so.13 ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}/usr/local/cuda/lib64"
export PATH="/usr/local/cuda/bin:$PATH"
