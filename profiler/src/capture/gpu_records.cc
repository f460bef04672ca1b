// Kernels, copies and sets as slices on their stream, with Kineto's args, and the
// launch -> GPU flows; conventions in record_decoder.h.
#include <cstdio>
#include <string>
#include <unordered_map>

#include "capture/decode_context.h"
#include "flopline/capture/occupancy.h"
#include "flopline/trace/counted_basis.h"
#include "flopline/trace/trace_args.h"

namespace flopline::capture::detail {
namespace {

using trace::ArgsBuilder;
using trace::Slice;
using trace::StringId;

struct Categories {
  StringId kernel, memcpy, memset, flow;
};

// bytes / ns = GB/s (1e9 bytes per second); none for an instantaneous record.
void add_bandwidth(ArgsBuilder& a, std::uint64_t bytes, TimeNs start, TimeNs end) {
  if (end > start)
    a.add("memory bandwidth (GB/s)", static_cast<double>(bytes) / static_cast<double>(end - start));
}

void add_graph(ArgsBuilder& a, std::uint32_t graph_id, std::uint64_t graph_node_id) {
  if (graph_id == 0 && graph_node_id == 0) return;
  a.add_uint("graph id", graph_id);
  a.add_uint("graph node id", graph_node_id);
}

void add_pairs(ArgsBuilder& a, std::string_view key,
               const std::vector<std::pair<std::string, double>>& v) {
  ArgsBuilder inner;
  for (const auto& [k, x] : v) inner.add(k, x);
  a.add_raw(key, inner.finish());
}

// The counted work of a kernel (docs/COUNTERS.md has every arg).
void add_counter_args(ArgsBuilder& a, const CountedWork& w, const KernelCounts& how) {
  const bool measured = how.measured;
  a.add("flops", w.flops);
  if (!w.flops_by_precision.empty()) add_pairs(a, "flops by precision", w.flops_by_precision);
  if (!w.tensor_flops_by_path.empty()) add_pairs(a, "tensor flops by path", w.tensor_flops_by_path);
  if (w.sparse_ops > 0) a.add("sparse tensor ops", w.sparse_ops);
  if (w.int_ops > 0) a.add("integer tensor ops", w.int_ops);
  if (const auto bytes = w.dram_bytes()) {
    a.add("dram bytes", *bytes);
    if (w.dram_read_bytes) a.add("dram bytes read", *w.dram_read_bytes);
    if (w.dram_write_bytes) a.add("dram bytes written", *w.dram_write_bytes);
  }
  switch (how.basis) {
    case trace::CountedBasis::kMeasured:
      a.add(trace::kArgFlopsSource, trace::kSourceMeasured);
      break;
    case trace::CountedBasis::kSameWork:
      a.add(trace::kArgFlopsSource, trace::kSourceSameWork);
      break;
    default: {
      a.add(trace::kArgFlopsSource, trace::kSourceEstimated);
      std::string note = to_string(how.note);
      if (how.note == CountNote::kUnlikeItsWork && how.time_ratio > 0) {
        char ratio[64];
        std::snprintf(ratio, sizeof ratio, " (%.2fx their median)", how.time_ratio);
        note += ratio;
      }
      if (how.note == CountNote::kIncomplete && !how.incomplete.empty())
        note += " (" + std::string(how.incomplete) + ")";
      if (!note.empty()) a.add(trace::kCountersNoteArg, note);
      break;
    }
  }
  // A measured launch ran under kernel replay: its time is not a normal run's (it is
  // placed at its launch call, with the GPU time its counters measured).
  if (measured) a.add_bool("counters replayed", true);
}

// An NCCL kernel's call: collective, size and nccl-tests' bandwidths over its GPU time.
void add_collective_args(ArgsBuilder& a, const KernelCollective& c,
                         std::optional<std::uint32_t> world_size, TimeNs duration) {
  a.add(trace::kCollectiveArg, trace::to_string(c.collective));
  a.add_uint(trace::kCollectiveMessageBytesArg, c.message_bytes);
  if (c.calls > 1) a.add_uint(trace::kCollectiveCallsArg, c.calls);
  if (c.communicator != 0) {
    char hex[24];
    std::snprintf(hex, sizeof hex, "0x%016llx", static_cast<unsigned long long>(c.communicator));
    a.add(trace::kCollectiveCommunicatorArg, hex);
  }
  if (world_size) {
    a.add_uint(trace::kCollectiveRanksArg, *world_size);
    a.add(trace::kCollectiveRanksSourceArg, "WORLD_SIZE");
  }
  const trace::CollectiveBandwidth bw =
      trace::nccl_tests_bandwidth(c.collective, c.message_bytes, world_size, duration);
  if (bw.size_bytes) a.add(trace::kCollectiveSizeArg, *bw.size_bytes);
  if (bw.algbw_gbps) a.add(trace::kAlgbwArg, *bw.algbw_gbps);
  if (bw.busbw_gbps) a.add(trace::kBusbwArg, *bw.busbw_gbps);
}

// The precision a kernel's % of peak divides by: what its counters say, else what the
// innermost operator owning it declared.
std::string kernel_precision(const DecodeContext& ctx, std::size_t work_index,
                             const CountedWork* counted) {
  if (counted != nullptr && !counted->precision.empty()) return counted->precision;
  if (ctx.attribution == nullptr) return {};
  const std::uint32_t r = ctx.attribution->precision_from[work_index];
  return r == kNoId ? std::string() : ctx.attribution_precisions[r];
}

trace::ArgsId kernel_args(DecodeContext& ctx, ArgsBuilder& a, const KernelRecord& k,
                          std::size_t work_index, std::size_t kernel_index) {
  a.clear();
  a.add_uint("device", k.device);
  a.add_uint("context", k.context);
  a.add_uint("stream", k.stream);
  a.add_uint("correlation", k.correlation_id);
  a.add_uint("registers per thread", k.registers_per_thread);
  a.add("shared memory",
        static_cast<std::int64_t>(k.static_shared_memory) + k.dynamic_shared_memory);
  const DeviceInfo* device = ctx.device(k.device);
  const auto occ = device != nullptr ? kernel_occupancy_args(*device, k) : std::nullopt;
  if (occ) {
    a.add("blocks per SM", occ->blocks_per_sm);
    a.add("warps per SM", occ->warps_per_sm);
  }
  a.add_ints("grid", {k.grid_x, k.grid_y, k.grid_z});
  a.add_ints("block", {k.block_x, k.block_y, k.block_z});
  if (occ && occ->est_achieved_occupancy_pct) {
    a.add("est. achieved occupancy %", static_cast<std::int64_t>(*occ->est_achieved_occupancy_pct));
  }
  if (k.launch_type != LaunchType::kRegular) a.add("launch type", to_string(k.launch_type));
  if (k.is_cluster_launch()) {
    a.add_ints("cluster",
               {static_cast<std::int64_t>(k.cluster_x), static_cast<std::int64_t>(k.cluster_y),
                static_cast<std::int64_t>(k.cluster_z)});
  }
  add_graph(a, k.graph_id, k.graph_node_id);
  const CountedWork* counted = ctx.counted_of_kernel(kernel_index);
  if (counted != nullptr) {
    add_counter_args(a, *counted, ctx.kernel_counts[kernel_index]);
  } else if (kernel_index < ctx.kernel_counts.size() &&
             ctx.kernel_counts[kernel_index].basis == trace::CountedBasis::kNotCounted) {
    std::string source(trace::kSourceNotCountedPrefix);
    source += ctx.kernel_counts[kernel_index].not_counted;
    a.add(trace::kArgFlopsSource, source);
  }
  const std::string precision = kernel_precision(ctx, work_index, counted);
  if (!precision.empty()) a.add(trace::kArgPrecision, precision);
  if (kernel_index < ctx.collectives.size() && ctx.collectives[kernel_index])
    add_collective_args(a, *ctx.collectives[kernel_index], ctx.batch.world_size, k.end - k.start);
  return ctx.trace.args.add_json(a.finish());
}

trace::ArgsId memcpy_args(DecodeContext& ctx, ArgsBuilder& a, const MemcpyRecord& m) {
  a.clear();
  if (m.is_peer()) {
    // Kineto's names for CUpti_ActivityMemcpy2.
    a.add_uint("fromDevice", m.src_device);
    a.add_uint("inDevice", m.device);
    a.add_uint("toDevice", m.dst_device);
    a.add_uint("fromContext", m.src_context);
    a.add_uint("inContext", m.context);
    a.add_uint("toContext", m.dst_context);
  } else {
    a.add_uint("device", m.device);
    a.add_uint("context", m.context);
  }
  a.add_uint("stream", m.stream);
  a.add_uint("correlation", m.correlation_id);
  a.add_uint("bytes", m.bytes);
  add_bandwidth(a, m.bytes, m.start, m.end);
  add_graph(a, m.graph_id, m.graph_node_id);
  return ctx.trace.args.add_json(a.finish());
}

trace::ArgsId memset_args(DecodeContext& ctx, ArgsBuilder& a, const MemsetRecord& m) {
  a.clear();
  a.add_uint("device", m.device);
  a.add_uint("context", m.context);
  a.add_uint("stream", m.stream);
  a.add_uint("correlation", m.correlation_id);
  a.add_uint("bytes", m.bytes);
  add_bandwidth(a, m.bytes, m.start, m.end);
  add_graph(a, m.graph_id, m.graph_node_id);
  return ctx.trace.args.add_json(a.finish());
}

std::string memcpy_name(const MemcpyRecord& m) {
  std::string n = "Memcpy ";
  n += to_string(m.kind);
  n += " (";
  n += to_string(m.src_kind);
  n += " -> ";
  n += to_string(m.dst_kind);
  n += ')';
  return n;
}

// Metrics of one GPU record: its operator's counts when that operator owns it alone,
// and the bytes a copy or set moves.
std::uint32_t metrics_of(DecodeContext& ctx, std::size_t work_index,
                         std::optional<std::uint64_t> moved) {
  std::uint32_t from_range = trace::kNone;
  if (ctx.attribution != nullptr) {
    const std::uint32_t r = ctx.attribution->counts_from[work_index];
    if (r != kNoId) from_range = ctx.range_metrics[r];
  }
  if (!moved) return from_range;
  trace::SliceMetrics m =
      from_range != trace::kNone ? ctx.trace.metrics[from_range] : trace::SliceMetrics{};
  m.bytes = static_cast<double>(*moved);
  return ctx.builder.add_metrics(m);
}

}  // namespace

void match_collectives(DecodeContext& ctx) {
  std::vector<NcclKernelLaunch> launches;
  std::vector<std::uint32_t> kernel_of;  // per launch: its batch kernel
  if (!ctx.batch.nccl_calls.empty()) {
    for (const GpuWork& g : ctx.launches.gpu_work()) {
      if (g.kind != GpuWorkKind::kKernel || g.launch == kNoId) continue;
      const KernelRecord& k = ctx.batch.kernels[g.index];
      if (!is_nccl_kernel(k.name)) continue;
      const ApiRecord& call = ctx.batch.api_calls[g.launch];
      launches.push_back(NcclKernelLaunch{call.thread_id, call.start, k.name});
      kernel_of.push_back(g.index);
    }
  }
  ctx.collectives.assign(ctx.batch.kernels.size(), std::nullopt);
  const auto matched = match_nccl_calls(ctx.batch.nccl_calls, launches);
  for (std::size_t i = 0; i < matched.size(); ++i) ctx.collectives[kernel_of[i]] = matched[i];
}

std::uint32_t DecodeContext::gpu_process(std::uint32_t device_ordinal) {
  const std::uint32_t process = builder.process(pids.gpu(device_ordinal));
  if (gpu_devices_seen.insert(device_ordinal).second) {
    // Set here too: the builder only infers the device for pids below 1024.
    trace.processes[process].is_gpu = true;
    trace.processes[process].device = static_cast<std::int32_t>(device_ordinal);
  }
  return process;
}

std::uint32_t DecodeContext::gpu_track(std::uint32_t device_ordinal, std::int64_t stream) {
  return builder.track(gpu_process(device_ordinal), stream, trace::TrackKind::kGpuStream);
}

void emit_gpu_records(DecodeContext& ctx, DecodeResult& result) {
  const Categories cat{ctx.trace.strings.intern("kernel"), ctx.trace.strings.intern("gpu_memcpy"),
                       ctx.trace.strings.intern("gpu_memset"), ctx.trace.strings.intern("ac2g")};
  std::unordered_map<std::string, StringId> kernel_names;  // raw name -> shown name
  ArgsBuilder a;
  const auto& work = ctx.launches.gpu_work();
  for (std::size_t w = 0; w < work.size(); ++w) {
    const GpuWork& g = work[w];
    const std::uint32_t track = ctx.gpu_track(g.device, g.stream);
    Slice s{g.start, g.end - g.start, 0, 0, trace::kNoArgs, trace::kNone};
    switch (g.kind) {
      case GpuWorkKind::kKernel: {
        const KernelRecord& k = ctx.batch.kernels[g.index];
        auto [it, added] = kernel_names.try_emplace(k.name, 0);
        if (added) {
          std::string shown = ctx.options.demangle ? demangle(k.name) : k.name;
          if (shown != k.name) result.mangled_names.emplace(shown, k.name);
          it->second = ctx.trace.strings.intern(shown);
        }
        s.name = it->second;
        s.cat = cat.kernel;
        s.args = kernel_args(ctx, a, k, w, g.index);
        if (const CountedWork* c = ctx.counted_of_kernel(g.index)) {
          s.metrics = ctx.builder.add_metrics({c->flops, c->dram_bytes().value_or(-1)});
        } else {
          s.metrics = metrics_of(ctx, w, std::nullopt);
        }
        break;
      }
      case GpuWorkKind::kMemcpy: {
        const MemcpyRecord& m = ctx.batch.memcpys[g.index];
        s.name = ctx.trace.strings.intern(memcpy_name(m));
        s.cat = cat.memcpy;
        s.args = memcpy_args(ctx, a, m);
        s.metrics = metrics_of(ctx, w, m.bytes);
        break;
      }
      case GpuWorkKind::kMemset: {
        const MemsetRecord& m = ctx.batch.memsets[g.index];
        std::string name = "Memset (";
        name += to_string(m.memory_kind);
        name += ')';
        s.name = ctx.trace.strings.intern(name);
        s.cat = cat.memset;
        s.args = memset_args(ctx, a, m);
        s.metrics = metrics_of(ctx, w, m.bytes);
        break;
      }
    }
    if (s.dur < 0) s.dur = 0;
    ctx.builder.add_slice(track, s);

    std::uint32_t call_thread = 0;
    TimeNs call_start = 0;
    if (g.launch != kNoId) {
      call_thread = ctx.batch.api_calls[g.launch].thread_id;
      call_start = ctx.batch.api_calls[g.launch].start;
    } else if (const WrittenCall* written = ctx.written_call(g.correlation_id)) {
      // Its call went out in an earlier append, before this record came.
      call_thread = written->thread_id;
      call_start = written->start;
    } else {
      ++result.gpu_records_without_launch;
      continue;
    }
    trace::Flow f;
    f.id = g.correlation_id;
    f.name = cat.flow;
    f.cat = cat.flow;
    f.from.track = ctx.cpu_track(call_thread);
    f.from.ts = call_start;
    f.from.enclosing = true;
    f.to.track = track;
    f.to.ts = g.start;
    f.to.enclosing = true;
    ctx.builder.add_flow(f);
    ++result.flows;
  }
}

}  // namespace flopline::capture::detail
