// GPU timing shared by the kernel benchmarks: cudaEvents around each call, median of the
// timed calls after untimed warm-up ones.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace flopline::bench {

inline void timing_ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "timing: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// Median milliseconds of `reps` timed calls of fn after `warmup` untimed ones.
template <class Fn>
double median_ms(Fn&& fn, int warmup, int reps) {
  for (int i = 0; i < warmup; ++i) fn();
  timing_ok(cudaDeviceSynchronize(), "warm-up");
  cudaEvent_t start, stop;
  timing_ok(cudaEventCreate(&start), "cudaEventCreate");
  timing_ok(cudaEventCreate(&stop), "cudaEventCreate");
  std::vector<float> ms(static_cast<std::size_t>(reps));
  for (float& t : ms) {
    timing_ok(cudaEventRecord(start), "cudaEventRecord");
    fn();
    timing_ok(cudaEventRecord(stop), "cudaEventRecord");
    timing_ok(cudaEventSynchronize(stop), "timed run");
    timing_ok(cudaEventElapsedTime(&t, start, stop), "cudaEventElapsedTime");
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

}  // namespace flopline::bench
