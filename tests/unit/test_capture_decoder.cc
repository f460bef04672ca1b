// Decoding synthetic CUPTI-shaped records into the trace model: every record kind with
// its exact name, category, track and args (Kineto's conventions), launch flows (graph
// launches, driver launches, runtime-over-driver), metadata and devices.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "flopline/capture/record_decoder.h"
#include "flopline/trace/chrome_reader.h"
#include "flopline/trace/chrome_writer.h"
#include "flopline/trace/kernel_names.h"

namespace flopline::capture {
namespace {

using trace::Slice;
using trace::Trace;
using trace::TrackKind;

constexpr std::uint32_t kPid = 4242;
constexpr std::uint32_t kMain = 100;
constexpr std::uint32_t kWorker = 101;

// H100 SXM as its driver reports it (read on the machine).
DeviceInfo h100(std::uint32_t ordinal = 0) {
  DeviceInfo d;
  d.ordinal = ordinal;
  d.name = "NVIDIA H100 80GB HBM3";
  d.sm_count = 132;
  d.compute_major = 9;
  d.compute_minor = 0;
  d.clock_khz = 1980000;
  d.memory_clock_khz = 2619000;
  d.memory_bus_width = 5120;
  d.total_memory = 85017493504ull;
  d.max_warps_per_sm = 64;
  d.max_blocks_per_sm = 32;
  d.registers_per_sm = 65536;
  d.registers_per_block = 65536;
  d.shared_memory_per_sm = 233472;
  d.reserved_shared_memory_per_block = 1024;
  return d;
}

ApiRecord api(ApiDomain domain, std::string name, std::uint32_t cbid, TimeNs start, TimeNs end,
              std::uint32_t correlation, std::uint32_t thread = kMain) {
  ApiRecord a;
  a.domain = domain;
  a.name = std::move(name);
  a.cbid = cbid;
  a.start = start;
  a.end = end;
  a.process_id = kPid;
  a.thread_id = thread;
  a.correlation_id = correlation;
  return a;
}

KernelRecord kernel(std::string name, TimeNs start, TimeNs end, std::uint32_t correlation,
                    std::uint32_t stream = 7) {
  KernelRecord k;
  k.name = std::move(name);
  k.start = start;
  k.end = end;
  k.device = 0;
  k.context = 1;
  k.stream = stream;
  k.correlation_id = correlation;
  k.grid_x = 132;
  k.grid_y = 1;
  k.grid_z = 1;
  k.block_x = 256;
  k.block_y = 1;
  k.block_z = 1;
  k.registers_per_thread = 64;
  return k;
}

struct Found {
  const trace::Process* process;
  const trace::Track* track;
  Slice slice;
  std::string_view name;
  std::string_view args;
};

std::vector<Found> with_cat(const Trace& t, std::string_view cat) {
  std::vector<Found> out;
  for (const trace::Track& track : t.tracks) {
    for (const auto& row : track.rows) {
      for (const Slice& s : row) {
        if (t.str(s.cat) != cat) continue;
        out.push_back(Found{&t.processes[track.process], &track, s, t.str(s.name),
                            s.args == trace::kNoArgs ? std::string_view() : t.args.json(s.args)});
      }
    }
  }
  std::sort(out.begin(), out.end(),
            [](const Found& a, const Found& b) { return a.slice.start < b.slice.start; });
  return out;
}

const trace::Slice& slice_at(const Trace& t, const trace::SliceRef& r) {
  return t.tracks[r.track].at(r);
}

RecordBatch basic_batch() {
  RecordBatch b;
  b.process_id = kPid;
  b.process_name = "python3";
  b.devices.push_back(h100());
  b.api_calls.push_back(api(ApiDomain::kRuntime, "cudaLaunchKernel", 211, 1000, 1500, 7));
  b.kernels.push_back(kernel("_Z6kernelPfi", 2000, 3000, 7));
  b.api_calls.push_back(api(ApiDomain::kRuntime, "cudaMemcpyAsync", 41, 2500, 2600, 9));
  MemcpyRecord m;
  m.start = 3000;
  m.end = 4000;
  m.kind = MemcpyKind::kHtoD;
  m.src_kind = MemoryKind::kPageable;
  m.dst_kind = MemoryKind::kDevice;
  m.bytes = 1048576;
  m.device = 0;
  m.context = 1;
  m.stream = 7;
  m.correlation_id = 9;
  b.memcpys.push_back(m);
  b.api_calls.push_back(api(ApiDomain::kRuntime, "cudaMemsetAsync", 51, 3500, 3600, 10));
  MemsetRecord s;
  s.start = 4000;
  s.end = 4100;
  s.bytes = 4096;
  s.memory_kind = MemoryKind::kDevice;
  s.device = 0;
  s.context = 1;
  s.stream = 7;
  s.correlation_id = 10;
  b.memsets.push_back(s);
  return b;
}

TEST(CaptureDecoder, KernelSliceHasKinetoArgsOnItsStream) {
  const Trace t = decode_to_trace(basic_batch());
  const auto kernels = with_cat(t, "kernel");
  ASSERT_EQ(kernels.size(), 1u);
  const Found& k = kernels[0];
  EXPECT_EQ(k.name, "kernel(float*, int)");  // demangled
  EXPECT_EQ(k.slice.start, 2000);
  EXPECT_EQ(k.slice.dur, 1000);
  EXPECT_TRUE(k.process->is_gpu);
  EXPECT_EQ(k.process->pid, 0);
  EXPECT_EQ(k.process->device, 0);
  EXPECT_EQ(k.track->kind, TrackKind::kGpuStream);
  EXPECT_EQ(k.track->tid, 7);
  EXPECT_EQ(t.str(k.track->name), "stream 7");
  // 132 blocks on 132 SMs: 1 block per SM of 8 warps; the calculator allows 4
  // (registers: 64 * 32 = 2048 per warp, 16384 / 2048 = 8 warps per sub-partition,
  // 32 warps = 4 blocks), so min(4, 1) * 8 / 64 = 12.5% -> 13.
  EXPECT_EQ(
      k.args,
      R"({"device":0,"context":1,"stream":7,"correlation":7,"registers per thread":64,)"
      R"("shared memory":0,"blocks per SM":1,"warps per SM":8,"grid":[132,1,1],"block":[256,1,1],)"
      R"("est. achieved occupancy %":13})");
}

TEST(CaptureDecoder, CopiesAndSetsHaveKinetoNamesBytesAndBandwidth) {
  const Trace t = decode_to_trace(basic_batch());
  const auto copies = with_cat(t, "gpu_memcpy");
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].name, "Memcpy HtoD (Pageable -> Device)");
  EXPECT_EQ(copies[0].track->tid, 7);
  EXPECT_EQ(copies[0].args, R"({"device":0,"context":1,"stream":7,"correlation":9,"bytes":1048576,)"
                            R"J("memory bandwidth (GB/s)":1048.576})J");
  EXPECT_EQ(t.metrics_of(copies[0].slice).bytes, 1048576);
  const auto sets = with_cat(t, "gpu_memset");
  ASSERT_EQ(sets.size(), 1u);
  EXPECT_EQ(sets[0].name, "Memset (Device)");
  EXPECT_EQ(
      sets[0].args,
      R"J({"device":0,"context":1,"stream":7,"correlation":10,"bytes":4096,"memory bandwidth (GB/s)":40.96})J");
}

