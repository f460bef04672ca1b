// The streaming capture's decoder (streaming_decoder.h) on synthetic records that arrive
// as a capture hands them over, late GPU records included: the events of all appends are
// the events of decode() on the whole run, each written once; what is held after an
// append stays bounded however many appends there are; counted FLOPs are inferred
// across an append boundary; and the streamed file, finished in place, reads back with
// its metadata.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "flopline/capture/capture_config.h"
#include "flopline/capture/kernel_counts.h"
#include "flopline/capture/record_decoder.h"
#include "flopline/capture/segmented_batch.h"
#include "flopline/capture/streaming_decoder.h"
#include "flopline/trace/chrome_reader.h"
#include "flopline/trace/chrome_writer.h"
#include "flopline/trace/incremental_trace.h"
#include "flopline/trace/json_value.h"
#include "record_test_util.h"

namespace flopline::capture {
namespace {

constexpr std::uint32_t kPid = 4242;
constexpr std::uint32_t kMain = 4242;
constexpr std::uint32_t kWorker = 4243;
constexpr TimeNs kUs = 1000;
constexpr TimeNs kMs = 1000 * kUs;

DeviceInfo device(std::uint32_t ordinal) {
  DeviceInfo d;
  d.ordinal = ordinal;
  d.name = "NVIDIA H200";
  d.sm_count = 132;
  d.compute_major = 9;
  d.clock_khz = 1980000;
  d.memory_clock_khz = 3201000;
  d.memory_bus_width = 6144;
  d.total_memory = 150ull << 30;
  d.max_warps_per_sm = 64;
  d.max_blocks_per_sm = 32;
  d.registers_per_sm = 65536;
  d.shared_memory_per_sm = 233472;
  return d;
}

// A record with the time a capture would hand it over (CPU records when they end, GPU
// records a little later, as CUPTI's buffers complete).
template <class T>
struct Arriving {
  TimeNs at;
  T record;
};

// A counter plan of four metrics, and values that put `tensor` in its tensor metric.
CounterPlan small_plan() {
  const std::vector<std::string> chip = {"sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32",
                                         "sm__sass_thread_inst_executed_op_ffma_pred_on",
                                         "dram__bytes_read", "lts__t_sectors_srcunit_tex_op_write"};
  return plan_counter_metrics(chip);
}

std::vector<double> plan_values(const CounterPlan& plan, double tensor) {
  std::vector<double> v(plan.metrics.size(), 0);
  for (std::size_t i = 0; i < plan.metrics.size(); ++i) {
    if (plan.metrics[i].name.find("hgmma") != std::string::npos) v[i] = tensor;
  }
  return v;
}

// A synthetic run: a training loop with nested NVTX ranges (declared counts, operators
// owning one or two kernels), copies, sets, syncs, instants, graph launches, NCCL calls
// and kernels, failed and lost launches, a kernel with no launch, GPU metric samples,
// overheads, names, start/end ranges ended on another thread, a range open for the whole
// run and one never closed, capture windows. With `counters`: each kernel name's first
// launch measured (its kernel replayed, arriving without times, and its counter record),
// later launches inferred from it; NCCL kernels neither.
class Workload {
 public:
  explicit Workload(std::uint32_t seed, bool counters = false) : rng_(seed), counters_(counters) {}

  void run(int steps) {
    meta_.process_id = kPid;
    meta_.process_name = "python3";
    meta_.dropped_records = 7;
    meta_.capture_range = "cudaProfilerApi";
    meta_.gpu_metrics.requested = true;
    meta_.gpu_metrics.names = {"sm__cycles_active.avg"};
    meta_.gpu_metrics.labels = {"SM active %"};
    meta_.gpu_metrics.interval_ns = 100 * kUs;
    meta_.world_size = 2;
    meta_.rank = 0;
    if (counters_) {
      meta_.counters.requested = true;
      meta_.counters.plan = small_plan();
      meta_.counters.per_signature = 1;
    }
    TimeNs t = 10 * kMs;
    devices_.push_back({t, device(0)});
    devices_.push_back({t, device(1)});
    thread_names_.push_back({t, ThreadName{kMain, "python3"}});
    thread_names_.push_back({t, ThreadName{kWorker, "loader"}});
    NameRecord stream_name;
    stream_name.object.kind = ObjectKind::kStream;
    stream_name.object.device = 0;
    stream_name.object.stream = 7;
    stream_name.name = "compute";
    names_.push_back({t, stream_name});
    marker(kMain, t, kMarkerStart, next_id_++, "train");  // ends with the run
    const std::uint32_t epoch = next_id_++;
    // Never ends, declares FLOPs, and owns every launch: writing them may not wait for it.
    marker(kMain, t + 1, kMarkerStart, epoch, "epoch 0 [flops=1e15]");
    window(t + 2, 0);
    for (int s = 0; s < steps; ++s) t = step(t, s);
    window_end(t);
    marker(kMain, t + 5 * kUs, kMarkerEnd, 1, "");
    end_ = t + 10 * kUs;
  }

  // Every record with its arrival, in arrival order, as parts of `interval`.
  std::vector<RecordBatch> parts(TimeNs interval, std::vector<TimeNs>* part_ends) const {
    const TimeNs last = end_ + 200 * kMs;
    std::vector<RecordBatch> out;
    for (TimeNs at = interval; at < last + interval; at += interval) {
      RecordBatch b = meta_at(at);
      fill(b, at - interval, at);
      out.push_back(std::move(b));
      part_ends->push_back(at);
    }
    return out;
  }

