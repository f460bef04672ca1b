// The groupings and columns of stats tables: one entry each. docs/STATS.md describes
// them for users; a new entry needs its line there and its tests.
#include "flopline/trace/stats_schema.h"

#include <cmath>
#include <string>

namespace flopline::trace {
namespace {

constexpr std::string_view kOperatorAliases[] = {"operator"};
constexpr std::string_view kCategoryAliases[] = {"cat"};

// A GPU stream's process as rows name it: its device ordinal, else its pid.
std::optional<std::string> gpu_of(const Trace& t, std::uint32_t track) {
  if (track >= t.tracks.size()) return std::nullopt;
  const Track& k = t.tracks[track];
  if (k.kind != TrackKind::kGpuStream || k.process >= t.processes.size()) return std::nullopt;
  const Process& p = t.processes[k.process];
  if (p.device >= 0) return "GPU " + std::to_string(p.device);
  if (p.pid_label != 0) return "GPU " + std::string(t.str(p.pid_label));
  return "GPU " + std::to_string(p.pid);
}

// clang-format off
constexpr StatsGrouping kGroupings[] = {
    {.by = GroupBy::kName, .name = "name", .aliases = {}, .label = "kernels (by name)",
     .default_categories = "kernel|", .key = RowKey::kSliceName, .inherit_counts = true},
    {.by = GroupBy::kOperator, .name = "op", .aliases = kOperatorAliases, .label = "operators",
     .default_categories = "user_annotation,cpu_op,operator|gpu_user_annotation",
     .key = RowKey::kSliceName, .operator_rows = true},
    {.by = GroupBy::kCategory, .name = "category", .aliases = kCategoryAliases,
     .label = "categories", .default_categories = "", .key = RowKey::kSliceCategory},
    {.by = GroupBy::kStream, .name = "stream", .aliases = {}, .label = "GPU streams",
     .default_categories = "kernel,gpu_memcpy,gpu_memset", .key = RowKey::kTrack,
     .track_row = stream_row, .inherit_counts = true},
    {.by = GroupBy::kDevice, .name = "device", .aliases = {}, .label = "GPUs",
     .default_categories = "kernel,gpu_memcpy,gpu_memset", .key = RowKey::kTrack,
     .track_row = device_row, .inherit_counts = true},
};
// clang-format on

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  while (true) {
    const auto at = s.find(sep);
    out.emplace_back(s.substr(0, at));
    if (at == std::string_view::npos) break;
    s.remove_prefix(at + 1);
  }
  return out;
}

// clang-format off
constexpr StatsColumn kColumns[] = {
    {.id = "name", .title = "Name", .table_title = "Name", .unit = StatsUnit::kText,
     .decimals = 0, .value = [](const StatsRow& r) { return StatsValue::string(r.name); },
     .outputs = kStatsMachine | kStatsPeople, .people_order = 0, .is_name = true},
    {.id = "count", .title = "Count", .table_title = "Instances", .unit = StatsUnit::kCount,
     .decimals = 0,
     .value = [](const StatsRow& r) { return StatsValue::integer(static_cast<std::int64_t>(r.count)); },
     .outputs = kStatsMachine | kStatsPeople, .people_order = 30},
    {.id = "total_ns", .title = "Total", .table_title = "Total Time (ns)", .unit = StatsUnit::kNs,
     .decimals = 0, .value = [](const StatsRow& r) { return StatsValue::integer(r.total_ns); },
     .outputs = kStatsMachine | kStatsPeople, .people_order = 20},
    {.id = "avg_ns", .title = "Average", .table_title = "Avg (ns)", .unit = StatsUnit::kNs,
     .decimals = 0, .value = [](const StatsRow& r) { return StatsValue::integer(r.avg_ns); },
     .outputs = kStatsMachine | kStatsPeople, .people_order = 40},
    {.id = "median_ns", .title = "Median", .table_title = "Med (ns)", .unit = StatsUnit::kNs,
     .decimals = 0, .value = [](const StatsRow& r) { return StatsValue::integer(r.median_ns); },
     .outputs = kStatsMachine | kStatsPeople, .people_order = 50},
    {.id = "min_ns", .title = "Min", .table_title = "Min (ns)", .unit = StatsUnit::kNs,
     .decimals = 0, .value = [](const StatsRow& r) { return StatsValue::integer(r.min_ns); },
     .outputs = kStatsMachine | kStatsPeople, .people_order = 60},
    {.id = "max_ns", .title = "Max", .table_title = "Max (ns)", .unit = StatsUnit::kNs,
     .decimals = 0, .value = [](const StatsRow& r) { return StatsValue::integer(r.max_ns); },
     .outputs = kStatsMachine | kStatsPeople, .people_order = 70},
    {.id = "std_ns", .title = "StdDev", .table_title = "StdDev (ns)", .unit = StatsUnit::kNs,
     .decimals = 0, .value = [](const StatsRow& r) { return StatsValue::integer(r.std_ns); },
     .outputs = kStatsMachine | kStatsPeople, .people_order = 80},
    {.id = "pct", .title = "% time", .table_title = "Time (%)", .unit = StatsUnit::kPercent,
     .decimals = 1, .value = [](const StatsRow& r) { return StatsValue::number(r.pct); },
     .outputs = kStatsMachine | kStatsPeople, .people_order = 10},
    {.id = "flops", .title = "FLOPs", .table_title = "GFLOP", .unit = StatsUnit::kFlop,
     .decimals = 3, .value = [](const StatsRow& r) { return StatsValue::number(r.flops); },
     .outputs = kStatsMachine | kStatsPeople, .people_order = 110,
     .empty_reason = EmptyReason::kCounts},
    {.id = "bytes", .title = "Bytes", .table_title = "Bytes", .unit = StatsUnit::kByte,
     .decimals = 0, .value = [](const StatsRow& r) { return StatsValue::number(r.bytes); },
     .outputs = kStatsMachine | kStatsPeople, .people_order = 120},
    {.id = "tflops", .title = "TFLOP/s", .table_title = "TFLOP/s", .unit = StatsUnit::kTflops,
     .decimals = 2, .value = [](const StatsRow& r) { return StatsValue::number(r.tflops); },
     .outputs = kStatsMachine | kStatsPeople, .people_order = 130,
     .empty_reason = EmptyReason::kCounts},
    {.id = "gbps", .title = "GB/s", .table_title = "GB/s", .unit = StatsUnit::kGbps,
     .decimals = 1, .value = [](const StatsRow& r) { return StatsValue::number(r.gbps); },
     .outputs = kStatsMachine | kStatsPeople, .people_order = 140,
     .empty_reason = EmptyReason::kCounts},
    {.id = "pct_peak", .title = "% peak", .table_title = "% peak", .unit = StatsUnit::kPercent,
     .decimals = 1, .value = [](const StatsRow& r) { return StatsValue::number(r.pct_peak); },
     .outputs = kStatsMachine | kStatsPeople, .people_order = 160,
     .empty_reason = EmptyReason::kPeak},
    {.id = "precision", .title = "Precision", .table_title = "Precision",
     .unit = StatsUnit::kText, .decimals = 0,
     .value = [](const StatsRow& r) { return StatsValue::string(r.precision); },
     .outputs = kStatsMachine | kStatsPeople, .people_order = 170},
    // Where the FLOPs came from; "!" marks declared FLOPs the counters disagree with.
    {.id = "flops_source", .title = "FLOPs from", .table_title = "Source",
     .unit = StatsUnit::kText, .decimals = 0,
     .value = [](const StatsRow& r) { return StatsValue::string(r.flops_source); },
     .outputs = kStatsMachine | kStatsPeople, .people_order = 180,
     .warn = [](const StatsRow& r) { return flops_disagree(r); }},
    // Operator rows' times (operator_time.h): unknown for other rows. Busy time is the
    // rows' time already, so people are not shown it twice.
    {.id = "busy_ns", .title = "Busy", .table_title = "Busy (ns)", .unit = StatsUnit::kNs,
     .decimals = 0, .value = [](const StatsRow& r) { return StatsValue::ns(r.busy_ns); },
     .outputs = kStatsMachine, .people_order = 0},
    {.id = "self_ns", .title = "Self", .table_title = "Self (ns)", .unit = StatsUnit::kNs,
     .decimals = 0, .value = [](const StatsRow& r) { return StatsValue::ns(r.self_ns); },
     .outputs = kStatsMachine | kStatsPeople, .people_order = 90},
    {.id = "device_total_ns", .title = "Device total", .table_title = "Device Total (ns)",
     .unit = StatsUnit::kNs, .decimals = 0,
     .value = [](const StatsRow& r) { return StatsValue::ns(r.device_total_ns); },
     .outputs = kStatsMachine, .people_order = 0},
    {.id = "extent_ns", .title = "Extent", .table_title = "Extent (ns)", .unit = StatsUnit::kNs,
     .decimals = 0, .value = [](const StatsRow& r) { return StatsValue::ns(r.extent_ns); },
     .outputs = kStatsMachine | kStatsPeople, .people_order = 100},
    {.id = "cpu_ns", .title = "CPU", .table_title = "CPU (ns)", .unit = StatsUnit::kNs,
     .decimals = 0, .value = [](const StatsRow& r) { return StatsValue::ns(r.cpu_ns); },
     .outputs = kStatsMachine, .people_order = 0},
    {.id = "intensity", .title = "FLOP/B", .table_title = "FLOP/B",
     .unit = StatsUnit::kFlopPerByte, .decimals = 1,
     .value = [](const StatsRow& r) { return StatsValue::number(r.intensity); },
     .outputs = kStatsMachine | kStatsPeople, .people_order = 150},
    // The counters' FLOPs beside declared ones: the table's "!" and footer say it.
    {.id = "counted_flops", .title = "Counted FLOPs", .table_title = "Counted GFLOP",
     .unit = StatsUnit::kFlop, .decimals = 3,
     .value = [](const StatsRow& r) { return StatsValue::number(r.counted_flops); },
     .outputs = kStatsMachine, .people_order = 0},
    {.id = "declared_vs_counted_pct", .title = "Declared vs counted",
     .table_title = "Declared vs counted (%)", .unit = StatsUnit::kPercent, .decimals = 1,
     .value = [](const StatsRow& r) { return StatsValue::number(r.declared_vs_counted_pct); },
     .outputs = kStatsMachine, .people_order = 0},
    // Top-level ranges read as windows of their process (operator_time.h): a step's
    // whole GPU time, backward kernels from other threads included.
    {.id = "window_busy_ns", .title = "Window busy", .table_title = "Window Busy (ns)",
     .unit = StatsUnit::kNs, .decimals = 0,
     .value = [](const StatsRow& r) { return StatsValue::ns(r.window_busy_ns); },
     .outputs = kStatsMachine | kStatsPeople, .people_order = 105},
};
// clang-format on

}  // namespace