TEST(CaptureDecoder, PeerCopyUsesKinetoMemcpy2ArgsAndZeroDurationHasNoBandwidth) {
  RecordBatch b = basic_batch();
  MemcpyRecord p;
  p.start = p.end = 5000;
  p.kind = MemcpyKind::kPtoP;
  p.src_kind = p.dst_kind = MemoryKind::kDevice;
  p.bytes = 64;
  p.device = 0;
  p.context = 1;
  p.stream = 9;
  p.correlation_id = 12;
  p.src_device = 0;
  p.dst_device = 1;
  p.src_context = 1;
  p.dst_context = 2;
  b.memcpys.push_back(p);
  const Trace t = decode_to_trace(b);
  const auto copies = with_cat(t, "gpu_memcpy");
  ASSERT_EQ(copies.size(), 2u);
  EXPECT_EQ(copies[1].name, "Memcpy PtoP (Device -> Device)");
  EXPECT_EQ(
      copies[1].args,
      R"({"fromDevice":0,"inDevice":0,"toDevice":1,"fromContext":1,"inContext":1,"toContext":2,)"
      R"("stream":9,"correlation":12,"bytes":64})");
}

TEST(CaptureDecoder, ApiCallsSitOnTheirThreadWithCbidAndCorrelation) {
  RecordBatch b = basic_batch();
  b.api_calls.push_back(api(ApiDomain::kDriver, "cuLaunchKernelEx", 652, 1700, 1800, 30, kWorker));
  const Trace t = decode_to_trace(b);
  const auto runtime = with_cat(t, "cuda_runtime");
  ASSERT_EQ(runtime.size(), 3u);
  EXPECT_EQ(runtime[0].name, "cudaLaunchKernel");
  EXPECT_EQ(runtime[0].process->pid, kPid);
  EXPECT_FALSE(runtime[0].process->is_gpu);
  EXPECT_EQ(runtime[0].track->tid, kMain);
  EXPECT_EQ(runtime[0].track->kind, TrackKind::kThread);
  EXPECT_EQ(runtime[0].args, R"({"cbid":211,"correlation":7})");
  const auto driver = with_cat(t, "cuda_driver");
  ASSERT_EQ(driver.size(), 1u);
  EXPECT_EQ(driver[0].name, "cuLaunchKernelEx");
  EXPECT_EQ(driver[0].track->tid, kWorker);
  EXPECT_EQ(driver[0].args, R"({"cbid":652,"correlation":30})");
}