  RecordBatch whole() const {
    RecordBatch b = meta_at(INT64_MAX);
    fill(b, INT64_MIN, INT64_MAX);
    return b;
  }

 private:
  // How long after its launch call a kernel starts.
  TimeNs lag() { return std::uniform_int_distribution<TimeNs>(0, 3 * kMs)(rng_); }
  // How long after it ended a record reaches the capture (less than kSettle).
  TimeNs late() { return std::uniform_int_distribution<TimeNs>(0, 900 * kUs)(rng_); }

  void marker(std::uint32_t thread, TimeNs ts, std::uint32_t flags, std::uint32_t id,
              std::string name, bool separate_data = false) {
    const MarkerRecord m = thread_marker(id, ts, flags, std::move(name), kPid, thread);
    if (separate_data) {
      MarkerDataRecord d;
      d.id = id;
      d.has_color = true;
      d.color = 0xff00ff00u;
      d.category = 3;
      marker_data_.push_back({ts + late(), d});
    }
    markers_.push_back({ts + late(), m});
  }

  ApiRecord call(std::uint32_t thread, std::string name, TimeNs start, TimeNs dur) {
    ApiRecord a;
    a.domain = name.rfind("cuda", 0) == 0 ? ApiDomain::kRuntime : ApiDomain::kDriver;
    a.name = std::move(name);
    a.cbid = 211;
    a.start = start;
    a.end = start + dur;
    a.process_id = kPid;
    a.thread_id = thread;
    a.correlation_id = next_correlation_++;
    return a;
  }

  void add_call(const ApiRecord& a) { calls_.push_back({a.end + late(), a}); }

  // When work on a stream can start: after `ready` and after the stream's earlier work.
  TimeNs on_stream(std::uint32_t dev, std::uint32_t stream, TimeNs ready, TimeNs dur) {
    TimeNs& free = stream_free_[static_cast<std::uint64_t>(dev) << 32 | stream];
    const TimeNs start = std::max(ready, free);
    free = start + dur;
    return start;
  }

  KernelRecord kernel(const ApiRecord& a, std::string name, TimeNs ready, TimeNs dur,
                      std::uint32_t dev = 0, std::uint32_t stream = 7) {
    KernelRecord k;
    k.name = std::move(name);
    const TimeNs start = on_stream(dev, stream, ready, dur);
    k.start = start;
    k.end = start + dur;
    k.device = dev;
    k.context = dev + 1;
    k.stream = stream;
    k.correlation_id = a.correlation_id;
    k.grid_x = 132;
    k.grid_y = k.grid_z = 1;
    k.block_x = 256;
    k.block_y = k.block_z = 1;
    k.registers_per_thread = 64;
    return k;
  }

  void add_kernel(const KernelRecord& k) { kernels_.push_back({k.end + late(), k}); }

  // One launch with its kernel, `gpu_lag` after the call.
  TimeNs launch(TimeNs t, const std::string& name, TimeNs gpu_lag, TimeNs dur,
                std::uint32_t dev = 0, std::uint32_t stream = 7, std::uint32_t thread = kMain) {
    const ApiRecord a = call(thread, "cudaLaunchKernel", t, 4 * kUs);
    add_call(a);
    KernelRecord k = kernel(a, name, a.end + gpu_lag, dur, dev, stream);
    if (counters_ && name.rfind("nccl", 0) != 0) {
      const auto [source, first] = measured_.try_emplace(name, next_measurement_);
      if (first) {
        // Replayed: its record comes without times, placed at its call.
        ++next_measurement_;
        k.start = k.end = 0;
        kernels_.push_back({a.end + late(), k});
        counter_records_.push_back(
            {a.end + late(),
             CounterRecord{a.correlation_id, dev, plan_values(meta_.counters.plan, 1e9 * dur / kUs),
                           source->second}});
        return a.end + kUs;
      }
      inferred_.push_back(
          {a.end + late(), InferredLaunch{a.correlation_id, dev, source->second, true}});
    }
    add_kernel(k);
    return a.end + kUs;
  }

  void window(TimeNs at, std::uint32_t index) {
    CaptureWindowRecord w;
    w.index = index;
    w.start = at;
    w.opened_by = "cudaProfilerStart";
    w.open_thread = kMain;
    w.open = true;
    windows_.push_back(w);
  }
  void window_end(TimeNs at) {
    windows_.back().open = false;
    windows_.back().end = at;
    windows_.back().closed_by = "cudaProfilerStop";
    windows_.back().close_thread = kMain;
  }

