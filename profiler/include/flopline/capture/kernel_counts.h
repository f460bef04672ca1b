// Which hardware-counter values each kernel of a capture carries (docs/COUNTERS.md).
//
// A kernel's counts are a property of its signature: the function, grid, block and
// dynamic shared memory. The capture measures the first N launches of each signature
// (LaunchSampler, on the launching thread) and the decoder gives every other launch of
// that signature the values of the measured launch nearest before it (or, when none came
// before, the first one after), marked as inferred. A launch is measured when a counter
// record carries its correlation id; graph launches, which give one correlation id to
// many kernels, are never measured and only inferred.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "flopline/capture/records.h"

namespace flopline::capture {

struct KernelCounts {
  std::uint32_t record = kNoId;  // index into RecordBatch::counter_records; kNoId: none
  bool measured = false;         // its own launch was measured (replayed)
};

// Kernels of measured launches arrive without times (start = end = 0): the replay runs
// inside the launch call, after everything launched before it has finished, so each is
// placed at the later of its call's start and the end of the device's earlier work, with
// the duration its counters measured (gpu__time_duration; 0 when not collected), and
// marked replayed.
// Kernels without times that no counter record names (work still running at a forced
// flush) are dropped, as the converter drops them without counters.
void place_replayed_kernels(RecordBatch& batch);

// One entry per RecordBatch::kernels element.
std::vector<KernelCounts> assign_kernel_counts(const RecordBatch& batch);

// Counter records whose launch matches no single kernel record (indices): a kernel
// record lost (the buffer cap), or one launch that ran several kernels.
std::vector<std::uint32_t> unmatched_counter_records(const RecordBatch& batch);

// What the capture knows of a launch when it decides whether to measure it.
struct LaunchKey {
  std::uint64_t function = 0;  // CUfunction (or the runtime's host stub)
  std::uint32_t grid[3] = {0, 0, 0};
  std::uint32_t block[3] = {0, 0, 0};
  std::uint32_t shared_memory = 0;  // dynamic, bytes
  bool operator==(const LaunchKey&) const = default;
};

struct LaunchKeyHash {
  std::size_t operator()(const LaunchKey& k) const;
};

// The first `per_signature` launches of each key are measured; every launch when 0.
// Not thread-safe: the caller serializes take().
class LaunchSampler {
 public:
  explicit LaunchSampler(std::uint32_t per_signature) : per_signature_(per_signature) {}
  bool take(const LaunchKey& key);
  std::size_t signatures() const { return seen_.size(); }

 private:
  std::uint32_t per_signature_;
  std::unordered_map<LaunchKey, std::uint32_t, LaunchKeyHash> seen_;
};

}  // namespace flopline::capture