TEST(CaptureDecoder, UntimedApiCallsAreLeftOutAndCounted) {
  RecordBatch b = basic_batch();
  b.api_calls.push_back(api(ApiDomain::kRuntime, "cudaGetDevice", 3, 0, 0, 77));
  DecodeResult r;
  const Trace t = decode_to_trace(b, {}, &r);
  EXPECT_EQ(r.untimed_api_calls, 1u);
  EXPECT_EQ(with_cat(t, "cuda_runtime").size(), 3u);
}

TEST(CaptureDecoder, MetadataNamesProcessesThreadsAndSortsGpusBelow) {
  RecordBatch b = basic_batch();
  b.thread_names.push_back({kMain, "python3"});
  b.thread_names.push_back({kWorker, "pt_autograd_0"});
  NameRecord nvtx_name;
  nvtx_name.object.kind = ObjectKind::kThread;
  nvtx_name.object.thread_id = kWorker;
  nvtx_name.name = "loader";
  b.names.push_back(nvtx_name);
  NameRecord stream_name;
  stream_name.object.kind = ObjectKind::kStream;
  stream_name.object.device = 0;
  stream_name.object.stream = 7;
  stream_name.name = "compute";
  b.names.push_back(stream_name);
  b.api_calls.push_back(api(ApiDomain::kRuntime, "cudaFree", 5, 1700, 1800, 31, kWorker));
  const Trace t = decode_to_trace(b);
  ASSERT_EQ(t.processes.size(), 2u);
  const trace::Process* cpu = nullptr;
  const trace::Process* gpu = nullptr;
  for (const auto& p : t.processes) (p.is_gpu ? gpu : cpu) = &p;
  ASSERT_TRUE(cpu && gpu);
  EXPECT_EQ(t.str(cpu->name), "python3");
  EXPECT_EQ(t.str(cpu->labels), "CPU");
  EXPECT_EQ(cpu->sort_index, kPid);
  EXPECT_EQ(t.str(gpu->name), "GPU 0: NVIDIA H100 80GB HBM3");
  EXPECT_EQ(t.str(gpu->labels), "GPU 0");
  EXPECT_EQ(gpu->sort_index, 5000000);
  EXPECT_GT(gpu->sort_index, cpu->sort_index);
  for (const auto& track : t.tracks) {
    if (track.tid == kMain) {
      EXPECT_EQ(t.str(track.name), "python3");
    } else if (track.tid == kWorker) {
      EXPECT_EQ(t.str(track.name), "loader");  // NVTX name wins
    } else {
      EXPECT_EQ(track.kind, TrackKind::kGpuStream);
      EXPECT_EQ(t.str(track.name), "stream 7 (compute)");
    }
  }
  ASSERT_EQ(t.devices.size(), 1u);
  EXPECT_EQ(t.devices[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(t.devices[0].num_sms, 132);
  EXPECT_EQ(t.devices[0].peak_source, "table");
}

TEST(CaptureDecoder, SmallPidDoesNotCollideWithAGpuPid) {
  RecordBatch b = basic_batch();
  b.process_id = 0;  // device 0 exists
  for (auto& a : b.api_calls) a.process_id = 0;
  DecodeResult r;
  const Trace t = decode_to_trace(b, {}, &r);
  EXPECT_EQ(r.pids.cpu, 0);
  EXPECT_EQ(r.pids.gpu(0), 5000000);
  ASSERT_EQ(t.processes.size(), 2u);
  const auto kernels = with_cat(t, "kernel");
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].process->pid, 5000000);
  EXPECT_EQ(kernels[0].process->device, 0);
  EXPECT_EQ(with_cat(t, "cuda_runtime")[0].process->pid, 0);
}