  TimeNs step(TimeNs t, int s) {
    const std::uint32_t step_id = next_id_++;
    marker(kMain, t, kMarkerStart, step_id, "step " + std::to_string(s), s % 3 == 0);
    t += 10 * kUs;
    // An operator with declared counts owning one kernel: the kernel carries its counts.
    const std::uint32_t mm = next_id_++;
    marker(kMain, t, kMarkerStart, mm, "matmul [flops=2e9 bytes=1e6 precision=bf16]");
    t = launch(t + kUs, "gemm_bf16", lag(), 40 * kUs);
    marker(kMain, t, kMarkerEnd, mm, "");
    // One owning two kernels on two streams.
    const std::uint32_t lin = next_id_++;
    marker(kMain, t + kUs, kMarkerStart, lin, "linear [flops=1e6]");
    t = launch(t + 2 * kUs, "gemm_a", lag(), 20 * kUs);
    t = launch(t, "bias_add", lag(), 5 * kUs, 0, 9);
    marker(kMain, t, kMarkerEnd, lin, "");
    // An operator without counts; a copy and a set inside it.
    const std::uint32_t opt = next_id_++;
    marker(kMain, t + kUs, kMarkerStart, opt, "optimizer");
    {
      const ApiRecord a = call(kMain, "cudaMemcpyAsync", t + 2 * kUs, 6 * kUs);
      add_call(a);
      MemcpyRecord m;
      m.start = on_stream(0, 7, a.end + lag(), 8 * kUs);
      m.end = m.start + 8 * kUs;
      m.kind = MemcpyKind::kHtoD;
      m.src_kind = MemoryKind::kPinned;
      m.dst_kind = MemoryKind::kDevice;
      m.bytes = 1 << 20;
      m.context = 1;
      m.stream = 7;
      m.correlation_id = a.correlation_id;
      memcpys_.push_back({m.end + late(), m});
      const ApiRecord b = call(kMain, "cudaMemsetAsync", a.end + kUs, 3 * kUs);
      add_call(b);
      MemsetRecord z;
      z.start = on_stream(0, 7, b.end + lag(), 2 * kUs);
      z.end = z.start + 2 * kUs;
      z.bytes = 4096;
      z.memory_kind = MemoryKind::kDevice;
      z.context = 1;
      z.stream = 7;
      z.correlation_id = b.correlation_id;
      memsets_.push_back({z.end + late(), z});
      t = b.end + kUs;
    }
    marker(kMain, t, kMarkerEnd, opt, "");
    // A mark, and a start/end range begun on the loader thread and ended on the main one.
    marker(kMain, t + kUs, kMarkerInstant, next_id_++, "checkpoint");
    const std::uint32_t fetch = next_id_++;
    marker(kWorker, t - 30 * kUs, kMarkerStart, fetch, "fetch batch");
    marker(kMain, t + 2 * kUs, kMarkerEnd, fetch, "");
    launch(t - 20 * kUs, "decode_jpeg", lag(), 10 * kUs, 1, 3, kWorker);
    t += 3 * kUs;
    // A graph launch of three kernels, every eighth step.
    if (s % 8 == 0) {
      const ApiRecord g = call(kMain, "cudaGraphLaunch", t, 5 * kUs);
      add_call(g);
      TimeNs k0 = g.end + lag();
      for (int i = 0; i < 3; ++i) {
        KernelRecord k = kernel(g, "graph_kernel_" + std::to_string(i), k0, 7 * kUs);
        k.graph_id = 5;
        k.graph_node_id = static_cast<std::uint64_t>(i + 1);
        add_kernel(k);
        k0 = k.end + kUs;
      }
      t = g.end + kUs;
    }
    // NCCL: its call record, then the kernel that carries it, every fifth step.
    if (s % 5 == 0) {
      NcclCallRecord n;
      n.start = t;
      n.thread_id = kMain;
      n.collective = trace::Collective::kAllReduce;
      n.message_bytes = 1 << 22;
      nccl_.push_back({t + kUs, n});
      t = launch(t + 2 * kUs,
                 "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", lag(),
                 30 * kUs, 0, 11);
    }
    // A launch that failed (no kernel), and every so often one whose kernel never comes
    // (lost) and a kernel whose launch was not recorded.
    {
      ApiRecord failed = call(kMain, "cudaLaunchKernel", t, 2 * kUs);
      failed.return_value = 98;
      add_call(failed);
      t = failed.end + kUs;
      if (s % 13 == 0) {
        const ApiRecord lost = call(kMain, "cuLaunchKernel", t, 2 * kUs);
        add_call(lost);
        ApiRecord stray = call(kMain, "cuLaunchKernel", 0, 0);
        add_kernel(kernel(stray, "unlaunched", t + lag(), 3 * kUs));
        t = lost.end + kUs;
      }
    }
    // A kernel that runs long after its launch, past the next appends.
    // An operator owning that kernel alone: it carries the operator's FLOPs.
    if (s % 17 == 4) {
      const std::uint32_t solo = next_id_++;
      marker(kMain, t, kMarkerStart, solo, "solo [flops=5e9]");
      t = launch(t + kUs, "long_tail", 25 * kMs, 2 * kMs, 0, 13);
      marker(kMain, t, kMarkerEnd, solo, "");
    }
    // The step's sync: the call and its sync record.
    {
      const ApiRecord a = call(kMain, "cudaStreamSynchronize", t + kUs, 30 * kUs);
      add_call(a);
      SyncRecord y;
      y.type = SyncType::kStreamSynchronize;
      y.start = a.start + kUs;
      y.end = a.end - kUs;
      y.correlation_id = a.correlation_id;
      y.context = 1;
      y.stream = 7;
      syncs_.push_back({y.end + late(), y});
      SyncRecord orphan = y;  // its call was not recorded: on its stream instead
      orphan.correlation_id = 0;
      orphan.type = SyncType::kEventSynchronize;
      orphan.start = y.end + kUs;
      orphan.end = orphan.start + kUs;
      syncs_.push_back({orphan.end + late(), orphan});
      t = a.end + kUs;
    }
    OverheadRecord o;
    o.kind = OverheadKind::kCuptiBufferFlush;
    o.object.kind = ObjectKind::kThread;
    o.object.thread_id = kMain;
    o.start = t;
    o.end = t + 2 * kUs;
    overheads_.push_back({o.end + late(), o});
    marker(kMain, t + 3 * kUs, kMarkerEnd, step_id, "");
    const TimeNs next = t + 100 * kUs;
    for (TimeNs g = t - 200 * kUs; g < next - 200 * kUs; g += 50 * kUs) {
      GpuMetricSample m;
      m.device = 0;
      m.start = g;
      m.end = g + 50 * kUs;
      m.values = {static_cast<double>(g % 97)};
      samples_.push_back({m.end + late(), m});
    }
    return next;
  }

