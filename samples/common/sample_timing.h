// Wall and CPU time of repeated runs, summarized as the fused-softmax write-up prints them:
//   Wall: Avg=0.007256, min=0.007055, std=0.000171, max=0.007744
#pragma once

#include <string>
#include <vector>

namespace flopline::samples {

struct TimePoint {
  double wall_s = 0;  // steady clock
  double cpu_s = 0;   // this process's CPU time, all threads (CLOCK_PROCESS_CPUTIME_ID)
};
TimePoint now();

struct Summary {
  double avg = 0, min = 0, std = 0, max = 0;  // std: population standard deviation
};
Summary summarize(const std::vector<double>& seconds);

// "Avg=..., min=..., std=..., max=..." with six decimals.
std::string format_summary(const Summary& s);

}  // namespace flopline::samples
