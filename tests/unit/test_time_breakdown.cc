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

// A GPU (device 0, stream 7) and a CPU thread whose launch calls reach it by flows.
struct HostAndGpu {
  Trace t;
  TraceBuilder b{t};
  std::uint32_t gpu = 0, cpu = 0;
  StringId kernel = 0;
  HostAndGpu() {
    const std::uint32_t gpu_process = b.process(0);
    t.processes[gpu_process].is_gpu = true;
    t.processes[gpu_process].device = 0;
    gpu = b.track(gpu_process, 7, TrackKind::kGpuStream);
    cpu = b.track(b.process(100), 100);
    kernel = t.strings.intern("kernel");
  }
  // A 5 ns cudaLaunchKernel at `call` whose flow reaches the GPU slice starting at `start`.
  void launch(TimeNs call, TimeNs start, std::uint64_t id) {
    b.add_slice(cpu, Slice{call, 5, t.strings.intern("cudaLaunchKernel"),
                           t.strings.intern("cuda_runtime"), kNoArgs, kNone});
    Flow f;
    f.id = id;
    f.from.track = cpu;
    f.from.ts = call;
    f.to.track = gpu;
    f.to.ts = start;
    b.add_flow(f);
  }
};

// Three kernels with gaps; each launched by a CPU call (a flow from the call to the
// kernel): the first gap's kernel was launched 30 ns into the gap (30 host, 20 queued),
// the second's before the gap began (all 40 queued: a dependency), and the last kernel
// has no launch flow (its 10 ns gap is other).
TEST(TimeBreakdown, IdleSplitByWhenTheNextWorkWasLaunched) {
  HostAndGpu h;
  Trace& t = h.t;
  TraceBuilder& b = h.b;
  auto add = [&](TimeNs start, TimeNs dur, std::optional<TimeNs> launched, std::uint64_t id) {
    b.add_slice(h.gpu, Slice{start, dur, t.strings.intern("k"), h.kernel, kNoArgs, kNone});
    if (launched) h.launch(*launched, start, id);
  };
  add(0, 100, TimeNs{0}, 1);      // busy 0-100
  add(150, 100, TimeNs{130}, 2);  // gap 100-150, launched at 130
  add(290, 100, TimeNs{200}, 3);  // gap 250-290, launched at 200
  add(400, 10, std::nullopt, 4);  // gap 390-400, no flow
  b.finalize();
  const auto rows = time_breakdown(t);
  ASSERT_EQ(rows.size(), 1u);
  const DeviceBreakdown& d = rows[0];
  EXPECT_EQ(d.idle_ns, 50 + 40 + 10);
  EXPECT_EQ(d.idle_host_ns, 30);
  EXPECT_EQ(d.idle_queued_ns, 20 + 40);
  EXPECT_EQ(d.idle_other_ns, 10);
  // A window past the last work: its tail is other.
  const auto wide = time_breakdown(t, TimeNs{0}, TimeNs{500});
  EXPECT_EQ(wide[0].idle_other_ns, 10 + 90);
  EXPECT_EQ(wide[0].idle_host_ns + wide[0].idle_queued_ns + wide[0].idle_other_ns, wide[0].idle_ns);
}

// An operator declaring 5e7 bf16 FLOPs launches a 100 ns kernel whose counters say 6e7
// (hardware FLOPs: more than the model's). A second operator's FLOPs are the counters'
// sum: not model FLOPs. bf16 peak 1e15: the model's 5e7 take 50 ns at peak.
TEST(TimeBreakdown, ModelFlopsBesideCountedOnes) {
  HostAndGpu h;
  Trace& t = h.t;
  TraceBuilder& b = h.b;
  const StringId op = t.strings.intern("cpu_op");
  auto add_op = [&](TimeNs start, TimeNs gpu_start, double flops, const char* args, double counted,
                    std::uint64_t id) {
    SliceMetrics m;
    m.flops = flops;
    Slice o{start, 50, t.strings.intern("aten::mm"), op, t.args.add_json(args), kNone};
    o.metrics = b.add_metrics(m);
    b.add_slice(h.cpu, o);
    h.launch(start + 10, gpu_start, id);
    SliceMetrics km;
    km.flops = counted;
    Slice k{gpu_start, 100, t.strings.intern("gemm"), h.kernel, kNoArgs, kNone};
    k.metrics = b.add_metrics(km);
    b.add_slice(h.gpu, k);
  };
  add_op(0, 100, 5e7, R"({"precision":"bf16"})", 6e7, 1);
  add_op(60, 200, 6e7, R"({"precision":"bf16","flops source":"counters"})", 6e7, 2);
  b.finalize();
  DeviceProperties d;
  d.id = 0;
  d.peak_flops = {{"bf16", 1e15}};
  t.devices.push_back(d);
  const auto rows = time_breakdown(t);
  ASSERT_EQ(rows.size(), 1u);
  ASSERT_TRUE(rows[0].flops);
  EXPECT_DOUBLE_EQ(*rows[0].flops, 12e7);
  ASSERT_TRUE(rows[0].model_flops);
  EXPECT_DOUBLE_EQ(*rows[0].model_flops, 5e7);
  ASSERT_TRUE(rows[0].model_peak_time_ns);
  EXPECT_NEAR(*rows[0].model_peak_time_ns, 50.0, 1e-9);
  // Half of the first operator's GPU work inside the window: half its FLOPs.
  const auto half = time_breakdown(t, TimeNs{150}, TimeNs{300});
  ASSERT_TRUE(half[0].model_flops);
  EXPECT_DOUBLE_EQ(*half[0].model_flops, 2.5e7);
  // No operator with model FLOPs: none.
  const Trace plain = gpu_trace({{7, "kernel", "gemm", 0, 100, 1e9}}, 1e15);
  EXPECT_FALSE(time_breakdown(plain)[0].model_flops);
}

}  // namespace
}  // namespace flopline::trace