  // The run-level fields as the capture knows them at `at`.
  RecordBatch meta_at(TimeNs at) const {
    RecordBatch b = meta_;
    for (CaptureWindowRecord w : windows_) {
      if (w.start > at) continue;
      if (!w.open && w.end > at) {
        w.open = true;
        w.end = 0;
        w.closed_by.clear();
        w.close_thread = 0;
      }
      b.capture_windows.push_back(w);
    }
    return b;
  }

  template <class T>
  static void take(const std::vector<Arriving<T>>& from, TimeNs after, TimeNs upto,
                   std::vector<T>& to) {
    for (const Arriving<T>& r : from) {
      if (r.at > after && r.at <= upto) to.push_back(r.record);
    }
  }

  void fill(RecordBatch& b, TimeNs after, TimeNs upto) const {
    take(devices_, after, upto, b.devices);
    take(thread_names_, after, upto, b.thread_names);
    take(names_, after, upto, b.names);
    take(calls_, after, upto, b.api_calls);
    take(kernels_, after, upto, b.kernels);
    take(memcpys_, after, upto, b.memcpys);
    take(memsets_, after, upto, b.memsets);
    take(syncs_, after, upto, b.syncs);
    take(markers_, after, upto, b.markers);
    take(marker_data_, after, upto, b.marker_data);
    take(overheads_, after, upto, b.overheads);
    take(samples_, after, upto, b.gpu_metric_samples);
    take(nccl_, after, upto, b.nccl_calls);
    take(counter_records_, after, upto, b.counter_records);
    take(inferred_, after, upto, b.inferred_launches);
  }

  std::mt19937_64 rng_;
  RecordBatch meta_;
  std::vector<CaptureWindowRecord> windows_;
  std::vector<Arriving<DeviceInfo>> devices_;
  std::vector<Arriving<ThreadName>> thread_names_;
  std::vector<Arriving<NameRecord>> names_;
  std::vector<Arriving<ApiRecord>> calls_;
  std::vector<Arriving<KernelRecord>> kernels_;
  std::vector<Arriving<MemcpyRecord>> memcpys_;
  std::vector<Arriving<MemsetRecord>> memsets_;
  std::vector<Arriving<SyncRecord>> syncs_;
  std::vector<Arriving<MarkerRecord>> markers_;
  std::vector<Arriving<MarkerDataRecord>> marker_data_;
  std::vector<Arriving<OverheadRecord>> overheads_;
  std::vector<Arriving<GpuMetricSample>> samples_;
  std::vector<Arriving<NcclCallRecord>> nccl_;
  bool counters_ = false;
  std::unordered_map<std::string, std::uint32_t> measured_;  // kernel name -> measurement
  std::uint32_t next_measurement_ = 1;
  std::vector<Arriving<CounterRecord>> counter_records_;
  std::vector<Arriving<InferredLaunch>> inferred_;
  std::unordered_map<std::uint64_t, TimeNs> stream_free_;
  std::uint32_t next_id_ = 1;
  std::uint32_t next_correlation_ = 100;
  TimeNs end_ = 0;
};

// Records arrive at most this long after they end; appends write what ended before.
constexpr TimeNs kSettle = 1 * kMs;
constexpr TimeNs kInterval = 4 * kMs;

StreamingOptions test_options() {
  StreamingOptions o;
  o.kinds = kDefaultKinds | kKindSync;
  o.pending_limit_ns = 60 * kMs;
  o.graph_quiet_ns = 2 * kMs;
  return o;
}

// The trace's events as Chrome lines, metadata events aside, sorted.
std::vector<std::string> event_lines(const trace::Trace& t) {
  std::string text;
  trace::render_chrome_event_lines(t, INT64_MIN, INT64_MAX, {}, text);
  std::vector<std::string> lines;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    std::string line = text.substr(pos, nl - pos);
    pos = nl + 1;
    if (line.find("\"ph\":\"M\"") == std::string::npos) lines.push_back(std::move(line));
  }
  std::sort(lines.begin(), lines.end());
  return lines;
}

// The lines of `a` missing from `b` and of `b` missing from `a` (both sorted), a few of each.
std::string difference(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<std::string> only_a, only_b;
  std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(only_a));
  std::set_difference(b.begin(), b.end(), a.begin(), a.end(), std::back_inserter(only_b));
  std::string out = std::to_string(only_a.size()) + " only in the first, " +
                    std::to_string(only_b.size()) + " only in the second\n";
  for (std::size_t i = 0; i < only_a.size() && i < 6; ++i) out += "  first:  " + only_a[i] + "\n";
  for (std::size_t i = 0; i < only_b.size() && i < 6; ++i) out += "  second: " + only_b[i] + "\n";
  return out;
}

std::size_t count_with(const std::vector<std::string>& lines, std::string_view part) {
  return static_cast<std::size_t>(
      std::count_if(lines.begin(), lines.end(),
                    [&](const std::string& l) { return l.find(part) != std::string::npos; }));
}

