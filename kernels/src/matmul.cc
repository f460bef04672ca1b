// matmul(): checks, picks the implementation, wraps the launch in its range.
#include "flopline/kernels/matmul.h"

#include <cuda_runtime_api.h>

#include <string>

#include "device_facts.h"
#include "matmul_launch.h"
#include "op_range.h"

namespace flopline::kernels {

int current_arch() {
  return detail::current_device_facts().arch;
}

void matmul(const MatmulProblem& p, const MatmulOptions& options) {
  const int arch = current_arch();
  check_matmul_path(p, options.path, arch);
  const MatmulPath path =
      options.path == MatmulPath::automatic ? choose_matmul_path(p, arch) : options.path;
  detail::OpRange range(matmul_cost(p.m, p.n, p.k, p.in, p.out), options.range);
  switch (path) {
    case MatmulPath::simt:
      detail::launch_matmul_simt(p, options.stream);
      break;
    case MatmulPath::sm80:
      detail::launch_matmul_sm80(p, options.stream);
      break;
    case MatmulPath::sm90:
      detail::launch_matmul_sm90(p, options.stream);
      break;
    case MatmulPath::automatic:
      break;
  }
}

namespace detail {
void throw_if_launch_failed(const char* what) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    throw CudaError(std::string(what) + ": launch failed: " + cudaGetErrorString(e));
}
}  // namespace detail

}  // namespace flopline::kernels
