// matmul(): checks, picks the implementation, wraps the launch in its range.
#include "flopline/kernels/matmul.h"

#include <cuda_runtime_api.h>

#include <mutex>
#include <string>
#include <vector>

#include "matmul_launch.h"
#include "op_range.h"

namespace flopline::kernels {

int current_arch() {
  // Cached per device: the attribute queries cost microseconds, a launch should not.
  static std::mutex mu;
  static std::vector<int> cache;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) throw CudaError("matmul: no CUDA device (cudaGetDevice failed)");
  std::lock_guard<std::mutex> lock(mu);
  if (static_cast<int>(cache.size()) <= dev) cache.resize(static_cast<std::size_t>(dev) + 1, 0);
  if (cache[static_cast<std::size_t>(dev)] == 0) {
    int major = 0, minor = 0;
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
    cache[static_cast<std::size_t>(dev)] = major * 10 + minor;
  }
  return cache[static_cast<std::size_t>(dev)];
}

void matmul(const MatmulProblem& p, const MatmulOptions& options) {
  const int arch = current_arch();
  check_matmul_path(p, options.path, arch);
  const MatmulPath path = options.path == MatmulPath::automatic ? choose_matmul_path(p, arch) : options.path;
  detail::OpRange range(matmul_cost(p.m, p.n, p.k, p.in, p.out), options.range);
  switch (path) {
    case MatmulPath::simt: detail::launch_matmul_simt(p, options.stream); break;
    case MatmulPath::sm80: detail::launch_matmul_sm80(p, options.stream); break;
    case MatmulPath::sm90: detail::launch_matmul_sm90(p, options.stream); break;
    case MatmulPath::automatic: break;
  }
}

namespace detail {
void throw_if_launch_failed(const char* what) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) throw CudaError(std::string(what) + ": launch failed: " + cudaGetErrorString(e));
}
}  // namespace detail

}  // namespace flopline::kernels
