// Pairing NVTX markers into ranges and giving them their counts; see nvtx_ranges.h.
#include "flopline/capture/nvtx_ranges.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>

#include "flopline/capture/nvtx_flops.h"
#include "flopline/capture/torch_nvtx.h"

namespace flopline::capture {
namespace {

NvtxMarkerData data_of(const MarkerRecord& m) {
  NvtxMarkerData d;
  d.domain = m.domain;
  d.has_color = m.has_color;
  d.color = m.color;
  d.category = m.category;
  d.payload_kind = m.payload_kind;
  d.payload_u64 = m.payload_u64;
  d.payload_i64 = m.payload_i64;
  d.payload_f64 = m.payload_f64;
  return d;
}

void merge(NvtxMarkerData& d, const MarkerDataRecord& r) {
  d.has_color = r.has_color;
  d.color = r.color;
  d.category = r.category;
  d.payload_kind = r.payload_kind;
  d.payload_u64 = r.payload_u64;
  d.payload_i64 = r.payload_i64;
  d.payload_f64 = r.payload_f64;
}

// The OS thread a marker belongs to; nothing for device/context/stream objects.
std::optional<std::uint32_t> thread_of(const MarkerRecord& m) {
  if (m.object.kind == ObjectKind::kThread) return m.object.thread_id;
  // A process-scoped marker goes to the process's main thread, whose tid is the pid.
  if (m.object.kind == ObjectKind::kProcess) return m.object.process_id;
  return std::nullopt;
}

// Suffix, then payload; torch names are handled afterwards, across all ranges.
void apply_counts(NvtxRange& r, const CountOptions& options) {
  const ParsedRangeMessage parsed = parse_range_message(r.message);
  r.name = parsed.has_suffix && !parsed.name.empty() ? std::string(parsed.name) : r.message;
  if (parsed.counts.flops) r.metrics.flops = *parsed.counts.flops;
  if (parsed.counts.bytes) r.metrics.bytes = *parsed.counts.bytes;
  r.precision = parsed.counts.precision;
  r.plan = parsed.counts.plan;
  if (parsed.has_suffix) r.count_source = CountSource::kSuffix;
  if (!parsed.counts.flops && options.payload_is_flops) {
    const auto f = payload_flops(r.data.payload_kind, r.data.payload_u64, r.data.payload_i64,
                                 r.data.payload_f64);
    if (f) {
      r.metrics.flops = *f;
      if (r.count_source == CountSource::kNone) r.count_source = CountSource::kPayload;
    }
  }
}

void apply_torch_counts(std::vector<NvtxRange>& ranges) {
  std::vector<TorchRangeInput> inputs;
  inputs.reserve(ranges.size());
  for (const NvtxRange& r : ranges)
    inputs.push_back(TorchRangeInput{r.name, r.thread_id, r.start, r.end});
  const std::vector<TorchRangeCounts> counts = torch_range_counts(inputs);
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    if (!counts[i].parsed) continue;
    NvtxRange& r = ranges[i];
    const auto name = parse_torch_nvtx_name(r.name);  // parsed above, so this succeeds
    r.from_torch = true;
    r.torch_seq = name->seq;
    r.torch_op_id = name->op_id;
    r.torch_sizes = std::string(name->sizes_text);
    if (counts[i].output) r.torch_output = shape_text(*counts[i].output);
    if (counts[i].flops && !r.metrics.has_flops()) {
      r.metrics.flops = *counts[i].flops;
      if (r.count_source == CountSource::kNone) r.count_source = CountSource::kTorchShapes;
    }
    r.name = std::string(name->op);  // last: name->op points into r.name
  }
}

// A range whose end never came (or whose id was started again) runs to the capture end.
void close_unclosed(PairedMarkers& out, std::size_t index, TimeNs capture_end) {
  NvtxRange& r = out.ranges[index];
  r.end = std::max(capture_end, r.start);
  r.unclosed = true;
  ++out.unclosed_ranges;
}

}  // namespace

const char* to_string(CountSource s) {
  switch (s) {
    case CountSource::kSuffix:
      return "suffix";
    case CountSource::kPayload:
      return "payload";
    case CountSource::kTorchShapes:
      return "emit_nvtx sizes";
    case CountSource::kNone:
      break;
  }
  return "none";
}

PairedMarkers pair_markers(const RecordBatch& batch, TimeNs capture_end,
                           const CountOptions& options) {
  PairedMarkers out;
  std::unordered_map<std::uint32_t, const MarkerDataRecord*> data_by_id;
  for (const MarkerDataRecord& d : batch.marker_data) data_by_id[d.id] = &d;

  // Process markers in time order so an id reused after its end pairs correctly.
  std::vector<std::uint32_t> order(batch.markers.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return batch.markers[a].timestamp < batch.markers[b].timestamp;
  });

  std::unordered_map<std::uint32_t, std::size_t> open;  // id -> index in out.ranges
  for (const std::uint32_t i : order) {
    const MarkerRecord& m = batch.markers[i];
    if (m.is_end()) {
      const auto it = open.find(m.id);
      if (it == open.end()) {
        ++out.unmatched_ends;
        continue;
      }
      out.ranges[it->second].end = std::max(m.timestamp, out.ranges[it->second].start);
      open.erase(it);
      continue;
    }
    const auto thread = thread_of(m);
    if (!thread) {
      ++out.skipped_markers;
      continue;
    }
    NvtxMarkerData data = data_of(m);
    if (!m.has_data) {
      const auto d = data_by_id.find(m.id);
      if (d != data_by_id.end()) merge(data, *d->second);
    }
    if (m.is_instant() && !m.is_start()) {
      out.instants.push_back(NvtxInstant{*thread, m.timestamp, m.name, std::move(data)});
      continue;
    }
    if (!m.is_start()) {
      ++out.skipped_markers;
      continue;
    }
    NvtxRange r;
    r.id = m.id;
    r.thread_id = *thread;
    r.start = m.timestamp;
    r.end = m.timestamp;
    r.message = m.name;
    r.data = std::move(data);
    if (const auto it = open.find(m.id); it != open.end())
      close_unclosed(out, it->second, capture_end);
    open[m.id] = out.ranges.size();
    out.ranges.push_back(std::move(r));
  }
  for (const auto& [id, index] : open) close_unclosed(out, index, capture_end);
  for (NvtxRange& r : out.ranges) apply_counts(r, options);
  if (options.torch_shapes) apply_torch_counts(out.ranges);

  std::stable_sort(out.ranges.begin(), out.ranges.end(),
                   [](const NvtxRange& a, const NvtxRange& b) {
                     if (a.thread_id != b.thread_id) return a.thread_id < b.thread_id;
                     if (a.start != b.start) return a.start < b.start;
                     return a.end > b.end;
                   });
  return out;
}

}  // namespace flopline::capture
