#include "slice_info.h"

#include <array>
#include <cmath>
#include <cstdio>

#include "core/viewport.h"
#include "flopline/trace/collectives.h"
#include "flopline/trace/json_value.h"

namespace flopline::viewer {
namespace {

std::string arg_value_text(std::string_view raw) {
  if (auto s = trace::json_string(raw)) return *s;
  return std::string(raw);
}

bool key_is(std::string_view key, std::string_view wanted) {
  if (key.size() != wanted.size()) return false;
  for (std::size_t i = 0; i < key.size(); ++i) {
    auto lower = [](char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; };
    if (lower(key[i]) != lower(wanted[i])) return false;
  }
  return true;
}

// 3 significant digits, without exponents for large rates ("2000", "12.3", "0.0333").
std::string format_rate(double v) {
  char buf[48];
  std::snprintf(buf, sizeof buf, v >= 1000 ? "%.0f" : "%.3g", v);
  return buf;
}

}  // namespace

SliceInfo describe_slice(TraceList traces, const SliceHandle& h, std::string_view args_json,
                         std::int64_t origin_ns) {
  SliceInfo info;
  if (!h.valid()) return info;
  const trace::Trace& t = *traces[h.trace];
  const trace::Slice& s = slice_of(traces, h);
  info.name = std::string(t.str(s.name));
  info.category = std::string(t.str(s.cat));
  info.start = format_duration(s.start - origin_ns);
  info.duration = format_duration(s.dur);
  const trace::SliceMetrics m = t.metrics_of(s);
  if (m.has_flops()) info.metrics.push_back({.key = "FLOPs", .value = format_si(m.flops)});
  if (m.has_bytes()) info.metrics.push_back({.key = "bytes", .value = format_si(m.bytes) + "B"});
  if (m.has_flops() && s.dur > 0) {
    info.metrics.push_back(
        {.key = "TFLOP/s", .value = format_rate(m.flops / static_cast<double>(s.dur) / 1e3)});
  }
  if (m.has_bytes() && s.dur > 0) {
    info.metrics.push_back(
        {.key = "GB/s", .value = format_rate(m.bytes / static_cast<double>(s.dur))});
  }
  if (!args_json.empty()) {
    for (auto& [key, raw] : trace::json_members(args_json)) {
      info.args.push_back({.key = key, .value = arg_value_text(raw)});
    }
  }
  return info;
}

std::vector<InfoLine> tooltip_args(const SliceInfo& info) {
  // Kineto's kernel args and flopline's own, in the order a reader scans them.
  // An NCCL kernel's collective, size and bandwidths (flopline/trace/collectives.h).
  static constexpr std::array<std::string_view, 19> kKeys = {"grid",
                                                             "block",
                                                             "registers per thread",
                                                             "shared memory",
                                                             "blocks per SM",
                                                             "est. achieved occupancy %",
                                                             "stream",
                                                             "device",
                                                             "flops",
                                                             "bytes",
                                                             "TFLOP/s",
                                                             "GB/s",
                                                             trace::kCollectiveArg,
                                                             trace::kCollectiveMessageBytesArg,
                                                             trace::kAlgbwArg,
                                                             trace::kBusbwArg,
                                                             "precision",
                                                             "flops source",
                                                             "correlation"};
  std::vector<InfoLine> out;
  for (std::string_view k : kKeys) {
    for (const InfoLine& a : info.args) {
      if (key_is(a.key, k)) {
        out.push_back(a);
        break;
      }
    }
  }
  return out;
}

std::vector<InfoLine> operator_info(const trace::Trace& trace,
                                    const trace::OperatorIndex* operators,
                                    const trace::SliceRef& slice) {
  std::vector<InfoLine> out;
  if (operators == nullptr || !slice.valid() || slice.track >= trace.tracks.size()) return out;
  auto name_of = [&](std::uint32_t o) {
    const trace::OperatorTime& op = operators->operators()[o];
    return std::string(trace.str(trace.tracks[op.slice.track].at(op.slice).name));
  };
  const bool on_gpu = trace.tracks[slice.track].kind != trace::TrackKind::kThread;
  std::uint32_t o = on_gpu ? operators->twin_of(slice) : operators->operator_at(slice);
  if (o != trace::kNone) {
    const trace::OperatorTime& op = operators->operators()[o];
    if (on_gpu) out.push_back({"operator", name_of(o) + " (this is its GPU extent)"});
    // A top-level range is also a window of its process: a step's backward kernels come
    // from autograd's thread, outside the range's own work.
    if (op.window_busy_ns) {
      out.push_back({"window busy", format_duration(*op.window_busy_ns) +
                                        " (all GPU work its process launched while it was "
                                        "open, from any thread)"});
    }
    if (op.items == 0) {
      out.push_back({"GPU work", "none launched inside it"});
      return out;
    }
    out.push_back({"GPU busy", format_duration(op.busy_ns) + " (union of its work; rates use it)"});
    out.push_back({"GPU self", format_duration(op.self_ns) + " (launched directly)"});
    out.push_back({"GPU total", format_duration(op.device_total_ns) + " (sum of durations)"});
    out.push_back({"GPU extent", format_duration(op.extent_ns) + " (first start to last end)"});
    char buf[96];
    std::snprintf(buf, sizeof buf, "%u slices (%u kernels), %u launched directly", op.items,
                  op.kernels, op.self_items);
    out.push_back({"GPU work", buf});
    if (op.metrics.has_flops()) {
      out.push_back({"FLOPs", format_si(op.metrics.flops) + " (" + to_string(op.flops_source) +
                                  (op.flops_in_total ? "" : "; inside an operator with FLOPs") +
                                  ")"});
      if (op.busy_ns > 0) {
        out.push_back(
            {"TFLOP/s", format_rate(op.metrics.flops / static_cast<double>(op.busy_ns) / 1e3) +
                            " on busy time"});
      }
    }
    if (op.metrics.has_bytes()) out.push_back({"bytes", format_si(op.metrics.bytes) + "B"});
    if (!op.precision.empty()) out.push_back({"precision", op.precision});
    return out;
  }
  if (!on_gpu) return out;
  const trace::InheritedCounts in = operators->inherited(slice);
  if (in.owner == trace::kNone) return out;
  out.push_back({"launched in", name_of(in.owner)});
  if (!in.precision.empty())
    out.push_back({"precision", std::string(in.precision) + " (its operator's)"});
  if (in.metrics.has_flops() && trace.metrics_of(trace.tracks[slice.track].at(slice)).flops < 0)
    out.push_back({"FLOPs", format_si(in.metrics.flops) + " (its operator's, its only kernel)"});
  return out;
}

}  // namespace flopline::viewer
