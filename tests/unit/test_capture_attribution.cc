// Operator attribution: NVTX ranges paired into slices, launches owned by the innermost
// range on their own thread, GPU extents per stream, GPU time, and counts on ranges and
// lone kernels. Every expectation below is worked out by hand from the records.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "flopline/capture/record_decoder.h"
#include "flopline/trace/analysis.h"
#include "record_test_util.h"

namespace flopline::capture {
namespace {

using trace::compute_stats;
using trace::DeviceProperties;
using trace::GroupBy;
using trace::Slice;
using trace::StatsQuery;
using trace::StatsResult;
using trace::Trace;

constexpr std::uint32_t kPid = 777;
constexpr std::uint32_t kMain = 100;
constexpr std::uint32_t kWorker = 101;

MarkerRecord start(std::uint32_t id, TimeNs ts, std::string name, std::uint32_t thread = kMain) {
  return thread_marker(id, ts, kMarkerStart, std::move(name), kPid, thread);
}

MarkerRecord end(std::uint32_t id, TimeNs ts, std::uint32_t thread = kMain) {
  return thread_marker(id, ts, kMarkerEnd, {}, kPid, thread);
}

void launch(RecordBatch& b, TimeNs call_start, std::uint32_t correlation, TimeNs gpu_start,
            TimeNs gpu_end, std::uint32_t stream = 7, std::uint32_t thread = kMain,
            std::string kernel_name = "k") {
  ApiRecord a;
  a.name = "cudaLaunchKernel";
  a.cbid = 211;
  a.start = call_start;
  a.end = call_start + 100;
  a.process_id = kPid;
  a.thread_id = thread;
  a.correlation_id = correlation;
  b.api_calls.push_back(a);
  KernelRecord k;
  k.name = kernel_name + std::to_string(correlation);
  k.start = gpu_start;
  k.end = gpu_end;
  k.stream = stream;
  k.context = 1;
  k.correlation_id = correlation;
  k.grid_x = k.grid_y = k.grid_z = 1;
  k.block_x = k.block_y = k.block_z = 32;
  b.kernels.push_back(k);
}

// The scenario of the file comment in attribution.h, on two threads.
RecordBatch scenario() {
  RecordBatch b;
  b.process_id = kPid;
  b.process_name = "trainer";
  b.markers.push_back(start(1, 1000, "outer"));
  launch(b, 1100, 1, 2000, 2500);  // outer's own kernel
  b.markers.push_back(start(2, 3000, "inner [flops=1e9 bytes=4e6]"));
  launch(b, 3100, 2, 5100, 5600);     // inner, stream 7
  launch(b, 3300, 3, 5200, 5900, 8);  // inner, stream 8
  b.markers.push_back(end(2, 5000));
  ApiRecord copy_call;
  copy_call.name = "cudaMemcpyAsync";
  copy_call.start = 6000;
  copy_call.end = 6100;
  copy_call.thread_id = kMain;
  copy_call.correlation_id = 4;
  b.api_calls.push_back(copy_call);
  MemcpyRecord m;
  m.kind = MemcpyKind::kDtoD;
  m.src_kind = m.dst_kind = MemoryKind::kDevice;
  m.bytes = 1000;
  m.start = 6200;
  m.end = 6300;
  m.stream = 7;
  m.correlation_id = 4;
  b.memcpys.push_back(m);
  b.markers.push_back(end(1, 10000));
  launch(b, 11000, 5, 11500, 11600);  // in no range
  // A range on another thread spanning all of the above owns only its own thread's work.
  b.markers.push_back(start(3, 900, "worker op", kWorker));
  launch(b, 12000, 6, 12500, 12600, 9, kWorker);
  b.markers.push_back(end(3, 20000, kWorker));
  return b;
}

const OperatorSummary& op_named(const DecodeResult& r, std::string_view name) {
  for (const OperatorSummary& op : r.attribution.operators) {
    if (op.name == name) return op;
  }
  ADD_FAILURE() << "no operator " << name;
  static const OperatorSummary none;
  return none;
}

std::vector<std::pair<const trace::Track*, Slice>> with_cat(const Trace& t, std::string_view cat) {
  std::vector<std::pair<const trace::Track*, Slice>> out;
  for (const auto& track : t.tracks) {
    for (const auto& row : track.rows) {
      for (const Slice& s : row) {
        if (t.str(s.cat) == cat) out.emplace_back(&track, s);
      }
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.second.start != b.second.start ? a.second.start < b.second.start
                                            : a.first->tid < b.first->tid;
  });
  return out;
}

TEST(CaptureAttribution, NestedRangesOwnTheirLaunchesAndOuterIncludesInner) {
  DecodeResult r;
  decode_to_trace(scenario(), {}, &r);
  ASSERT_EQ(r.attribution.operators.size(), 3u);

  const OperatorSummary& outer = op_named(r, "outer");
  EXPECT_EQ(outer.depth, 0u);
  EXPECT_EQ(outer.launches, 4u);  // two of its own, two of inner's
  EXPECT_EQ(outer.kernels, 3u);
  EXPECT_EQ(outer.memcpys, 1u);
  ASSERT_EQ(outer.streams.size(), 2u);
  EXPECT_EQ(outer.streams[0].stream, 7u);
  EXPECT_EQ(outer.streams[0].start, 2000);
  EXPECT_EQ(outer.streams[0].end, 6300);
  EXPECT_EQ(outer.streams[0].busy_ns, 500 + 500 + 100);
  EXPECT_EQ(outer.streams[0].records, 3u);
  EXPECT_EQ(outer.streams[1].stream, 8u);
  EXPECT_EQ(outer.streams[1].busy_ns, 700);
  EXPECT_EQ(outer.gpu_time_ns, 1100 + 700);
  EXPECT_EQ(outer.kernel_time_ns, 500 + 500 + 700);
  EXPECT_EQ(outer.self_gpu_time_ns, 500 + 100);  // its own kernel and copy
  EXPECT_FALSE(outer.metrics.has_flops());

  const OperatorSummary& inner = op_named(r, "inner");  // suffix stripped
  EXPECT_EQ(inner.depth, 1u);
  EXPECT_EQ(inner.launches, 2u);
  EXPECT_EQ(inner.kernels, 2u);
  ASSERT_EQ(inner.streams.size(), 2u);  // a range whose kernels ran on two streams
  EXPECT_EQ(inner.gpu_time_ns, 500 + 700);
  EXPECT_EQ(inner.self_gpu_time_ns, 1200);
  EXPECT_EQ(inner.metrics.flops, 1e9);
  EXPECT_EQ(inner.metrics.bytes, 4e6);

  const OperatorSummary& worker = op_named(r, "worker op");
  EXPECT_EQ(worker.thread_id, kWorker);
  EXPECT_EQ(worker.launches, 1u);
  EXPECT_EQ(worker.kernels, 1u);
  ASSERT_EQ(worker.streams.size(), 1u);
  EXPECT_EQ(worker.streams[0].stream, 9u);
}

TEST(CaptureAttribution, OwnerOfEachGpuRecord) {
  const RecordBatch b = scenario();
  DecodeResult r;
  decode_to_trace(b, {}, &r);
  const LaunchIndex index(b);
  const auto& work = index.gpu_work();
  ASSERT_EQ(work.size(), r.attribution.owner.size());
  auto owner_name = [&](std::size_t w) -> std::string {
    const std::uint32_t o = r.attribution.owner[w];
    return o == kNoId ? "<none>" : r.markers.ranges[o].name;
  };
  std::vector<std::string> owners;
  for (std::size_t w = 0; w < work.size(); ++w) owners.push_back(owner_name(w));
  // kernels 1..6 in record order, then the copy
  EXPECT_EQ(owners,
            (std::vector<std::string>{"outer", "inner", "inner", "<none>", "worker op", "outer"}));
}

TEST(CaptureAttribution, RangesBecomeUserAnnotationsAndGpuExtents) {
  const Trace t = decode_to_trace(scenario());
  const auto cpu = with_cat(t, "user_annotation");
  ASSERT_EQ(cpu.size(), 3u);
  EXPECT_EQ(t.str(cpu[0].second.name), "worker op");
  EXPECT_EQ(cpu[0].first->tid, kWorker);
  EXPECT_EQ(t.str(cpu[1].second.name), "outer");
  EXPECT_EQ(cpu[1].first->tid, kMain);
  EXPECT_EQ(cpu[1].second.dur, 9000);
  EXPECT_EQ(t.str(cpu[2].second.name), "inner");
  EXPECT_EQ(t.args.json(cpu[2].second.args), R"({"flops source":"suffix"})");
  EXPECT_EQ(t.metrics_of(cpu[2].second).flops, 1e9);

  const auto gpu = with_cat(t, "gpu_user_annotation");
  // outer: streams 7 and 8; inner: 7 and 8; worker op: 9
  ASSERT_EQ(gpu.size(), 5u);
  EXPECT_EQ(t.str(gpu[0].second.name), "outer");
  EXPECT_EQ(gpu[0].first->tid, 7);
  EXPECT_EQ(gpu[0].second.start, 2000);
  EXPECT_EQ(gpu[0].second.dur, 4300);
  EXPECT_EQ(t.args.json(gpu[0].second.args), R"({"gpu records":3})");
  EXPECT_TRUE(t.processes[gpu[0].first->process].is_gpu);
  EXPECT_EQ(t.str(gpu[1].second.name), "inner");
  EXPECT_EQ(gpu[1].first->tid, 7);
  EXPECT_EQ(gpu[1].second.start, 5100);
  EXPECT_EQ(gpu[1].second.dur, 500);
  EXPECT_EQ(t.metrics_of(gpu[1].second).flops, 1e9);  // the range's counts on each GPU slice
  // Stream 8: inner's and outer's extents are the same kernel's interval.
  for (const std::size_t i : {2, 3}) {
    EXPECT_EQ(gpu[i].first->tid, 8);
    EXPECT_EQ(gpu[i].second.start, 5200);
    EXPECT_EQ(gpu[i].second.dur, 700);
    const bool is_inner = t.str(gpu[i].second.name) == "inner";
    EXPECT_EQ(t.metrics_of(gpu[i].second).has_flops(), is_inner);
  }
  EXPECT_NE(t.str(gpu[2].second.name), t.str(gpu[3].second.name));
  EXPECT_EQ(t.str(gpu[4].second.name), "worker op");
  EXPECT_EQ(gpu[4].first->tid, 9);
  // The two-kernel range gives its counts to neither kernel.
  for (const auto& [track, k] : with_cat(t, "kernel")) EXPECT_FALSE(t.metrics_of(k).has_flops());
}

TEST(CaptureAttribution, LoneKernelCarriesItsRangeCountsAndKeepsItsFlow) {
  RecordBatch b;
  b.process_id = kPid;
  b.markers.push_back(start(1, 20000, "mm [flops=2e9]"));
  launch(b, 20100, 7, 22000, 23000, 7, kMain, "gemm");
  b.markers.push_back(end(1, 21000));
  const Trace t = decode_to_trace(b);
  const auto kernels = with_cat(t, "kernel");
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(t.metrics_of(kernels[0].second).flops, 2e9);
  // The GPU extent has exactly the kernel's interval; the flow must still end on the kernel.
  const auto gpu = with_cat(t, "gpu_user_annotation");
  ASSERT_EQ(gpu.size(), 1u);
  EXPECT_EQ(gpu[0].second.start, kernels[0].second.start);
  EXPECT_EQ(gpu[0].second.dur, kernels[0].second.dur);
  ASSERT_EQ(t.flows.size(), 1u);
  ASSERT_TRUE(t.flows[0].joined());
  const auto& to = t.flows[0].to.slice;
  EXPECT_EQ(t.str(t.tracks[to.track].at(to).name), "gemm7");
}

// A precision (and a plan) in the suffix reaches the operator's CPU and GPU slices, and with it the
// analysis finds the device peak: 2e9 FLOPs in 1000 ns (2e15 FLOP/s) on a 4e15 FLOP/s
// tf32 peak = 50%.
TEST(CaptureAttribution, SuffixPrecisionGivesPercentOfPeak) {
  RecordBatch b;
  b.process_id = kPid;
  b.markers.push_back(start(1, 20000, "mm [flops=2e9 precision=tf32 plan=tiles_128]"));
  launch(b, 20100, 7, 22000, 23000, 7, kMain, "gemm");
  b.markers.push_back(end(1, 21000));
  Trace t = decode_to_trace(b);
  for (const char* cat : {"user_annotation", "gpu_user_annotation"}) {
    const auto s = with_cat(t, cat);
    ASSERT_EQ(s.size(), 1u) << cat;
    EXPECT_EQ(t.str(s[0].second.name), "mm");
    EXPECT_NE(t.args.json(s[0].second.args).find(R"("precision":"tf32")"), std::string_view::npos)
        << cat;
    EXPECT_NE(t.args.json(s[0].second.args).find(R"("plan":"tiles_128")"), std::string_view::npos)
        << cat;
  }
  DeviceProperties d;
  d.peak_flops = {{"tf32", 4e15}};
  d.peak_bytes_per_s = 1e12;
  t.devices = {d};
  StatsQuery q;
  q.by = GroupBy::kOperator;
  const StatsResult r = compute_stats(t, q);
  ASSERT_EQ(r.rows.size(), 1u);
  ASSERT_TRUE(r.rows[0].pct_peak.has_value());
  EXPECT_NEAR(*r.rows[0].pct_peak, 50.0, 1e-9);
}

TEST(CaptureAttribution, OverlappingStartEndRangesInnermostIsTheLatestStarted) {
  RecordBatch b;
  b.process_id = kPid;
  b.markers.push_back(start(1, 100, "A"));
  b.markers.push_back(start(2, 300, "B"));
  launch(b, 400, 1, 1000, 1100);  // inside A and B: B started later, so B owns it
  b.markers.push_back(end(1, 550));
  launch(b, 600, 2, 1200, 1300);  // only inside B
  b.markers.push_back(end(2, 800));
  DecodeResult r;
  decode_to_trace(b, {}, &r);
  EXPECT_EQ(op_named(r, "A").kernels, 1u);
  EXPECT_EQ(op_named(r, "A").self_gpu_time_ns, 0);
  EXPECT_EQ(op_named(r, "B").kernels, 2u);
  EXPECT_EQ(op_named(r, "B").self_gpu_time_ns, 200);
}

TEST(CaptureAttribution, PayloadMarkerDataInstantsUnclosedAndUnmatched) {
  RecordBatch b;
  b.process_id = kPid;
  MarkerRecord s = start(1, 100, "step");
  s.domain = "train";
  s.has_data = true;
  s.has_color = true;
  s.color = 0xff00ff00u;
  s.category = 3;
  s.payload_kind = PayloadKind::kDouble;
  s.payload_f64 = 3e9;
  b.markers.push_back(s);
  b.markers.push_back(end(1, 500));
  b.markers.push_back(start(2, 600, "merged"));  // its data comes as a separate record
  MarkerDataRecord d;
  d.id = 2;
  d.payload_kind = PayloadKind::kUint64;
  d.payload_u64 = 42;
  b.marker_data.push_back(d);
  MarkerRecord mark;
  mark.id = 9;
  mark.flags = kMarkerInstant;
  mark.timestamp = 700;
  mark.name = "checkpoint";
  mark.object.kind = ObjectKind::kThread;
  mark.object.thread_id = kMain;
  b.markers.push_back(mark);
  b.markers.push_back(end(5, 800));  // never started
  launch(b, 900, 1, 1000, 1200);     // capture ends at 1200; "merged" never ended
  DecodeResult r;
  const Trace t = decode_to_trace(b, {}, &r);
  EXPECT_EQ(r.markers.unmatched_ends, 1u);
  EXPECT_EQ(r.markers.unclosed_ranges, 1u);
  const auto ranges = with_cat(t, "user_annotation");
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_EQ(
      t.args.json(ranges[0].second.args),
      R"({"domain":"train","category":3,"color":"#00ff00","payload":3000000000,"flops source":"payload"})");
  EXPECT_EQ(t.metrics_of(ranges[0].second).flops, 3e9);
  EXPECT_EQ(t.str(ranges[1].second.name), "merged");
  EXPECT_EQ(ranges[1].second.dur, 600);  // to the capture end
  EXPECT_EQ(t.args.json(ranges[1].second.args),
            R"({"payload":42,"flops source":"payload","unclosed":true})");
  // The unclosed range owns the launch made inside it.
  EXPECT_EQ(op_named(r, "merged").kernels, 1u);
  std::size_t instants = 0;
  for (const auto& track : t.tracks) {
    for (const auto& i : track.instants) {
      ++instants;
      EXPECT_EQ(t.str(i.name), "checkpoint");
      EXPECT_EQ(t.str(i.cat), "user_annotation");
      EXPECT_EQ(i.ts, 700);
      EXPECT_EQ(track.tid, kMain);
    }
  }
  EXPECT_EQ(instants, 1u);
}

TEST(CaptureAttribution, PayloadIsIgnoredWhenSwitchedOffAndSuffixWins) {
  RecordBatch b;
  b.process_id = kPid;
  MarkerRecord s = start(1, 100, "x [flops=5]");
  s.has_data = true;
  s.payload_kind = PayloadKind::kUint64;
  s.payload_u64 = 99;
  b.markers.push_back(s);
  b.markers.push_back(end(1, 200));
  DecodeResult r;
  decode_to_trace(b, {}, &r);
  EXPECT_EQ(r.markers.ranges[0].metrics.flops, 5);
  s.name = "y";
  b.markers[0] = s;
  DecodeOptions off;
  off.counts.payload_is_flops = false;
  decode_to_trace(b, off, &r);
  EXPECT_FALSE(r.markers.ranges[0].metrics.has_flops());
}

TEST(CaptureAttribution, NvtxCanBeSwitchedOff) {
  DecodeOptions off;
  off.nvtx = false;
  DecodeResult r;
  const Trace t = decode_to_trace(scenario(), off, &r);
  EXPECT_TRUE(r.attribution.operators.empty());
  EXPECT_TRUE(with_cat(t, "user_annotation").empty());
  EXPECT_TRUE(with_cat(t, "gpu_user_annotation").empty());
  EXPECT_EQ(with_cat(t, "kernel").size(), 5u);
}

TEST(CaptureAttribution, OperatorTotalsGroupByNameWithTflops) {
  std::vector<OperatorSummary> ops(3);
  ops[0].name = "mm";
  ops[0].streams.resize(1);
  ops[0].gpu_time_ns = 1000000;
  ops[0].metrics.flops = 4e9;
  ops[1].name = "mm";
  ops[1].streams.resize(1);
  ops[1].gpu_time_ns = 3000000;  // no flops: time counts, TFLOP/s uses only the first
  ops[2].name = "idle";          // no GPU work: left out
  const auto totals = operator_totals(ops);
  ASSERT_EQ(totals.size(), 1u);
  EXPECT_EQ(totals[0].name, "mm");
  EXPECT_EQ(totals[0].count, 2u);
  EXPECT_EQ(totals[0].gpu_time_ns, 4000000);
  ASSERT_TRUE(totals[0].tflops);
  EXPECT_DOUBLE_EQ(*totals[0].tflops, 4.0);  // 4e9 FLOP in 1 ms
  EXPECT_FALSE(totals[0].gbps);
}

}  // namespace
}  // namespace flopline::capture
