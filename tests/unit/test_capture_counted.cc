// Hardware-counter values in the decoded trace: which kernel gets which values
// (measured, inferred from a measured launch of the same work, or estimated from one of
// the same signature; test_capture_launch_work.cc has the keys), the kernel args, the
// counted work summed on operators without declared counts, precision inheritance, and
// GPU metrics samples as counter tracks. Synthetic records; expectations worked out by
// hand.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "flopline/capture/capture_config.h"
#include "flopline/capture/kernel_counts.h"
#include "flopline/capture/record_decoder.h"
#include "flopline/trace/json_value.h"
#include "record_test_util.h"

namespace flopline::capture {
namespace {

constexpr std::uint32_t kPid = 4242;
constexpr std::uint32_t kThread = 4242;

// A plan with one tensor metric (bf16), FFMA, and DRAM read and write.
CounterPlan small_plan() {
  const std::vector<std::string> chip = {"sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32",
                                         "sm__sass_thread_inst_executed_op_ffma_pred_on",
                                         "dram__bytes_read", "lts__t_sectors_srcunit_tex_op_write"};
  return plan_counter_metrics(chip);
}

std::vector<double> values(const CounterPlan& plan, double tensor, double ffma, double read,
                           double write) {
  std::vector<double> v(plan.metrics.size(), 0);
  for (std::size_t i = 0; i < plan.metrics.size(); ++i) {
    const std::string& n = plan.metrics[i].name;
    if (n.find("hgmma") != std::string::npos) v[i] = tensor;
    if (n.find("ffma") != std::string::npos) v[i] = ffma;
    if (n.find("bytes_read") != std::string::npos) v[i] = read;
    if (n.find("op_write") != std::string::npos) v[i] = write / 32;  // 32-byte sectors
  }
  return v;
}

void launch(RecordBatch& b, TimeNs t, std::uint32_t correlation, const std::string& name,
            int grid_x, TimeNs dur = 1000) {
  ApiRecord a;
  a.name = "cudaLaunchKernel";
  a.cbid = 211;
  a.start = t;
  a.end = t + 50;
  a.process_id = kPid;
  a.thread_id = kThread;
  a.correlation_id = correlation;
  b.api_calls.push_back(a);
  KernelRecord k;
  k.name = name;
  k.start = t + 100;
  k.end = t + 100 + dur;
  k.stream = 7;
  k.context = 1;
  k.correlation_id = correlation;
  k.grid_x = grid_x;
  k.grid_y = k.grid_z = 1;
  k.block_x = 128;
  k.block_y = k.block_z = 1;
  b.kernels.push_back(k);
}

MarkerRecord marker(std::uint32_t id, TimeNs ts, std::uint32_t flags, std::string name = {}) {
  return thread_marker(id, ts, flags, std::move(name), kPid, kThread);
}

TEST(KernelCounts, MeasuredByCorrelationEstimatedBySignatureWithoutANamedSource) {
  RecordBatch b;
  b.counters.plan = small_plan();
  launch(b, 1000, 1, "gemm", 4);  // measured
  launch(b, 3000, 2, "gemm", 4);  // same signature: estimated from 1
  launch(b, 5000, 3, "gemm", 8);  // another grid: its own signature, never measured
  launch(b, 7000, 4, "gemm", 4);  // measured again
  launch(b, 9000, 5, "gemm", 4);  // inferred from 4, the nearest before it
  launch(b, 500, 6, "other", 4);  // nothing measured
  b.counter_records.push_back({1, 0, values(b.counters.plan, 100, 0, 0, 0)});
  b.counter_records.push_back({4, 0, values(b.counters.plan, 200, 0, 0, 0)});
  const std::vector<KernelCounts> c = assign_kernel_counts(b);
  ASSERT_EQ(c.size(), 6u);
  EXPECT_TRUE(c[0].measured);
  EXPECT_EQ(c[0].record, 0u);
  EXPECT_FALSE(c[1].measured);
  EXPECT_EQ(c[1].record, 0u);
  EXPECT_EQ(c[2].record, kNoId);
  EXPECT_TRUE(c[3].measured);
  EXPECT_EQ(c[3].record, 1u);
  EXPECT_EQ(c[4].record, 1u);
  EXPECT_EQ(c[5].record, kNoId);
  // No launch named its source (a batch from before work keys): estimates.
  EXPECT_EQ(c[1].basis, trace::CountedBasis::kEstimated);
  EXPECT_EQ(c[1].note, CountNote::kNoSameWork);
  EXPECT_EQ(c[2].basis, trace::CountedBasis::kNoCounts);
}

TEST(KernelCounts, BeforeAnyMeasurementTheFirstOneIsTaken) {
  RecordBatch b;
  launch(b, 1000, 1, "gemm", 4);
  launch(b, 2000, 2, "gemm", 4);
  b.counter_records.push_back({2, 0, {1.0}});
  const auto c = assign_kernel_counts(b);
  EXPECT_FALSE(c[0].measured);
  EXPECT_EQ(c[0].record, 0u);
  EXPECT_TRUE(c[1].measured);
}

TEST(KernelCounts, AGraphLaunchIsNeverMeasured) {
  // One correlation id for two kernels: a graph launch. A record with that id (which the
  // capture never makes) cannot tell the two apart.
  RecordBatch b;
  launch(b, 1000, 9, "a", 1);
  launch(b, 1000, 9, "b", 1);
  b.counter_records.push_back({9, 0, {1.0}});
  const auto c = assign_kernel_counts(b);
  EXPECT_EQ(c[0].record, kNoId);
  EXPECT_EQ(c[1].record, kNoId);
}

// Args of the i-th kernel slice, by name.
std::string args_of(const trace::Trace& t, const std::string& kernel_name, int nth = 0) {
  for (const trace::Track& track : t.tracks) {
    for (const auto& row : track.rows) {
      for (const trace::Slice& s : row) {
        if (t.str(s.cat) == "kernel" && t.str(s.name) == kernel_name && nth-- == 0) {
          return std::string(t.args.json(s.args));
        }
      }
    }
  }
  return {};
}

const trace::Slice* slice_named(const trace::Trace& t, std::string_view cat,
                                std::string_view name) {
  for (const trace::Track& track : t.tracks) {
    for (const auto& row : track.rows) {
      for (const trace::Slice& s : row) {
        if (t.str(s.cat) == cat && t.str(s.name) == name) return &s;
      }
    }
  }
  return nullptr;
}

double number(std::string_view args, std::string_view key) {
  const auto m = trace::json_member(args, key);
  EXPECT_TRUE(m.has_value()) << key << " in " << args;
  return m ? trace::json_number(*m).value_or(-1) : -1;
}

std::string text(std::string_view args, std::string_view key) {
  const auto m = trace::json_member(args, key);
  if (!m) return {};
  return std::string(trace::json_string(*m).value_or(""));
}

RecordBatch counted_batch() {
  RecordBatch b;
  b.process_id = kPid;
  b.counters.requested = true;
  b.counters.chip = "GH100";
  b.counters.plan = small_plan();
  b.counters.per_signature = 1;
  b.counters.measured = 1;
  // An undeclared range "step" around a gemm launch (measured) and a second gemm
  // (inferred); a declared range "mm [flops=1000 precision=bf16]" around a third.
  b.markers.push_back(marker(1, 900, kMarkerStart, "step"));
  launch(b, 1000, 1, "gemm", 4);
  launch(b, 3000, 2, "gemm", 4);
  b.markers.push_back(marker(1, 4500, kMarkerEnd));
  b.markers.push_back(marker(2, 4900, kMarkerStart, "mm [flops=1000 precision=bf16]"));
  launch(b, 5000, 3, "copyish", 2);
  b.markers.push_back(marker(2, 6500, kMarkerEnd));
  b.counter_records.push_back({1, 0, values(b.counters.plan, 2e9, 1e6, 3e6, 1e6), 0});
  b.counter_records.push_back({3, 0, values(b.counters.plan, 0, 0, 500, 100), 1});
  b.inferred_launches.push_back({2, 0, 0, true});  // the second gemm: the same work as 1
  return b;
}

TEST(CountedTrace, KernelsCarryTheirCountedWork) {
  const trace::Trace t = decode_to_trace(counted_batch());
  const std::string measured = args_of(t, "gemm", 0);
  EXPECT_DOUBLE_EQ(number(measured, "flops"), 2e9 + 2e6);
  EXPECT_DOUBLE_EQ(number(measured, "dram bytes"), 4e6);
  EXPECT_DOUBLE_EQ(number(measured, "dram bytes read"), 3e6);
  EXPECT_EQ(text(measured, "precision"), "bf16");
  EXPECT_EQ(text(measured, "flops source"), "counters");
  EXPECT_TRUE(trace::json_member(measured, "counters replayed").has_value());
  const auto by = trace::json_member(measured, "flops by precision");
  ASSERT_TRUE(by.has_value());
  EXPECT_DOUBLE_EQ(number(*by, "bf16"), 2e9);
  EXPECT_DOUBLE_EQ(number(*by, "fp32"), 2e6);
  const auto path = trace::json_member(measured, "tensor flops by path");
  ASSERT_TRUE(path.has_value());
  EXPECT_DOUBLE_EQ(number(*path, "hgmma"), 2e9);

  const std::string inferred = args_of(t, "gemm", 1);
  EXPECT_DOUBLE_EQ(number(inferred, "flops"), 2e9 + 2e6);
  EXPECT_EQ(text(inferred, "flops source"), "counters (same work)");
  EXPECT_FALSE(trace::json_member(inferred, "counters replayed").has_value());

  // A kernel with no floating-point work: 0 FLOPs, counted, its bytes known.
  const std::string copy = args_of(t, "copyish");
  EXPECT_DOUBLE_EQ(number(copy, "flops"), 0);
  EXPECT_DOUBLE_EQ(number(copy, "dram bytes"), 600);
  // Its counters name no precision: the declaring operator's is inherited.
  EXPECT_EQ(text(copy, "precision"), "bf16");

  const trace::Slice* k = slice_named(t, "kernel", "gemm");
  ASSERT_NE(k, nullptr);
  EXPECT_DOUBLE_EQ(t.metrics_of(*k).flops, 2e9 + 2e6);
  EXPECT_DOUBLE_EQ(t.metrics_of(*k).bytes, 4e6);
}

TEST(CountedTrace, OperatorsWithoutDeclaredCountsSumTheirKernels) {
  const trace::Trace t = decode_to_trace(counted_batch());
  const trace::Slice* step = slice_named(t, "user_annotation", "step");
  ASSERT_NE(step, nullptr);
  EXPECT_DOUBLE_EQ(t.metrics_of(*step).flops, 2 * (2e9 + 2e6));
  EXPECT_DOUBLE_EQ(t.metrics_of(*step).bytes, 8e6);
  EXPECT_EQ(text(t.args.json(step->args), "flops source"), "counters (same work)");
  const trace::Slice* extent = slice_named(t, "gpu_user_annotation", "step");
  ASSERT_NE(extent, nullptr);
  EXPECT_DOUBLE_EQ(t.metrics_of(*extent).flops, 2 * (2e9 + 2e6));

  // Declared counts win; the counted ones ride along for comparison.
  const trace::Slice* mm = slice_named(t, "user_annotation", "mm");
  ASSERT_NE(mm, nullptr);
  EXPECT_DOUBLE_EQ(t.metrics_of(*mm).flops, 1000);
  const std::string a(t.args.json(mm->args));
  EXPECT_EQ(text(a, "flops source"), "suffix");
  EXPECT_DOUBLE_EQ(number(a, "counted flops"), 0);
  EXPECT_DOUBLE_EQ(number(a, "counted dram bytes"), 600);
}

TEST(CountedTrace, MetadataNamesTheMetricsAndWhatWasMeasured) {
  const trace::Trace t = decode_to_trace(counted_batch());
  std::map<std::string, std::string> info(t.info.begin(), t.info.end());
  ASSERT_TRUE(info.count("counters"));
  EXPECT_NE(info["counters"].find("chip GH100"), std::string::npos) << info["counters"];
  EXPECT_NE(info["counters"].find("first 1 launch of each work key"), std::string::npos)
      << info["counters"];
  EXPECT_NE(info["counter metrics"].find("dram__bytes_read.sum"), std::string::npos);
  EXPECT_EQ(info["counters measured launches"], "1");

  RecordBatch off = counted_batch();
  off.counters.unavailable = "cuptiRangeProfilerEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES";
  off.counter_records.clear();
  const trace::Trace t2 = decode_to_trace(off);
  std::map<std::string, std::string> info2(t2.info.begin(), t2.info.end());
  EXPECT_EQ(info2["counters"],
            "unavailable: cuptiRangeProfilerEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES");
  // The trace is whole without them.
  EXPECT_NE(slice_named(t2, "kernel", "gemm"), nullptr);
  EXPECT_FALSE(trace::json_member(args_of(t2, "gemm"), "flops").has_value());
}

TEST(CountedTrace, AnIncompleteMeasurementIsEstimatedAndNeverASource) {
  RecordBatch b = counted_batch();
  b.counters.measured_by_passes = {{2, 5}, {6, 1}};
  b.counters.incomplete = 1;
  b.counters.configure_ns = 300'000'000;
  b.counters.replay_ns = 12'500'000'000;
  b.counters.decode_ns = 400'000'000;
  b.counter_records[0].incomplete = "tensor operations per instruction 320, learned 640";
  launch(b, 8000, 4, "gemm", 4);  // no source named: an estimate by signature
  const trace::Trace t = decode_to_trace(b);
  auto args_of_launch = [&t](double correlation) {
    for (int nth = 0; nth < 4; ++nth) {
      const std::string a = args_of(t, "gemm", nth);
      if (!a.empty() && number(a, "correlation") == correlation) return a;
    }
    return std::string();
  };
  const std::string measured = args_of_launch(1);
  EXPECT_EQ(text(measured, "flops source"), "counters (estimated)") << measured;
  EXPECT_TRUE(trace::json_member(measured, "counters replayed").has_value());
  const std::string note = text(measured, "counters note");
  EXPECT_NE(note.find("learned for its function"), std::string::npos) << note;
  EXPECT_NE(note.find("learned 640"), std::string::npos) << note;
  // The incomplete values are no source: not for a launch that named it, not for an
  // estimate by signature.
  const std::string named = args_of_launch(2);
  EXPECT_FALSE(trace::json_member(named, "flops").has_value()) << named;
  const std::string later = args_of_launch(4);
  EXPECT_FALSE(trace::json_member(later, "flops").has_value()) << later;
  std::map<std::string, std::string> info(t.info.begin(), t.info.end());
  EXPECT_EQ(info["counters measured launches by passes"], "5 in 2 passes, 1 in 6 passes");
  EXPECT_EQ(info["counters incomplete measurements"], "1");
  EXPECT_EQ(info["counters time measuring"],
            "13.200 s: 0.300 s configuring metric sets, 12.500 s in measured launches and "
            "their replays, 0.400 s decoding");
}

TEST(CountedTrace, KernelsInheritTheInnermostDeclaredPrecision) {
  RecordBatch b;
  b.process_id = kPid;
  b.markers.push_back(marker(1, 900, kMarkerStart, "outer [precision=tf32]"));
  b.markers.push_back(marker(2, 950, kMarkerStart, "inner [precision=bf16]"));
  launch(b, 1000, 1, "a", 1);
  b.markers.push_back(marker(2, 1200, kMarkerEnd));
  b.markers.push_back(marker(3, 1300, kMarkerStart, "undeclared"));
  launch(b, 1400, 2, "b", 1);
  b.markers.push_back(marker(3, 1600, kMarkerEnd));
  b.markers.push_back(marker(1, 3000, kMarkerEnd));
  launch(b, 4000, 3, "c", 1);  // outside every range
  const trace::Trace t = decode_to_trace(b);
  EXPECT_EQ(text(args_of(t, "a"), "precision"), "bf16");
  EXPECT_EQ(text(args_of(t, "b"), "precision"), "tf32");
  EXPECT_EQ(text(args_of(t, "c"), "precision"), "");
}

TEST(CountedTrace, GpuMetricsBecomeCounterTracksOfTheirDevice) {
  RecordBatch b;
  b.process_id = kPid;
  launch(b, 1000, 1, "k", 1);
  b.gpu_metrics.requested = true;
  b.gpu_metrics.names = {"sm__cycles_active.avg.pct_of_peak_sustained_elapsed",
                         "dram__bytes_read.sum.per_second"};
  b.gpu_metrics.labels = {"SM active %", "DRAM read GB/s"};
  b.gpu_metrics.interval_ns = 20000;
  b.gpu_metric_samples.push_back({0, 1000, 21000, {50.0, 1200.0}});
  b.gpu_metric_samples.push_back({0, 21000, 41000, {100.0, 2400.0}});
  const trace::Trace t = decode_to_trace(b);
  std::map<std::string, const trace::CounterSeries*> series;
  for (const trace::CounterSeries& s : t.counters) series[std::string(t.str(s.key))] = &s;
  ASSERT_TRUE(series.count("SM active %"));
  ASSERT_TRUE(series.count("DRAM read GB/s"));
  const trace::CounterSeries& sm = *series["SM active %"];
  EXPECT_EQ(t.str(sm.name), "GPU metrics");
  ASSERT_EQ(sm.points.size(), 2u);
  EXPECT_EQ(sm.points[0].ts, 1000);
  EXPECT_DOUBLE_EQ(sm.points[1].value, 100.0);
  // On the GPU process of device 0, where its kernels are.
  EXPECT_TRUE(t.processes[sm.process].is_gpu);
  EXPECT_EQ(t.processes[sm.process].device, 0);
  std::map<std::string, std::string> info(t.info.begin(), t.info.end());
  EXPECT_NE(info["gpu metrics"].find("every 20000 ns"), std::string::npos);
}

TEST(CountersSetting, ParsesTheDocumentedForms) {
  std::string error;
  EXPECT_FALSE(parse_counters("off", &error)->on);
  EXPECT_FALSE(parse_counters("", &error)->on);
  EXPECT_TRUE(parse_counters("on", &error)->on);
  EXPECT_EQ(parse_counters("on", &error)->per_signature, kDefaultCountersPerSignature);
  EXPECT_EQ(parse_counters("5", &error)->per_signature, 5u);
  EXPECT_EQ(parse_counters("all", &error)->per_signature, 0u);
  EXPECT_FALSE(parse_counters("-1", &error).has_value());
  EXPECT_NE(error.find("'-1'"), std::string::npos);
  EXPECT_FALSE(parse_counters("2x", &error).has_value());
}

TEST(GpuMetricsSetting, ParsesIntervalsWithTheirUnits) {
  std::string error;
  EXPECT_FALSE(parse_gpu_metrics("off", &error)->on);
  EXPECT_EQ(parse_gpu_metrics("on", &error)->interval_ns, 100000);
  EXPECT_EQ(parse_gpu_metrics("20us", &error)->interval_ns, 20000);
  EXPECT_EQ(parse_gpu_metrics("0.5ms", &error)->interval_ns, 500000);
  EXPECT_EQ(parse_gpu_metrics("50000ns", &error)->interval_ns, 50000);
  EXPECT_FALSE(parse_gpu_metrics("5us", &error).has_value());   // below 10 us
  EXPECT_FALSE(parse_gpu_metrics("20ms", &error).has_value());  // above 10 ms
  EXPECT_FALSE(parse_gpu_metrics("20", &error).has_value());    // no unit
  EXPECT_NE(error.find("10us to 10ms"), std::string::npos);
}

TEST(CaptureEnvCounters, ReadFromTheEnvironmentAndNeverBothMonitors) {
  std::map<std::string, std::string> vars = {{"FLOPLINE_COUNTERS", "3"}};
  auto getenv = [&vars](const char* n) -> const char* {
    auto it = vars.find(n);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
  CaptureEnv env = read_capture_env(getenv);
  EXPECT_TRUE(env.counters.on);
  EXPECT_EQ(env.counters.per_signature, 3u);
  vars["FLOPLINE_GPU_METRICS"] = "20us";
  env = read_capture_env(getenv);
  EXPECT_TRUE(env.counters.on);
  EXPECT_FALSE(env.gpu_metrics.on);
  ASSERT_FALSE(env.warnings.empty());
  vars.erase("FLOPLINE_COUNTERS");
  env = read_capture_env(getenv);
  EXPECT_TRUE(env.gpu_metrics.on);
  EXPECT_EQ(env.gpu_metrics.interval_ns, 20000);
  vars["FLOPLINE_COUNTERS"] = "bogus";
  env = read_capture_env(getenv);
  EXPECT_FALSE(env.counters.on);
  EXPECT_NE(env.warnings.front().find("FLOPLINE_COUNTERS"), std::string::npos);
}

}  // namespace
}  // namespace flopline::capture

namespace flopline::capture {
namespace {

TEST(KernelCounts, MeasuredLaunchesWithoutTimesArePlacedAtTheirCall) {
  RecordBatch b;
  const std::vector<std::string> chip = {"sm__sass_thread_inst_executed_op_ffma_pred_on",
                                         "gpu__time_duration"};
  b.counters.plan = plan_counter_metrics(chip);
  ASSERT_EQ(b.counters.plan.metrics.size(), 2u);
  ApiRecord call;
  call.name = "cuLaunchKernel";
  call.start = 5000;
  call.end = 90000;  // the replay ran inside the call
  call.correlation_id = 3;
  b.api_calls.push_back(call);
  KernelRecord measured;
  measured.name = "k";
  measured.correlation_id = 3;  // no times: CUPTI gives a replayed launch none
  b.kernels.push_back(measured);
  KernelRecord running;  // no times and no counters: still running at a forced flush
  running.name = "late";
  running.correlation_id = 4;
  b.kernels.push_back(running);
  KernelRecord normal;
  normal.name = "n";
  normal.start = 100;
  normal.end = 200;
  normal.correlation_id = 1;
  b.kernels.push_back(normal);
  KernelRecord earlier;  // launched before, still running when the measured call began
  earlier.name = "e";
  earlier.start = 4000;
  earlier.end = 7000;
  earlier.correlation_id = 2;
  b.kernels.push_back(earlier);
  std::vector<double> v(2, 0);
  v[b.counters.plan.metrics[0].use == CounterUse::kDuration ? 0 : 1] = 1234.0;  // ns
  b.counter_records.push_back({3, 0, v});
  place_replayed_kernels(b);
  ASSERT_EQ(b.kernels.size(), 3u);
  EXPECT_EQ(b.kernels[0].name, "k");
  // After the call's start (5000) and after the earlier work on the device (7000).
  EXPECT_EQ(b.kernels[0].start, 7000);
  EXPECT_EQ(b.kernels[0].end, 7000 + 1234);
  EXPECT_TRUE(b.kernels[0].replayed);
  EXPECT_EQ(b.kernels[1].name, "n");
  EXPECT_FALSE(b.kernels[1].replayed);
  // The one still running is left out, and counted.
  EXPECT_EQ(b.unfinished_records, 1u);
}

TEST(KernelCounts, UnfinishedRecordsAreSaidInTheMetadata) {
  RecordBatch b;
  b.process_id = 7;
  KernelRecord k;
  k.name = "n";
  k.start = 100;
  k.end = 200;
  k.correlation_id = 1;
  b.kernels.push_back(k);
  auto said = [](const trace::Trace& t) {
    for (const auto& [key, value] : t.info) {
      if (key == kUnfinishedRecordsKey) return value;
    }
    return std::string();
  };
  EXPECT_EQ(said(decode_to_trace(b)), "");
  b.unfinished_records = 3;
  EXPECT_EQ(said(decode_to_trace(b)).rfind("3 (", 0), 0u) << said(decode_to_trace(b));
}

}  // namespace
}  // namespace flopline::capture