TEST(ExpectsGpuRecord, LaunchesCopiesSetsAndWaitsOfTheRecordedKinds) {
  ApiRecord a;
  a.start = 1;
  a.end = 2;
  const std::uint32_t all = kDefaultKinds | kKindSync;
  for (const char* name : {"cudaLaunchKernel", "cuLaunchKernelEx", "cudaGraphLaunch_v10000",
                           "cudaMemcpyAsync", "cuMemsetD32Async", "cudaStreamSynchronize"}) {
    a.name = name;
    EXPECT_TRUE(expects_gpu_record(a, all)) << name;
  }
  for (const char* name : {"cudaLaunchHostFunc", "cudaMalloc", "cudaFree", "cudaEventRecord"}) {
    a.name = name;
    EXPECT_FALSE(expects_gpu_record(a, all)) << name;
  }
  a.name = "cudaStreamSynchronize";
  EXPECT_FALSE(expects_gpu_record(a, kDefaultKinds)) << "sync records are not recorded";
  a.name = "cudaMemcpyAsync";
  EXPECT_FALSE(expects_gpu_record(a, kKindKernel | kKindCalls));
  a.name = "cudaLaunchKernel";
  a.return_value = 1;
  EXPECT_FALSE(expects_gpu_record(a, all)) << "a failed launch starts nothing";
  a.return_value = 0;
  a.start = a.end = 0;
  EXPECT_FALSE(expects_gpu_record(a, all)) << "an untimed call";
}

class StreamingDecoderSeeds : public ::testing::TestWithParam<std::uint32_t> {};

TEST_P(StreamingDecoderSeeds, AppendsTogetherWriteTheWholeRunsEventsOnce) {
  Workload w(GetParam());
  w.run(600);
  const std::vector<std::string> whole = event_lines(decode_to_trace(w.whole()));

  std::vector<TimeNs> ends;
  std::vector<RecordBatch> parts = w.parts(kInterval, &ends);
  StreamingDecoder d(test_options());
  std::vector<std::string> streamed;
  std::size_t appends_with_events = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    d.add(std::move(parts[i]));
    const std::vector<std::string> lines = event_lines(d.take(ends[i] - kSettle));
    appends_with_events += !lines.empty();
    streamed.insert(streamed.end(), lines.begin(), lines.end());
  }
  const std::vector<std::string> last = event_lines(d.take(kEndOfRun));
  streamed.insert(streamed.end(), last.begin(), last.end());
  std::sort(streamed.begin(), streamed.end());

  EXPECT_GT(appends_with_events, 20u);
  ASSERT_TRUE(streamed == whole) << difference(streamed, whole);
  // The cases the workload is there for are in the events compared.
  EXPECT_EQ(count_with(whole, "\"cat\":\"user_annotation\",\"name\":\"train\""), 1u);
  // epoch 0 runs to the run's end, and its GPU extents with it.
  EXPECT_EQ(count_with(whole, "\"cat\":\"user_annotation\",\"name\":\"epoch 0\""), 1u);
  EXPECT_EQ(count_with(whole, "\"unclosed\":true"), count_with(whole, "\"name\":\"epoch 0\""));
  EXPECT_EQ(count_with(whole, "\"name\":\"long_tail\""), 36u);
  EXPECT_EQ(count_with(whole, "\"flops\":5000000000"), 3u * 36u);  // range, extent, kernel
  EXPECT_GT(count_with(whole, "\"collective\""), 0u);
  EXPECT_GT(count_with(whole, "\"gpu_user_annotation\""), 0u);
  EXPECT_EQ(count_with(whole, "capture window"), 2u);
  EXPECT_GT(count_with(whole, "\"ph\":\"C\""), 0u);
  EXPECT_GT(count_with(whole, "\"ph\":\"s\""), 0u);
  EXPECT_GT(count_with(whole, "\"color\":\"#00ff00\""), 0u);
  // A gemm owned alone by its declaring operator carries the operator's FLOPs.
  EXPECT_GT(count_with(whole, "\"flops\":2000000000"), 600u);
  EXPECT_EQ(d.held().open(), 0u);
}

// Other seeds move the GPU's lag, and so what crosses an append boundary.
INSTANTIATE_TEST_SUITE_P(Seeds, StreamingDecoderSeeds, ::testing::Values(7u, 8u, 9u, 10u));

// The same with --counters: measured launches' kernels arrive without times and are
// placed at their calls, later launches take the measurement's values across appends;
// the appends together are decode() of the whole run, counted values included.
class StreamingDecoderCountedSeeds : public ::testing::TestWithParam<std::uint32_t> {};

TEST_P(StreamingDecoderCountedSeeds, AppendsTogetherWriteTheWholeRunsCountedEventsOnce) {
  Workload w(GetParam(), true);
  w.run(400);
  RecordBatch all = w.whole();
  place_replayed_kernels(all);
  const std::vector<std::string> whole = event_lines(decode_to_trace(all));

  std::vector<TimeNs> ends;
  std::vector<RecordBatch> parts = w.parts(kInterval, &ends);
  StreamingDecoder d(test_options());
  std::vector<std::string> streamed;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    d.add(std::move(parts[i]));
    const std::vector<std::string> lines = event_lines(d.take(ends[i] - kSettle));
    streamed.insert(streamed.end(), lines.begin(), lines.end());
  }
  const std::vector<std::string> last = event_lines(d.take(kEndOfRun));
  streamed.insert(streamed.end(), last.begin(), last.end());
  std::sort(streamed.begin(), streamed.end());

  ASSERT_TRUE(streamed == whole) << difference(streamed, whole);
  EXPECT_GT(count_with(whole, "\"flops source\":\"counters\""), 0u);
  EXPECT_GT(count_with(whole, "\"flops source\":\"counters (same work)\""), 1000u);
  EXPECT_EQ(d.held().open(), 0u);
}

