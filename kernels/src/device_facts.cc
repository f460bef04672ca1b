#include "device_facts.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "flopline/kernels/types.h"

namespace flopline::kernels::detail {

DeviceFacts current_device_facts() {
  static std::mutex mu;
  static std::vector<DeviceFacts> cache;  // arch 0: not queried yet
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess)
    throw CudaError("flopline kernels: no CUDA device (cudaGetDevice failed)");
  std::lock_guard<std::mutex> lock(mu);
  if (static_cast<int>(cache.size()) <= dev) cache.resize(static_cast<std::size_t>(dev) + 1);
  DeviceFacts& f = cache[static_cast<std::size_t>(dev)];
  if (f.arch == 0) {
    int major = 0, minor = 0, sms = 0, pools = 0;
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, dev);
    f.arch = major * 10 + minor;
    f.sms = std::max(sms, 1);
    f.pools = pools != 0;
  }
  return f;
}

}  // namespace flopline::kernels::detail
