#include "frame_stats.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>

namespace flopline::viewer {

FrameStats frame_stats(std::vector<double> ms) {
  FrameStats s;
  s.frames = ms.size();
  if (ms.empty()) return s;
  std::sort(ms.begin(), ms.end());
  const std::size_t n = ms.size();
  s.median_ms = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
  // Nearest rank: the smallest value with at least 99% of the frames at or below it.
  const auto rank = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(n)));
  s.p99_ms = ms[std::clamp<std::size_t>(rank, 1, n) - 1];
  s.max_ms = ms.back();
  return s;
}

std::uint64_t resident_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0)
      return std::stoull(line.substr(6)) * 1024;  // "VmRSS:  1234 kB"
  }
  return 0;
}

}  // namespace flopline::viewer