INSTANTIATE_TEST_SUITE_P(Seeds, StreamingDecoderCountedSeeds,
                         ::testing::Values(7u, 8u, 9u, 10u, 11u, 12u));

TEST(StreamingDecoder, TheMetadataOfTheLastAppendIsTheWholeRunsMetadata) {
  Workload w(3);
  w.run(60);
  const trace::Trace whole = decode_to_trace(w.whole());
  std::vector<TimeNs> ends;
  std::vector<RecordBatch> parts = w.parts(kInterval, &ends);
  StreamingDecoder d(test_options());
  for (std::size_t i = 0; i < parts.size(); ++i) {
    d.add(std::move(parts[i]));
    d.take(ends[i] - kSettle);
  }
  const trace::Trace last = d.take(kEndOfRun);
  EXPECT_EQ(last.info, whole.info);
  EXPECT_EQ(last.extra_top_level, whole.extra_top_level);
  EXPECT_EQ(last.report.dropped_records, 7u);
  ASSERT_EQ(last.devices.size(), whole.devices.size());
  EXPECT_EQ(last.devices[0].name, whole.devices[0].name);
}

// Held records after each append: what is still open, never the run so far.
TEST(StreamingDecoder, WhatItHoldsAfterEachAppendDoesNotGrowWithTheRun) {
  Workload w(11);
  w.run(3000);  // about 150 appends
  std::vector<TimeNs> ends;
  std::vector<RecordBatch> parts = w.parts(kInterval, &ends);
  StreamingDecoder d(test_options());
  std::vector<std::size_t> held, carried;
  std::size_t most_sources = 0;
  std::uint64_t most_bytes = 0;
  std::size_t records_per_part = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    records_per_part = std::max(records_per_part, record_count(parts[i]));
    d.add(std::move(parts[i]));
    d.take(ends[i] - kSettle);
    held.push_back(d.held().open());
    carried.push_back(d.held().carried_ranges);
    most_sources = std::max(most_sources, d.held().counter_sources);
    most_bytes = std::max(most_bytes, d.held_bytes());
  }
  ASSERT_GT(held.size(), 100u);
  // The early appends (after the first two) against the last ones before the run ends.
  auto most = [](const std::vector<std::size_t>& v, std::size_t from, std::size_t to) {
    return *std::max_element(v.begin() + static_cast<long>(from),
                             v.begin() + static_cast<long>(to));
  };
  const std::size_t steady = held.size() - 60;  // the last appends drain it
  const std::size_t early = most(held, 2, 20), late = most(held, steady - 40, steady);
  // What ended within the settle time and the GPU's lag behind the launches (most of an
  // append's records here, where the lag is most of an interval), never the run so far.
  EXPECT_LT(early, records_per_part) << early << " of " << records_per_part;
  EXPECT_LT(late, records_per_part) << late << " of " << records_per_part;
  EXPECT_LT(late, early + early / 2) << "early " << early << ", late " << late;
  // Ranges whose work is partly written: those closed within the lag, and train.
  EXPECT_LT(most(carried, steady - 40, steady), most(carried, 2, 20) + 20);
  EXPECT_LT(most(carried, steady - 40, steady), 80u);
  EXPECT_EQ(most_sources, 0u);
  EXPECT_LT(most_bytes, 1u << 20);
  d.take(kEndOfRun);
  EXPECT_EQ(d.held().open(), 0u);
}

// A CUDA graph's kernels end over several appends: they go out with their launch, every
// one with its flow.
TEST(StreamingDecoder, AGraphsKernelsAcrossAppendsKeepTheirLaunch) {
  RecordBatch all;
  all.process_id = kPid;
  ApiRecord g;
  g.name = "cudaGraphLaunch";
  g.start = 1 * kMs;
  g.end = g.start + 5 * kUs;
  g.process_id = kPid;
  g.thread_id = kMain;
  g.correlation_id = 9;
  all.api_calls.push_back(g);
  for (int i = 0; i < 5; ++i) {
    KernelRecord k;
    k.name = "graph_node_" + std::to_string(i);
    k.start = 2 * kMs + i * 3 * kMs;  // one every 3 ms, each 2 ms long
    k.end = k.start + 2 * kMs;
    k.context = 1;
    k.stream = 7;
    k.correlation_id = 9;
    k.graph_id = 1;
    k.graph_node_id = static_cast<std::uint64_t>(i + 1);
    all.kernels.push_back(k);
  }
  const std::vector<std::string> whole = event_lines(decode_to_trace(all));
  ASSERT_EQ(count_with(whole, "\"ph\":\"f\""), 5u);

  StreamingOptions o = test_options();
  o.graph_quiet_ns = 5 * kMs;  // more than the 3 ms between two of its kernels' ends
  StreamingDecoder d(o);
  std::vector<std::string> streamed;
  for (TimeNs at = 2 * kMs; at <= 30 * kMs; at += 2 * kMs) {
    RecordBatch part;
    part.process_id = kPid;
    if (g.end <= at && g.end > at - 2 * kMs) part.api_calls.push_back(g);
    for (const KernelRecord& k : all.kernels) {
      if (k.end <= at && k.end > at - 2 * kMs) part.kernels.push_back(k);
    }
    d.add(std::move(part));
    const std::vector<std::string> lines = event_lines(d.take(at));
    streamed.insert(streamed.end(), lines.begin(), lines.end());
  }
  const std::vector<std::string> last = event_lines(d.take(kEndOfRun));
  streamed.insert(streamed.end(), last.begin(), last.end());
  std::sort(streamed.begin(), streamed.end());
  EXPECT_TRUE(streamed == whole) << difference(streamed, whole);
  EXPECT_TRUE(last.empty()) << "the graph went out before the run's end";
}