TEST(CaptureDecoder, LaunchFlowGoesFromTheCallToTheKernel) {
  DecodeResult r;
  const Trace t = decode_to_trace(basic_batch(), {}, &r);
  EXPECT_EQ(r.flows, 3u);  // kernel, copy, set
  ASSERT_EQ(t.flows.size(), 3u);
  for (const trace::Flow& f : t.flows) {
    EXPECT_EQ(t.str(f.name), "ac2g");
    EXPECT_EQ(t.str(f.cat), "ac2g");
    EXPECT_TRUE(f.joined());
    EXPECT_TRUE(f.from.enclosing);
    EXPECT_TRUE(f.to.enclosing);
  }
  const trace::Flow& f = t.flows[0];
  EXPECT_EQ(f.id, 7u);
  EXPECT_EQ(t.str(slice_at(t, f.from.slice).name), "cudaLaunchKernel");
  EXPECT_EQ(t.str(slice_at(t, f.to.slice).name), "kernel(float*, int)");
}

TEST(CaptureDecoder, GraphLaunchGivesOneFlowPerKernel) {
  RecordBatch b;
  b.process_id = kPid;
  b.devices.push_back(h100());
  b.api_calls.push_back(api(ApiDomain::kRuntime, "cudaGraphLaunch", 311, 7000, 7100, 20));
  b.kernels.push_back(kernel("graph_a", 8000, 8100, 20));
  b.kernels.push_back(kernel("graph_b", 8100, 8200, 20));
  b.kernels.push_back(kernel("graph_c", 8200, 8300, 20, 8));
  b.kernels[0].graph_id = 3;
  b.kernels[0].graph_node_id = 11;
  DecodeResult r;
  const Trace t = decode_to_trace(b, {}, &r);
  ASSERT_EQ(t.flows.size(), 3u);
  std::vector<std::string> targets;
  for (const trace::Flow& f : t.flows) {
    EXPECT_EQ(f.id, 20u);
    ASSERT_TRUE(f.joined());
    EXPECT_EQ(t.str(slice_at(t, f.from.slice).name), "cudaGraphLaunch");
    targets.emplace_back(t.str(slice_at(t, f.to.slice).name));
  }
  EXPECT_EQ(targets, (std::vector<std::string>{"graph_a", "graph_b", "graph_c"}));
  const auto kernels = with_cat(t, "kernel");
  EXPECT_NE(kernels[0].args.find(R"("graph id":3,"graph node id":11)"), std::string_view::npos);
  EXPECT_EQ(kernels[2].track->tid, 8);
}

