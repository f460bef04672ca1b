#include "sample_timing.h"

#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace flopline::samples {

TimePoint now() {
  timespec wall{}, cpu{};
  clock_gettime(CLOCK_MONOTONIC, &wall);
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
  return {.wall_s = wall.tv_sec + wall.tv_nsec * 1e-9, .cpu_s = cpu.tv_sec + cpu.tv_nsec * 1e-9};
}

Summary summarize(const std::vector<double>& seconds) {
  Summary s;
  if (seconds.empty()) return s;
  double sum = 0;
  for (double v : seconds) sum += v;
  s.avg = sum / seconds.size();
  double var = 0;
  for (double v : seconds) var += (v - s.avg) * (v - s.avg);
  s.std = std::sqrt(var / seconds.size());
  s.min = *std::min_element(seconds.begin(), seconds.end());
  s.max = *std::max_element(seconds.begin(), seconds.end());
  return s;
}

std::string format_summary(const Summary& s) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "Avg=%.6f, min=%.6f, std=%.6f, max=%.6f", s.avg, s.min, s.std,
                s.max);
  return buf;
}

}  // namespace flopline::samples
