// What one append of the trace written while the program runs costs, on a long run's
// records, without a GPU: the capture's decoder appends CUPTI-sized parts to a
// SegmentedBatch; an append seals it under the capture's lock (what the program's
// launching thread may wait for), copies the records (flatten, without the lock) and
// decodes them into a trace. A copy under the lock, as before segments, took as long as
// flatten does here.
//
//   bench_capture_snapshot [LAUNCHES]   (default 1,000,000: one kernel and one call each)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "flopline/capture/record_decoder.h"
#include "flopline/capture/segmented_batch.h"

namespace {

using flopline::capture::RecordBatch;
using flopline::capture::SegmentedBatch;

// `n` launches from `first` on: an elementwise kernel (one of 50 names of the length
// PyTorch's have) and its cudaLaunchKernel, evenly spaced.
RecordBatch launches(long first, long n) {
  RecordBatch b;
  for (long i = first; i < first + n; ++i) {
    flopline::capture::KernelRecord k;
    k.start = 1'000'000'000 + i * 3000;
    k.end = k.start + 2000;
    k.correlation_id = static_cast<std::uint32_t>(i + 1);
    k.grid_x = k.grid_y = k.grid_z = 1;
    k.block_x = 128;
    k.block_y = k.block_z = 1;
    k.name =
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
        "std::array<char*, 3ul> >(int, T2, T3)_" +
        std::to_string(i % 50);
    flopline::capture::ApiRecord a;
    a.name = "cudaLaunchKernel";
    a.cbid = 211;
    a.start = k.start - 1000;
    a.end = a.start + 500;
    a.process_id = a.thread_id = 1;
    a.correlation_id = k.correlation_id;
    b.kernels.push_back(std::move(k));
    b.api_calls.push_back(std::move(a));
  }
  return b;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  long n = 1'000'000;
  if (argc > 2 || (argc == 2 && (n = std::strtol(argv[1], nullptr, 10)) <= 0)) {
    std::fprintf(stderr, "usage: bench_capture_snapshot [LAUNCHES]   (a positive count)\n");
    return 2;
  }
  SegmentedBatch batch;
  constexpr long kPart = 20'000;  // about one 8 MB CUPTI buffer of kernels and calls
  for (long first = 0; first < n; first += kPart)
    batch.append(launches(first, std::min(kPart, n - first)));

  auto t0 = std::chrono::steady_clock::now();
  const SegmentedBatch::Segments segments = batch.seal();
  const double seal_ms = ms_since(t0);
  t0 = std::chrono::steady_clock::now();
  const RecordBatch all = SegmentedBatch::flatten(segments);
  const double flatten_ms = ms_since(t0);
  t0 = std::chrono::steady_clock::now();
  const flopline::trace::Trace trace = flopline::capture::decode_to_trace(all);
  const double decode_ms = ms_since(t0);

  std::printf("launches %ld (%zu records, %zu segments, %zu slices)\n", n,
              flopline::capture::record_count(all), segments.size(), trace.slice_count());
  std::printf("%-48s %10.3f ms\n", "seal, under the capture's lock", seal_ms);
  std::printf("%-48s %10.1f ms\n", "flatten (the copy), without the lock", flatten_ms);
  std::printf("%-48s %10.1f ms\n", "decode to a trace", decode_ms);
  return 0;
}