TEST(CaptureDecoder, RuntimeCallEnclosingADriverCallIsTheFlowSource) {
  RecordBatch b;
  b.process_id = kPid;
  b.api_calls.push_back(api(ApiDomain::kRuntime, "cudaLaunchKernel", 211, 9000, 9500, 40));
  b.api_calls.push_back(api(ApiDomain::kDriver, "cuLaunchKernel", 307, 9100, 9400, 41));
  b.kernels.push_back(kernel("k", 9600, 9700, 41));  // carries the driver call's id
  // A driver launch with no runtime call around it (Triton, cuBLAS) is its own source.
  b.api_calls.push_back(api(ApiDomain::kDriver, "cuLaunchKernelEx", 652, 9800, 9850, 42));
  b.kernels.push_back(kernel("triton_mm", 9900, 9950, 42));
  const Trace t = decode_to_trace(b);
  ASSERT_EQ(t.flows.size(), 2u);
  EXPECT_EQ(t.flows[0].id, 41u);
  ASSERT_TRUE(t.flows[0].joined());
  EXPECT_EQ(t.str(slice_at(t, t.flows[0].from.slice).name), "cudaLaunchKernel");
  EXPECT_EQ(t.flows[0].from.ts, 9000);
  ASSERT_TRUE(t.flows[1].joined());
  EXPECT_EQ(t.str(slice_at(t, t.flows[1].from.slice).name), "cuLaunchKernelEx");
  EXPECT_EQ(t.str(slice_at(t, t.flows[1].to.slice).name), "triton_mm");
}

TEST(CaptureDecoder, KernelWithoutItsCallHasNoFlow) {
  RecordBatch b;
  b.process_id = kPid;
  b.kernels.push_back(kernel("orphan", 100, 200, 99));
  DecodeResult r;
  const Trace t = decode_to_trace(b, {}, &r);
  EXPECT_TRUE(t.flows.empty());
  EXPECT_EQ(r.gpu_records_without_launch, 1u);
  const auto kernels = with_cat(t, "kernel");
  ASSERT_EQ(kernels.size(), 1u);
  // No device info: no occupancy args.
  EXPECT_EQ(kernels[0].args.find("occupancy"), std::string_view::npos);
  EXPECT_EQ(kernels[0].args.find("blocks per SM"), std::string_view::npos);
}

TEST(CaptureDecoder, SyncsGoOnTheWaitingThreadOrTheirStream) {
  RecordBatch b = basic_batch();
  b.api_calls.push_back(
      api(ApiDomain::kRuntime, "cudaStreamSynchronize", 131, 5000, 6000, 11, kWorker));
  SyncRecord s;
  s.type = SyncType::kStreamSynchronize;
  s.start = 5010;
  s.end = 5990;
  s.correlation_id = 11;
  s.context = 1;
  s.stream = 7;
  b.syncs.push_back(s);
  SyncRecord e;
  e.type = SyncType::kEventSynchronize;
  e.start = 6100;
  e.end = 6200;
  e.correlation_id = 12;  // its API call was not captured
  e.context = 1;
  e.stream = kNoId;
  e.cuda_event_id = 5;
  b.syncs.push_back(e);
  DecodeResult r;
  const Trace t = decode_to_trace(b, {}, &r);
  const auto syncs = with_cat(t, "cuda_sync");
  ASSERT_EQ(syncs.size(), 2u);
  EXPECT_EQ(syncs[0].name, "Stream Sync");
  EXPECT_EQ(syncs[0].process->pid, kPid);
  EXPECT_EQ(syncs[0].track->tid, kWorker);
  EXPECT_EQ(
      syncs[0].args,
      R"({"cuda_sync_kind":"Stream Sync","stream":7,"correlation":11,"device":0,"context":1})");
  EXPECT_EQ(syncs[1].name, "Event Sync");
  EXPECT_TRUE(syncs[1].process->is_gpu);
  EXPECT_EQ(syncs[1].track->tid, -1);
  EXPECT_EQ(
      syncs[1].args,
      R"({"cuda_sync_kind":"Event Sync","wait_on_cuda_event_id":5,"stream":-1,"correlation":12,)"
      R"("device":0,"context":1})");
  EXPECT_EQ(r.syncs_without_call, 1u);
}