std::span<const StatsGrouping> stats_groupings() {
  return kGroupings;
}

const StatsGrouping& stats_grouping(GroupBy by) {
  for (const StatsGrouping& g : kGroupings) {
    if (g.by == by) return g;
  }
  return kGroupings[0];
}

std::string stats_grouping_names(std::string_view last_separator) {
  std::string s;
  const std::size_t n = std::size(kGroupings);
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0) s += i + 1 == n ? last_separator : std::string_view(", ");
    s += kGroupings[i].name;
  }
  return s;
}

GroupingMatch find_stats_grouping(std::string_view word, std::string_view option) {
  for (const StatsGrouping& g : kGroupings) {
    if (g.name == word) return {&g, {}};
    for (std::string_view a : g.aliases) {
      if (a == word) return {&g, {}};
    }
  }
  // The word comes from a command line: its control bytes are not echoed.
  std::string shown(word);
  for (char& c : shown) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = '?';
  }
  GroupingMatch m;
  m.error =
      std::string(option) + " '" + shown + "' is not a grouping; use " + stats_grouping_names();
  return m;
}

std::vector<std::vector<std::string>> default_category_choices(const StatsGrouping& g) {
  std::vector<std::vector<std::string>> out;
  for (const std::string& choice : split(g.default_categories, '|')) {
    out.push_back(choice.empty() ? std::vector<std::string>{} : split(choice, ','));
  }
  return out;
}

