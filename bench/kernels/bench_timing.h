// GPU timing shared by the kernel benchmarks: cudaEvents around each call, median of the
// timed calls after untimed warm-up ones; interleaved_medians_ms for providers compared
// with each other.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

namespace flopline::bench {

inline void timing_ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "timing: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// Milliseconds of each of `reps` rounds in which every provider's call is timed once,
// after `warmup` untimed calls of each: medians per provider, in order. Interleaved so
// that a drift of the clocks over a long run (a GPU warming up, or slowing down as it
// heats) lands on every provider alike, not on whichever was timed last.
inline std::vector<double> interleaved_medians_ms(
    const std::vector<std::function<void()>>& providers, int warmup, int reps) {
  for (const auto& fn : providers) {
    for (int i = 0; i < warmup; ++i) fn();
  }
  timing_ok(cudaDeviceSynchronize(), "warm-up");
  cudaEvent_t start, stop;
  timing_ok(cudaEventCreate(&start), "cudaEventCreate");
  timing_ok(cudaEventCreate(&stop), "cudaEventCreate");
  std::vector<std::vector<float>> ms(providers.size(),
                                     std::vector<float>(static_cast<std::size_t>(reps)));
  for (int r = 0; r < reps; ++r) {
    for (std::size_t p = 0; p < providers.size(); ++p) {
      timing_ok(cudaEventRecord(start), "cudaEventRecord");
      providers[p]();
      timing_ok(cudaEventRecord(stop), "cudaEventRecord");
      timing_ok(cudaEventSynchronize(stop), "timed run");
      timing_ok(cudaEventElapsedTime(&ms[p][static_cast<std::size_t>(r)], start, stop),
                "cudaEventElapsedTime");
    }
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::vector<double> medians;
  for (auto& v : ms) {
    std::sort(v.begin(), v.end());
    medians.push_back(v[v.size() / 2]);
  }
  return medians;
}

// Median milliseconds of `reps` timed calls of fn after `warmup` untimed ones.
template <class Fn>
double median_ms(Fn&& fn, int warmup, int reps) {
  return interleaved_medians_ms({std::function<void()>(fn)}, warmup, reps)[0];
}

}  // namespace flopline::bench
