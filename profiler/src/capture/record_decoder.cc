// decode(): records -> trace model. This file holds the order of the work, the CPU
// side (API calls, syncs, overhead) and the metadata; gpu_records.cc the GPU side.
#include "flopline/capture/record_decoder.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>

#include "capture/decode_context.h"
#include "flopline/capture/peaks.h"
#include "flopline/capture/profiler_steps.h"

namespace flopline::capture {
namespace {

using detail::DecodeContext;
using trace::ArgsBuilder;
using trace::Slice;

// Kineto sorts GPU processes after every CPU pid with this offset (kExceedMaxPid).
constexpr std::int64_t kGpuSortOffset = 5000000;

TimeNs capture_end(const RecordBatch& b) {
  TimeNs end = 0;
  for (const auto& r : b.api_calls) end = std::max(end, r.end);
  for (const auto& r : b.kernels) end = std::max(end, r.end);
  for (const auto& r : b.memcpys) end = std::max(end, r.end);
  for (const auto& r : b.memsets) end = std::max(end, r.end);
  for (const auto& r : b.syncs) end = std::max(end, r.end);
  for (const auto& r : b.markers) end = std::max(end, r.timestamp);
  return end;
}

TracePids choose_pids(const RecordBatch& b) {
  TracePids p;
  p.cpu = b.process_id;
  std::int64_t max_ordinal = -1;
  for (const auto& d : b.devices) max_ordinal = std::max<std::int64_t>(max_ordinal, d.ordinal);
  for (const auto& k : b.kernels) max_ordinal = std::max<std::int64_t>(max_ordinal, k.device);
  for (const auto& m : b.memcpys) max_ordinal = std::max<std::int64_t>(max_ordinal, m.device);
  for (const auto& m : b.memsets) max_ordinal = std::max<std::int64_t>(max_ordinal, m.device);
  // A process whose pid is a device ordinal (pid 1 in a container) must not share a pid
  // with that GPU.
  if (p.cpu <= max_ordinal) p.gpu_base = kGpuSortOffset;
  return p;
}

// A streaming append: the work earlier appends gave each range joins its summary, and
// the ranges that wait for a later append are marked (per range).
std::vector<bool> merge_stream_carry(const StreamDecodeContext& stream,
                                     const PairedMarkers& markers, Attribution& attribution) {
  std::vector<bool> held(markers.ranges.size(), false);
  std::vector<bool> carried(markers.ranges.size(), false);
  for (std::size_t i = 0; i < markers.ranges.size(); ++i) {
    const RangeKey key{markers.ranges[i].id, markers.ranges[i].start};
    held[i] = stream.held_ranges.count(key) > 0;
    const auto it = stream.carry.find(key);
    if (it == stream.carry.end() || i >= attribution.operators.size()) continue;
    merge_earlier_work(attribution.operators[i], it->second);
    carried[i] = it->second.kernels + it->second.memcpys + it->second.memsets > 0;
  }
  // A record carries its operator's counts only when that operator owns it alone: not
  // when earlier appends gave it work, nor when it is held (its work is released before
  // it is final only once it owns two records, streaming_decoder.h).
  for (std::uint32_t& r : attribution.counts_from) {
    if (r != kNoId && (carried[r] || held[r])) r = kNoId;
  }
  return held;
}

void emit_api_calls(DecodeContext& ctx, DecodeResult& result) {
  const auto cat_runtime = ctx.trace.strings.intern("cuda_runtime");
  const auto cat_driver = ctx.trace.strings.intern("cuda_driver");
  ArgsBuilder a;
  for (const ApiRecord& call : ctx.batch.api_calls) {
    if (!LaunchIndex::timed(call)) {
      ++result.untimed_api_calls;
      continue;
    }
    a.clear();
    a.add_uint("cbid", call.cbid);
    a.add_uint("correlation", call.correlation_id);
    const Slice s{call.start,
                  std::max<TimeNs>(0, call.end - call.start),
                  ctx.trace.strings.intern(call.name),
                  call.domain == ApiDomain::kRuntime ? cat_runtime : cat_driver,
                  ctx.trace.args.add_json(a.finish()),
                  trace::kNone};
    ctx.builder.add_slice(ctx.cpu_track(call.thread_id), s);
  }
}

void emit_syncs(DecodeContext& ctx, DecodeResult& result) {
  const auto cat = ctx.trace.strings.intern("cuda_sync");
  ArgsBuilder a;
  for (const SyncRecord& sync : ctx.batch.syncs) {
    const auto dev = ctx.device_of_context.find(sync.context);
    const std::uint32_t call = ctx.launches.api_with_correlation(sync.correlation_id);
    // CUPTI writes 0xffffffff for "no stream"; Kineto shows it as -1.
    const std::int64_t stream = static_cast<std::int32_t>(sync.stream);
    std::uint32_t track;
    if (call != kNoId) {
      track = ctx.cpu_track(ctx.batch.api_calls[call].thread_id);
    } else if (dev != ctx.device_of_context.end()) {
      track = ctx.gpu_track(dev->second, stream);
      ++result.syncs_without_call;
    } else {
      ++result.syncs_without_call;
      continue;  // neither a thread nor a device to put it on
    }
    a.clear();
    a.add("cuda_sync_kind", to_string(sync.type));
    if (sync.cuda_event_id != kNoId &&
        (sync.type == SyncType::kEventSynchronize || sync.type == SyncType::kStreamWaitEvent)) {
      a.add_uint("wait_on_cuda_event_id", sync.cuda_event_id);
    }
    a.add("stream", stream);
    a.add_uint("correlation", sync.correlation_id);
    if (dev != ctx.device_of_context.end()) a.add_uint("device", dev->second);
    a.add_uint("context", sync.context);
    const Slice s{sync.start,
                  std::max<TimeNs>(0, sync.end - sync.start),
                  ctx.trace.strings.intern(to_string(sync.type)),
                  cat,
                  ctx.trace.args.add_json(a.finish()),
                  trace::kNone};
    ctx.builder.add_slice(track, s);
  }
}

void emit_overheads(DecodeContext& ctx, DecodeResult& result) {
  const auto cat = ctx.trace.strings.intern("overhead");
  for (const OverheadRecord& o : ctx.batch.overheads) {
    std::uint32_t thread;
    if (o.object.kind == ObjectKind::kThread) {
      thread = o.object.thread_id;
    } else if (o.object.kind == ObjectKind::kProcess) {
      thread = o.object.process_id;  // the main thread's tid is the pid
    } else {
      ++result.skipped_overheads;
      continue;
    }
    const Slice s{o.start,
                  std::max<TimeNs>(0, o.end - o.start),
                  ctx.trace.strings.intern(to_string(o.kind)),
                  cat,
                  trace::kNoArgs,
                  trace::kNone};
    ctx.builder.add_slice(ctx.cpu_track(thread), s);
  }
}

// Process and thread names, labels and sort indices; device properties.
void emit_metadata(DecodeContext& ctx) {
  trace::Trace& t = ctx.trace;
  // Kineto's distributedInfo, by which Holistic Trace Analysis tells ranks apart (an
  // integer rank); the backend only when NCCL ran here (the writer spaces it as Kineto
  // does, which HTA needs).
  if (ctx.batch.rank) {
    std::string info = "{";
    const bool nccl = (ctx.options.stream != nullptr && ctx.options.stream->nccl_seen) ||
                      !ctx.batch.nccl_calls.empty() ||
                      std::any_of(ctx.batch.kernels.begin(), ctx.batch.kernels.end(),
                                  [](const KernelRecord& k) { return is_nccl_kernel(k.name); });
    if (nccl) info += R"("backend":"nccl",)";
    info += R"("rank":)" + std::to_string(*ctx.batch.rank);
    if (ctx.batch.world_size) info += R"(,"world_size":)" + std::to_string(*ctx.batch.world_size);
    info += "}";
    const bool present = std::any_of(t.extra_top_level.begin(), t.extra_top_level.end(),
                                     [](const auto& kv) { return kv.first == "distributedInfo"; });
    if (!present) t.extra_top_level.emplace_back("distributedInfo", std::move(info));
  }
  trace::Process& cpu = t.processes[ctx.cpu_process];
  if (!ctx.batch.process_name.empty()) cpu.name = t.strings.intern(ctx.batch.process_name);
  cpu.labels = t.strings.intern("CPU");
  cpu.sort_index = ctx.pids.cpu;

  std::vector<std::uint32_t> ordinals(ctx.gpu_devices_seen.begin(), ctx.gpu_devices_seen.end());
  std::sort(ordinals.begin(), ordinals.end());
  for (const std::uint32_t ordinal : ordinals) {
    trace::Process& p = t.processes[ctx.builder.process(ctx.pids.gpu(ordinal))];
    std::string label = "GPU " + std::to_string(ordinal);
    const DeviceInfo* d = ctx.device(ordinal);
    p.name = t.strings.intern(d != nullptr && !d->name.empty() ? label + ": " + d->name : label);
    p.labels = t.strings.intern(label);
    p.sort_index = kGpuSortOffset + ordinal;
  }

  std::unordered_map<std::uint32_t, std::string> thread_names;
  for (const ThreadName& n : ctx.batch.thread_names) thread_names[n.thread_id] = n.name;
  std::unordered_map<std::uint64_t, std::string> stream_names;  // (device << 32 | stream)
  for (const NameRecord& n : ctx.batch.names) {
    if (n.object.kind == ObjectKind::kThread)
      thread_names[n.object.thread_id] = n.name;  // NVTX wins
    if (n.object.kind == ObjectKind::kStream) {
      stream_names[static_cast<std::uint64_t>(n.object.device) << 32 | n.object.stream] = n.name;
    }
  }
  for (trace::Track& track : t.tracks) {
    const trace::Process& p = t.processes[track.process];
    if (track.kind == trace::TrackKind::kGpuStream && p.is_gpu) {
      std::string name = "stream " + std::to_string(track.tid);
      const auto it = stream_names.find(static_cast<std::uint64_t>(p.device) << 32 |
                                        static_cast<std::uint32_t>(track.tid));
      if (it != stream_names.end()) name += " (" + it->second + ")";
      track.name = t.strings.intern(name);
    } else if (track.process == ctx.cpu_process && track.kind == trace::TrackKind::kThread) {
      const auto it = thread_names.find(static_cast<std::uint32_t>(track.tid));
      if (it != thread_names.end()) track.name = t.strings.intern(it->second);
    }
  }

  for (const DeviceInfo& d : ctx.batch.devices) {
    const bool present =
        std::any_of(t.devices.begin(), t.devices.end(), [&](const trace::DeviceProperties& p) {
          return p.id == static_cast<std::int32_t>(d.ordinal);
        });
    if (!present) t.devices.push_back(fill_peaks(d));
  }
}

}  // namespace

DecodeResult decode(const RecordBatch& batch, trace::TraceBuilder& builder,
                    const DecodeOptions& options) {
  DecodeResult result;
  const StreamDecodeContext* stream = options.stream;
  const LaunchIndex launches(batch);
  DecodeContext ctx(batch, builder, options, launches);
  ctx.pids = stream != nullptr && stream->pids ? *stream->pids : choose_pids(batch);
  result.pids = ctx.pids;
  ctx.cpu_process = builder.process(ctx.pids.cpu);
  for (const DeviceInfo& d : batch.devices) ctx.devices[d.ordinal] = &d;
  for (const auto& k : batch.kernels) ctx.device_of_context.emplace(k.context, k.device);
  for (const auto& m : batch.memcpys) ctx.device_of_context.emplace(m.context, m.device);
  for (const auto& m : batch.memsets) ctx.device_of_context.emplace(m.context, m.device);
  if (stream != nullptr) {
    for (const auto& [context, device] : stream->context_devices)
      ctx.device_of_context.emplace(context, device);
  }

  // NVTX first: operator names and args are added before kernel names and args, which
  // decides the nesting of a GPU extent and a kernel with the same interval (see
  // operator_slices.cc).
  const std::vector<std::optional<WorkCount>> counted = detail::count_kernels(ctx);
  if (options.nvtx) {
    const TimeNs end =
        stream != nullptr ? std::max(stream->capture_end, capture_end(batch)) : capture_end(batch);
    result.markers = pair_markers(batch, end, options.counts);
    result.attribution = attribute_operators(batch, launches, result.markers, counted);
    std::vector<bool> held;
    if (stream != nullptr) held = merge_stream_carry(*stream, result.markers, result.attribution);
    ctx.attribution = &result.attribution;
    for (const NvtxRange& r : result.markers.ranges)
      ctx.attribution_precisions.push_back(r.precision);
    // Before the ranges, so that each step marker encloses its range of the same span.
    emit_profiler_steps(result.markers, ctx.pids, options.profiler_steps, builder, &held);
    ctx.range_metrics =
        emit_operators(result.markers, result.attribution, ctx.pids, builder, &held);
    // The GPU processes the extents created are recorded like the ones kernels create.
    for (const OperatorSummary& op : result.attribution.operators) {
      for (const StreamExtent& e : op.streams) ctx.gpu_track(e.device, e.stream);
    }
  }
  emit_api_calls(ctx, result);
  detail::match_collectives(ctx);
  detail::emit_gpu_records(ctx, result);
  emit_syncs(ctx, result);
  if (options.overhead) emit_overheads(ctx, result);
  detail::emit_gpu_metrics(ctx);
  emit_metadata(ctx);
  detail::add_counter_info(ctx);
  detail::emit_capture_windows(ctx);
  // A streaming capture gathers them over its appends and writes them with the last.
  if (stream == nullptr) add_mangled_kernel_names(ctx.trace, result.mangled_names);
  if (stream == nullptr) add_unfinished_records(ctx.trace, batch.unfinished_records);
  ctx.trace.report.dropped_records += batch.dropped_records;
  return result;
}

void add_unfinished_records(trace::Trace& t, std::uint64_t n) {
  if (n == 0) return;
  t.info.emplace_back(
      std::string(kUnfinishedRecordsKey),
      std::to_string(n) + " (GPU work still running when the trace was written: left out)");
}

void add_mangled_kernel_names(trace::Trace& t, const std::map<std::string, std::string>& names) {
  if (names.empty()) return;
  // Readers keep a top-level member up to 1 MB: names past that stay demangled.
  constexpr std::size_t kMaxBytes = 900'000;
  nlohmann::json object = nlohmann::json::object();
  std::size_t bytes = 0;
  for (const auto& [shown, mangled] : names) {
    bytes += shown.size() + mangled.size() + 6;
    if (bytes > kMaxBytes) break;
    object[shown] = mangled;
  }
  std::erase_if(t.extra_top_level, [](const auto& kv) { return kv.first == "mangledKernelNames"; });
  t.extra_top_level.emplace_back(
      "mangledKernelNames", object.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

trace::Trace decode_to_trace(const RecordBatch& batch, const DecodeOptions& options,
                             DecodeResult* result) {
  trace::Trace t;
  trace::TraceBuilder builder(t);
  DecodeResult r = decode(batch, builder, options);
  builder.finalize();
  if (result != nullptr) *result = std::move(r);
  return t;
}

}  // namespace flopline::capture
