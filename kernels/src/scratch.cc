#include "scratch.h"

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "flopline/kernels/types.h"

namespace flopline::kernels::detail {
namespace {

constexpr std::uint64_t kKeepBytes = 1ull << 30;

cudaMemPool_t pool_for_current_device() {
  static std::mutex mu;
  static std::vector<cudaMemPool_t> pools;
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) throw CudaError("scratch: no CUDA device");
  std::lock_guard<std::mutex> lock(mu);
  if (static_cast<int>(pools.size()) <= dev)
    pools.resize(static_cast<std::size_t>(dev) + 1, nullptr);
  cudaMemPool_t& pool = pools[static_cast<std::size_t>(dev)];
  if (!pool) {
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = dev;
    if (cudaMemPoolCreate(&pool, &props) != cudaSuccess) {
      pool = nullptr;
      throw CudaError("scratch: cudaMemPoolCreate failed");
    }
    std::uint64_t keep = kKeepBytes;
    cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
  }
  return pool;
}

}  // namespace

void* scratch_alloc(std::size_t bytes, cudaStream_t stream, const char* what) {
  void* p = nullptr;
  const cudaError_t e =
      cudaMallocFromPoolAsync(&p, bytes ? bytes : 1, pool_for_current_device(), stream);
  if (e != cudaSuccess) {
    throw CudaError(std::string("scratch for ") + what + " (" + std::to_string(bytes) +
                    " bytes): " + cudaGetErrorString(e));
  }
  return p;
}

void scratch_free(void* p, cudaStream_t stream) {
  if (p) cudaFreeAsync(p, stream);
}

}  // namespace flopline::kernels::detail
