// Which CPU call launched each piece of GPU work.
//
// CUPTI gives every runtime and driver call its own correlation id, and the kernel,
// copy or set it started carries the same id. A runtime call that goes through the
// driver (cudaLaunchKernel -> cuLaunchKernel) shows up as two API records on the same
// thread, the runtime one enclosing the driver one, each with its own id (and the GPU
// work carries one of them). Libraries that launch through the driver directly (Triton,
// cuBLAS, CUTLASS) have only the driver record.
//
// The flow source rule: the launch of a GPU record is the API record with its
// correlation id (when several records share the id, the one that starts first, the
// longer on a tie), then, walking outwards, the outermost API record on the same thread
// whose [start, end] encloses it. So cudaLaunchKernel is the source whether the kernel
// carries the runtime or the driver id, a cudaGraphLaunch is the source of every kernel
// of the graph, and a bare cuLaunchKernelEx is its own source. API records with no
// timestamps (start = end = 0, which CUPTI writes when it could not time a call) are
// neither sources nor encloses.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "flopline/capture/records.h"

namespace flopline::capture {

enum class GpuWorkKind : std::uint8_t { kKernel, kMemcpy, kMemset };

// One kernel, copy or set, by reference into the batch.
struct GpuWork {
  GpuWorkKind kind = GpuWorkKind::kKernel;
  std::uint32_t index = 0;  // into RecordBatch::kernels / memcpys / memsets
  std::uint32_t device = 0;
  std::uint32_t stream = 0;
  std::uint32_t correlation_id = 0;
  TimeNs start = 0;
  TimeNs end = 0;
  std::uint32_t launch = kNoId;  // index into RecordBatch::api_calls, per the rule above
};

class LaunchIndex {
 public:
  explicit LaunchIndex(const RecordBatch& batch);

  // Every kernel, copy and set of the batch, with its launch.
  const std::vector<GpuWork>& gpu_work() const { return work_; }
  // The API record CUPTI tied to this correlation id (before walking outwards); kNoId
  // when none.
  std::uint32_t api_with_correlation(std::uint32_t correlation_id) const;
  // The outermost API record enclosing api_calls[api] on its thread (itself when none).
  std::uint32_t outermost(std::uint32_t api) const { return root_[api]; }
  // The launch of GPU work with this correlation id, per the flow source rule; kNoId when
  // no API record carries the id.
  std::uint32_t launch_of(std::uint32_t correlation_id) const;
  // True when the record has real timestamps.
  static bool timed(const ApiRecord& a) { return a.start != 0 || a.end != 0; }

 private:
  std::vector<GpuWork> work_;
  std::unordered_map<std::uint32_t, std::uint32_t> by_correlation_;
  std::vector<std::uint32_t> root_;
};

}  // namespace flopline::capture