TEST(CaptureDecoder, OverheadOnItsThreadAndDroppedRecordsReported) {
  RecordBatch b = basic_batch();
  OverheadRecord o;
  o.kind = OverheadKind::kCuptiBufferFlush;
  o.object.kind = ObjectKind::kThread;
  o.object.thread_id = kWorker;
  o.start = 100;
  o.end = 200;
  b.overheads.push_back(o);
  OverheadRecord d = o;
  d.object.kind = ObjectKind::kDevice;
  b.overheads.push_back(d);
  b.dropped_records = 17;
  DecodeResult r;
  const Trace t = decode_to_trace(b, {}, &r);
  const auto over = with_cat(t, "overhead");
  ASSERT_EQ(over.size(), 1u);
  EXPECT_EQ(over[0].name, "Buffer Flush");
  EXPECT_EQ(over[0].track->tid, kWorker);
  EXPECT_EQ(r.skipped_overheads, 1u);
  EXPECT_EQ(t.report.dropped_records, 17u);

  DecodeOptions no_overhead;
  no_overhead.overhead = false;
  EXPECT_TRUE(with_cat(decode_to_trace(b, no_overhead), "overhead").empty());
}

TEST(CaptureDecoder, ClusterCooperativeAndMangledNamesOptions) {
  RecordBatch b = basic_batch();
  b.kernels[0].launch_type = LaunchType::kCooperativeSingleDevice;
  b.kernels[0].cluster_x = 2;
  b.kernels[0].cluster_y = 1;
  b.kernels[0].cluster_z = 1;
  b.kernels[0].static_shared_memory = 1000;
  b.kernels[0].dynamic_shared_memory = 24;
  DecodeOptions raw;
  raw.demangle = false;
  const Trace t = decode_to_trace(b, raw);
  const auto k = with_cat(t, "kernel");
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].name, "_Z6kernelPfi");
  EXPECT_NE(k[0].args.find(R"("shared memory":1024)"), std::string_view::npos);
  EXPECT_NE(k[0].args.find(R"("launch type":"cooperative","cluster":[2,1,1])"),
            std::string_view::npos);
}

// The names the decoder demangled go into the trace once, as demangled -> mangled, and
// `flopline stats --names mangled` (use_kernel_mangled_names) reads them back, through a
// written and re-read file; a trace without them is left alone.
TEST(CaptureDecoder, DemangledKernelNamesKeepTheirMangledNames) {
  RecordBatch b = basic_batch();
  b.api_calls.push_back(api(ApiDomain::kRuntime, "cudaLaunchKernel", 211, 5000, 5100, 11));
  b.kernels.push_back(kernel("triton_poi_fused_add_0", 6000, 6100, 11));  // not mangled
  const Trace t = decode_to_trace(b);
  const auto member = std::find_if(t.extra_top_level.begin(), t.extra_top_level.end(),
                                   [](const auto& kv) { return kv.first == "mangledKernelNames"; });
  ASSERT_NE(member, t.extra_top_level.end());
  const std::string want = "{\"kernel(float*, int)\":\"_Z6kernelPfi\"}";
  EXPECT_EQ(member->second, want);

  const std::string path = ::testing::TempDir() + "flopline_mangled_names.json";
  ASSERT_TRUE(write_chrome_trace(t, path).ok);
  trace::ReadResult r = trace::read_chrome_trace_file(path);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(trace::use_kernel_mangled_names(r.trace));
  std::vector<std::string> names;
  for (const Found& k : with_cat(r.trace, "kernel")) names.emplace_back(k.name);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"_Z6kernelPfi", "triton_poi_fused_add_0"}));

  DecodeOptions raw;
  raw.demangle = false;  // nothing demangled: no member
  Trace plain = decode_to_trace(b, raw);
  EXPECT_FALSE(trace::use_kernel_mangled_names(plain));
}

TEST(CaptureDecoder, DecodeAddsToAnExistingBuilderWithoutFinalizing) {
  Trace t;
  trace::TraceBuilder builder(t);
  decode(basic_batch(), builder);
  EXPECT_EQ(t.slice_count(), 0u);  // still pending in the builder
  builder.finalize();
  EXPECT_EQ(t.slice_count(), 6u);  // 3 calls, kernel, copy, set
}

}  // namespace
}  // namespace flopline::capture
