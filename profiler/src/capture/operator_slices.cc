// NVTX ranges, instants and operator GPU extents as trace slices; see attribution.h.
#include <cstdio>

#include "flopline/capture/attribution.h"
#include "flopline/trace/trace_args.h"

namespace flopline::capture {
namespace {

using trace::ArgsBuilder;
using trace::Slice;
using trace::StringId;

void add_marker_data(ArgsBuilder& a, const NvtxMarkerData& d) {
  if (!d.domain.empty()) a.add("domain", std::string_view(d.domain));
  if (d.category != 0) a.add_uint("category", d.category);
  if (d.has_color) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "#%06x", static_cast<unsigned>(d.color & 0xffffffu));
    a.add("color", std::string_view(hex));
  }
  switch (d.payload_kind) {
    case PayloadKind::kUint64:
      a.add_uint("payload", d.payload_u64);
      break;
    case PayloadKind::kInt64:
      a.add("payload", d.payload_i64);
      break;
    case PayloadKind::kDouble:
      a.add("payload", d.payload_f64);
      break;
    case PayloadKind::kNone:
      break;
  }
}

// Where a range's FLOPs come from: its own declaration, else the counted work of its
// kernels. With both, the counted sums ride along so `flopline stats` can compare them.
void add_counted(ArgsBuilder& a, const NvtxRange& r, const OperatorSummary* op) {
  if (op == nullptr || !op->counted_flops) return;
  if (r.count_source == CountSource::kNone) {
    a.add(trace::kArgFlopsSource,
          op->counted_basis == trace::CountedBasis::kEstimated  ? trace::kSourceEstimated
          : op->counted_basis == trace::CountedBasis::kSameWork ? trace::kSourceSameWork
                                                                : trace::kSourceMeasured);
    return;
  }
  a.add(trace::kArgCountedFlops, *op->counted_flops);
  if (op->counted_bytes) a.add(trace::kArgCountedDramBytes, *op->counted_bytes);
}

trace::ArgsId range_args(trace::Trace& t, ArgsBuilder& a, const NvtxRange& r,
                         const OperatorSummary* op) {
  a.clear();
  add_marker_data(a, r.data);
  if (r.count_source != CountSource::kNone)
    a.add(trace::kArgFlopsSource, to_string(r.count_source));
  add_counted(a, r, op);
  if (!r.precision.empty())
    a.add(trace::kArgPrecision, r.precision);  // picks the peak for % of peak
  if (!r.plan.empty()) a.add("plan", r.plan);
  if (r.from_torch) {
    // Kineto's cpu_op keys, so tools that read torch.profiler traces find them.
    if (r.torch_seq) a.add("Sequence number", *r.torch_seq);
    if (r.torch_op_id) a.add_uint("op_id", *r.torch_op_id);
    if (!r.torch_sizes.empty()) a.add_raw("Input Dims", r.torch_sizes);
    if (!r.torch_output.empty()) a.add_raw("Output Dims", r.torch_output);
  }
  if (r.unclosed) a.add_bool("unclosed", true);
  if (a.empty()) return trace::kNoArgs;
  return t.args.add_json(a.finish());
}

}  // namespace

std::vector<std::uint32_t> emit_operators(const PairedMarkers& markers,
                                          const Attribution& attribution, const TracePids& pids,
                                          trace::TraceBuilder& builder,
                                          const std::vector<bool>* held) {
  trace::Trace& t = builder.trace();
  const std::uint32_t cpu = builder.process(pids.cpu);
  const StringId cat_cpu = t.strings.intern("user_annotation");
  const StringId cat_gpu = t.strings.intern("gpu_user_annotation");
  ArgsBuilder a;

  auto is_held = [&](std::size_t range) {
    return held != nullptr && range < held->size() && (*held)[range];
  };
  std::vector<std::uint32_t> metrics(markers.ranges.size(), trace::kNone);
  for (std::size_t i = 0; i < markers.ranges.size(); ++i) {
    const NvtxRange& r = markers.ranges[i];
    const OperatorSummary* op =
        i < attribution.operators.size() ? &attribution.operators[i] : nullptr;
    if (r.metrics.has_flops() || r.metrics.has_bytes()) {
      metrics[i] = builder.add_metrics(r.metrics);
    } else if (op != nullptr && op->counted_flops) {
      metrics[i] = builder.add_metrics({*op->counted_flops, op->counted_bytes.value_or(-1)});
    }
    if (is_held(i)) continue;
    const std::uint32_t track = builder.track(cpu, static_cast<std::int64_t>(r.thread_id));
    builder.add_slice(track, Slice{r.start, r.end - r.start, t.strings.intern(r.name), cat_cpu,
                                   range_args(t, a, r, op), metrics[i]});
  }
  for (const NvtxInstant& i : markers.instants) {
    a.clear();
    add_marker_data(a, i.data);
    const trace::ArgsId args = a.empty() ? trace::kNoArgs : t.args.add_json(a.finish());
    const std::uint32_t track = builder.track(cpu, static_cast<std::int64_t>(i.thread_id));
    builder.add_instant(track, trace::Instant{i.ts, t.strings.intern(i.name), cat_cpu, args});
  }
  // The GPU extents always carry args: when an extent equals its only kernel's interval,
  // the slice added first with the lower name and args ids sorts as the outer one, and
  // launch flows then bind to the kernel inside it.
  for (const OperatorSummary& op : attribution.operators) {
    if (is_held(op.range)) continue;
    const StringId name = t.strings.intern(op.name);
    for (const StreamExtent& e : op.streams) {
      a.clear();
      a.add_uint("gpu records", e.records);
      const NvtxRange& r = markers.ranges[op.range];
      if (!r.precision.empty()) a.add(trace::kArgPrecision, r.precision);
      if (!r.plan.empty()) a.add("plan", r.plan);
      if (r.count_source != CountSource::kNone)
        a.add(trace::kArgFlopsSource, to_string(r.count_source));
      add_counted(a, r, &op);
      if (r.unclosed) a.add_bool("unclosed", true);  // its extent may still grow
      const trace::ArgsId args = t.args.add_json(a.finish());
      const std::uint32_t gpu = builder.process(pids.gpu(e.device));
      const std::uint32_t track =
          builder.track(gpu, static_cast<std::int64_t>(e.stream), trace::TrackKind::kGpuStream);
      builder.add_slice(track,
                        Slice{e.start, e.end - e.start, name, cat_gpu, args, metrics[op.range]});
    }
  }
  return metrics;
}

}  // namespace flopline::capture