// A batch as a capture with --counters hands it over: its process and counter settings.
RecordBatch counted_batch() {
  RecordBatch b;
  b.process_id = kPid;
  b.counters.requested = true;
  b.counters.plan = small_plan();
  b.counters.per_signature = 1;
  return b;
}

// --counters: the first launch of a work key is measured in one append; launches of the
// same work in later appends take its values, by the measurement's id.
RecordBatch counted_part(std::uint32_t correlation, TimeNs t, bool measured) {
  RecordBatch b = counted_batch();
  ApiRecord a;
  a.name = "cuLaunchKernel";
  a.start = t;
  a.end = t + 5 * kUs;
  a.process_id = kPid;
  a.thread_id = kMain;
  a.correlation_id = correlation;
  b.api_calls.push_back(a);
  KernelRecord k;
  k.name = "gemm";
  k.grid_x = 4;
  k.grid_y = k.grid_z = k.block_x = k.block_y = k.block_z = 1;
  k.context = 1;
  k.stream = 7;
  k.correlation_id = correlation;
  if (!measured) {
    k.start = t + 10 * kUs;
    k.end = k.start + 50 * kUs;
  }  // a measured launch's kernel arrives without times: placed at its call
  b.kernels.push_back(k);
  if (measured) {
    b.counter_records.push_back({correlation, 0, plan_values(b.counters.plan, 3e9), 17});
  } else {
    b.inferred_launches.push_back({correlation, 0, 17, true});
  }
  return b;
}

TEST(StreamingDecoder, CountsAreInferredFromALaunchMeasuredInAnEarlierAppend) {
  StreamingDecoder d(test_options());
  d.add(counted_part(1, 1 * kMs, true));
  const std::vector<std::string> first = event_lines(d.take(50 * kMs));
  ASSERT_EQ(count_with(first, "\"name\":\"gemm\""), 1u);
  EXPECT_EQ(count_with(first, "\"flops source\":\"counters\""), 1u);
  EXPECT_EQ(d.held().counter_sources, 1u);
  EXPECT_EQ(d.held().open(), 0u);

  for (std::uint32_t i = 0; i < 3; ++i) {
    d.add(counted_part(2 + i, (100 + 50 * i) * kMs, false));
    const std::vector<std::string> later = event_lines(d.take((140 + 50 * i) * kMs));
    ASSERT_EQ(count_with(later, "\"name\":\"gemm\""), 1u) << i;
    EXPECT_EQ(count_with(later, "\"flops source\":\"counters (same work)\""), 1u) << i;
    EXPECT_EQ(count_with(later, "\"flops\":3000000000"), 1u) << i;
    EXPECT_EQ(d.held().open(), 0u);
  }
  const trace::Trace last = d.take(kEndOfRun);
  // The source matched its kernel in the first append: not reported as lost.
  for (const auto& [key, value] : last.info) EXPECT_NE(key, "counters without their kernel");
}

