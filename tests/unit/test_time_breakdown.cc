// Computation, communication, memory and idle per device over a window (HTA's
// definitions), communication hidden under computation, and the counted FLOPs' time at
// peak, on hand-built traces.
#include <gtest/gtest.h>

#include <string>

#include "flopline/trace/builder.h"
#include "flopline/trace/time_breakdown.h"

namespace flopline::trace {
namespace {

struct Work {
  std::int64_t stream;
  const char* cat;
  const char* name;
  TimeNs start, dur;
  double flops = 0;
  const char* args = nullptr;
};

Trace gpu_trace(const std::vector<Work>& work, double bf16_peak = 0) {
  Trace t;
  TraceBuilder b(t);
  const std::uint32_t gpu = b.process(0);
  t.processes[gpu].is_gpu = true;
  t.processes[gpu].device = 0;
  for (const Work& w : work) {
    const std::uint32_t track = b.track(gpu, w.stream, TrackKind::kGpuStream);
    Slice s{w.start,
            w.dur,
            t.strings.intern(w.name),
            t.strings.intern(w.cat),
            w.args != nullptr ? t.args.add_json(w.args) : kNoArgs,
            kNone};
    if (w.flops > 0) {
      SliceMetrics m;
      m.flops = w.flops;
      s.metrics = b.add_metrics(m);
    }
    b.add_slice(track, s);
  }
  b.finalize();
  if (bf16_peak > 0) {
    DeviceProperties d;
    d.id = 0;
    d.peak_flops = {{"bf16", bf16_peak}};
    t.devices.push_back(d);
  }
  return t;
}

// Stream 7: gemm 0-100, gemm 150-250. Stream 13: all-reduce 80-200 (50 of its 120 ns
// under computation: 80-100 and 150-200... 20 + 50 = 70 hidden). A copy 240-300 (its
// 250-300 is exposed memory). Idle: 300-400 before the last kernel at 400-410.
TEST(TimeBreakdown, TheFourPartsAddUpToTheWindow) {
  const Trace t = gpu_trace({
      {7, "kernel", "gemm", 0, 100},
      {7, "kernel", "gemm", 150, 100},
      {13, "kernel", "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 80, 120},
      {20, "gpu_memcpy", "Memcpy DtoD", 240, 60},
      {7, "kernel", "gemm", 400, 10},
  });
  const auto rows = time_breakdown(t);
  ASSERT_EQ(rows.size(), 1u);
  const DeviceBreakdown& b = rows[0];
  EXPECT_EQ(b.window_begin, 0);
  EXPECT_EQ(b.window_end, 410);
  EXPECT_EQ(b.compute_ns, 100 + 100 + 10);
  EXPECT_EQ(b.communication_total_ns, 120);
  EXPECT_EQ(b.communication_hidden_ns, 20 + 50);
  EXPECT_EQ(b.communication_ns, 50);  // 100-150
  EXPECT_EQ(b.memory_ns, 50);         // 250-300
  EXPECT_EQ(b.idle_ns, 100);          // 300-400
  EXPECT_EQ(b.compute_ns + b.communication_ns + b.memory_ns + b.idle_ns, b.window_ns());
  EXPECT_EQ(b.kernels, 4u);
  EXPECT_FALSE(b.flops);
}

TEST(TimeBreakdown, AWindowClipsWorkAndCountsItsIdleEdges) {
  const Trace t = gpu_trace({{7, "kernel", "gemm", 100, 100}, {7, "kernel", "gemm", 500, 100}});
  const auto rows = time_breakdown(t, TimeNs{50}, TimeNs{150});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].window_ns(), 100);
  EXPECT_EQ(rows[0].compute_ns, 50);
  EXPECT_EQ(rows[0].idle_ns, 50);
  EXPECT_EQ(rows[0].kernels, 1u);  // the second is outside
}

// 1e9 bf16 FLOPs in a 10 us kernel on a 1e15 FLOP/s peak: 1 us at peak; over a 20 us
// window, 5% of peak. Half the kernel in the window: half its FLOPs.
TEST(TimeBreakdown, CountedFlopsAtPeakGiveTheMeasuredUtilization) {
  const Trace t = gpu_trace({{7, "kernel", "gemm", 0, 10000, 1e9, R"({"precision":"bf16"})"},
                             {7, "kernel", "add", 15000, 5000}},
                            1e15);
  auto rows = time_breakdown(t);
  ASSERT_TRUE(rows[0].flops);
  EXPECT_DOUBLE_EQ(*rows[0].flops, 1e9);
  ASSERT_TRUE(rows[0].peak_time_ns);
  EXPECT_NEAR(*rows[0].peak_time_ns, 1000.0, 1e-6);
  rows = time_breakdown(t, TimeNs{5000}, TimeNs{20000});
  EXPECT_DOUBLE_EQ(*rows[0].flops, 5e8);
  // A precision without a peak: FLOPs, no utilization.
  const Trace fp8 = gpu_trace({{7, "kernel", "gemm", 0, 10, 1e6, R"({"precision":"fp8"})"}}, 1e15);
  rows = time_breakdown(fp8);
  EXPECT_TRUE(rows[0].flops);
  EXPECT_FALSE(rows[0].peak_time_ns);
}

}  // namespace
}  // namespace flopline::trace
