// Frame-time statistics for --bench (median, p99, max) and the process's resident
// memory. GL-free, unit-tested.
#pragma once

#include <cstdint>
#include <vector>

namespace flopline::viewer {

struct FrameStats {
  double median_ms = 0;
  double p99_ms = 0;  // nearest-rank 99th percentile
  double max_ms = 0;
  std::size_t frames = 0;
};

FrameStats frame_stats(std::vector<double> frame_ms);

// VmRSS of this process in bytes (from /proc/self/status), 0 when unknown.
std::uint64_t resident_bytes();

}  // namespace flopline::viewer