// CUPTI hands a buffer over when it is full: on a quiet device a kernel's record can
// come long after its launch call was written (past pending_limit_ns). A measured
// launch's replayed kernel is then placed at the call written earlier, and an inferred
// launch's record waits for its kernel, however many appends that takes: both keep their
// counts (a DDP rank's measured kernels were lost this way: docs/results).
TEST(StreamingDecoder, KernelsThatComeAfterTheirCallWasWrittenKeepTheirCounts) {
  StreamingDecoder d(test_options());  // pending_limit_ns: 60 ms
  RecordBatch measured = counted_part(1, 1 * kMs, true);
  RecordBatch inferred = counted_part(2, 2 * kMs, false);
  // The calls and the counter records now, the kernels much later.
  std::vector<KernelRecord> late = {measured.kernels[0], inferred.kernels[0]};
  measured.kernels.clear();
  inferred.kernels.clear();
  d.add(std::move(measured));
  d.add(std::move(inferred));
  const std::vector<std::string> calls = event_lines(d.take(100 * kMs));
  EXPECT_EQ(count_with(calls, "\"name\":\"cuLaunchKernel\""), 2u) << "written after 60 ms";
  EXPECT_EQ(d.held().written_calls, 2u) << "their thread and times are kept";
  for (int i = 0; i < 4; ++i) {  // appends without them
    d.add(counted_batch());
    EXPECT_TRUE(event_lines(d.take((200 + 100 * i) * kMs)).empty());
  }
  RecordBatch kernels = counted_batch();
  kernels.kernels = late;
  d.add(std::move(kernels));
  const std::vector<std::string> later = event_lines(d.take(700 * kMs));
  EXPECT_EQ(count_with(later, "\"name\":\"gemm\""), 2u);
  EXPECT_EQ(count_with(later, "\"flops source\":\"counters\""), 1u) << "the replayed kernel";
  EXPECT_EQ(count_with(later, "\"flops source\":\"counters (same work)\""), 1u);
  EXPECT_EQ(count_with(later, "\"flops\":3000000000"), 2u);
  // The replayed kernel sits at its call's start (nothing ran before it).
  EXPECT_EQ(count_with(later, "\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":1000.000"), 1u);
  // Each still has its flow from the call written earlier: the call's start on the CPU
  // thread, the kernel's start on its stream, by the launch's correlation id.
  EXPECT_EQ(count_with(later, "\"ph\":\"s\",\"id\":1,"), 1u);
  EXPECT_EQ(count_with(later, "\"ph\":\"s\",\"id\":2,"), 1u);
  EXPECT_EQ(count_with(later, "\"ph\":\"f\",\"id\":2,"), 1u);
  EXPECT_EQ(count_with(later, "\"tid\":4242,\"ts\":2000.000"), 1u) << "from the call's start";
  EXPECT_EQ(d.held().written_calls, 0u) << "released once their records went out";
  EXPECT_EQ(d.held().open(), 0u);
  const trace::Trace last = d.take(kEndOfRun);
  bool said_late = false;
  for (const auto& [key, value] : last.info) {
    EXPECT_NE(key, "counters without their kernel");
    if (key == "GPU records after their call was written") {
      said_late = true;
      EXPECT_EQ(value.rfind("2 ", 0), 0u) << value;
    }
  }
  EXPECT_TRUE(said_late) << "the metadata says how many came late";
}

// The names demangled in every append reach the end's metadata together.
TEST(StreamingDecoder, MangledNamesOfEveryAppendAreWrittenAtTheEnd) {
  StreamingDecoder d(test_options());
  const char* mangled[] = {"_Z6kernelPfi", "_Z5otheri"};
  for (std::uint32_t i = 0; i < 2; ++i) {
    RecordBatch b = counted_part(10 + i, (1 + 100 * i) * kMs, false);
    b.counters = {};
    b.inferred_launches.clear();
    b.kernels[0].name = mangled[i];
    d.add(std::move(b));
    const trace::Trace t = d.take((60 + 100 * i) * kMs);
    for (const auto& [key, value] : t.extra_top_level) EXPECT_NE(key, "mangledKernelNames");
  }
  const trace::Trace last = d.take(kEndOfRun);
  const auto member = std::find_if(last.extra_top_level.begin(), last.extra_top_level.end(),
                                   [](const auto& kv) { return kv.first == "mangledKernelNames"; });
  ASSERT_NE(member, last.extra_top_level.end());
  const std::string want =
      "{\"kernel(float*, int)\":\"_Z6kernelPfi\",\"other(int)\":\"_Z5otheri\"}";
  EXPECT_EQ(member->second, want);
}

// The file as a capture writes it: appends, then finished in place. After every append
// it reads as a trace of what was written (a kill leaves that); finished, it reads with
// the metadata of the whole run.
void check_streamed_file(const std::string& path) {
  Workload w(5);
  w.run(120);
  // What the capture wrote before it streamed: the whole trace at the end, read back.
  const std::string whole_path = path + ".whole.json";
  ASSERT_TRUE(trace::write_chrome_trace(decode_to_trace(w.whole()), whole_path).ok);
  const trace::ReadResult whole_read = trace::read_chrome_trace_file(whole_path);
  ASSERT_TRUE(whole_read.ok());
  std::filesystem::remove(whole_path);
  const std::vector<std::string> whole = event_lines(whole_read.trace);
  std::vector<TimeNs> ends;
  std::vector<RecordBatch> parts = w.parts(kInterval, &ends);
  StreamingDecoder d(test_options());
  trace::IncrementalTraceFile file(path);
  std::string error;
  std::uint64_t written = 0;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    d.add(std::move(parts[i]));
    const trace::Trace t = d.take(ends[i] - kSettle);
    ASSERT_TRUE(file.append_all(t, &error)) << error;
    written += event_lines(t).size();
    if (file.started() && i % 3 == 0) {
      const trace::ReadResult r = trace::read_chrome_trace_file(path);
      ASSERT_TRUE(r.ok()) << (r.error ? r.error->message() : "");
      EXPECT_EQ(event_lines(r.trace).size(), written) << "after append " << i;
    }
  }
  const trace::Trace last = d.take(kEndOfRun);
  ASSERT_TRUE(file.append_all(last, &error)) << error;
  ASSERT_TRUE(file.finish(last, &error)) << error;
  const trace::ReadResult r = trace::read_chrome_trace_file(path);
  ASSERT_TRUE(r.ok()) << (r.error ? r.error->message() : "");
  EXPECT_TRUE(r.trace.report.warnings.empty()) << r.trace.report.warnings.front();
  const std::vector<std::string> read = event_lines(r.trace);
  EXPECT_TRUE(read == whole) << difference(read, whole);
  EXPECT_EQ(r.trace.report.dropped_records, 7u);
  EXPECT_EQ(r.trace.info, whole_read.trace.info);
  ASSERT_EQ(r.trace.devices.size(), 2u);
  EXPECT_EQ(r.trace.devices[0].name, "NVIDIA H200");
  bool windows = false;
  for (const auto& [key, value] : r.trace.extra_top_level)
    windows = windows || key == "captureWindows";
  EXPECT_TRUE(windows);
  std::filesystem::remove(path);
}

std::string fresh_path(const std::string& name) {
  const auto p = std::filesystem::temp_directory_path() /
                 ("flopline-stream-" + std::to_string(getpid()) + "-" + name);
  std::filesystem::remove(p);
  return p.string();
}

TEST(StreamedTraceFile, FinishedInPlaceItReadsWithTheWholeRunsEventsAndMetadata) {
  check_streamed_file(fresh_path("t.json"));
}

TEST(StreamedTraceFile, AGzipFileIsFinishedInPlaceToo) {
  check_streamed_file(fresh_path("t.json.gz"));
}

}  // namespace
}  // namespace flopline::capture