std::optional<std::string> device_row(const Trace& trace, std::uint32_t track) {
  return gpu_of(trace, track);
}

std::optional<std::string> stream_row(const Trace& trace, std::uint32_t track) {
  auto gpu = gpu_of(trace, track);
  if (!gpu) return std::nullopt;
  const Track& k = trace.tracks[track];
  return *gpu + " stream " +
         (k.tid_label != 0 ? std::string(trace.str(k.tid_label)) : std::to_string(k.tid));
}

bool StatsValue::known() const {
  switch (kind) {
    case Kind::kUnknown:
      return false;
    case Kind::kInt:
      return true;
    case Kind::kNumber:
      return std::isfinite(d);
    case Kind::kText:
      return !text.empty();
  }
  return false;
}

std::span<const StatsColumn> stats_columns() {
  return kColumns;
}

std::vector<const StatsColumn*> columns_for(StatsOutputs output, std::span<const StatsColumn> all) {
  std::vector<const StatsColumn*> out;
  for (const StatsColumn& c : all) {
    if ((c.outputs & output) != 0) out.push_back(&c);
  }
  if ((output & kStatsMachine) == 0) {
    std::stable_sort(out.begin(), out.end(), [](const StatsColumn* a, const StatsColumn* b) {
      return a->people_order < b->people_order;
    });
  }
  return out;
}

const StatsColumn* find_stats_column(std::string_view id, std::span<const StatsColumn> all) {
  for (const StatsColumn& c : all) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

}  // namespace flopline::trace
