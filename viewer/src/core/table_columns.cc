#include "core/table_columns.h"

#include <algorithm>
#include <cstdio>

#include "core/si_format.h"
#include "core/viewport.h"

namespace flopline::viewer {

float name_column_width(float longest_name_px, float available_px, float font_px) {
  const float least = 12 * font_px;
  const float most = std::max(least, 0.55f * available_px);
  return std::clamp(longest_name_px, least, most);
}

std::string op_cell_text(const OpRow& row, OpColumn c) {
  const trace::StatsRow& r = row.stats;
  char buf[64];
  auto opt = [&](const std::optional<double>& v, const char* fmt) -> std::string {
    if (!v) return "-";
    std::snprintf(buf, sizeof buf, fmt, *v);
    return buf;
  };
  switch (c) {
    case OpColumn::kName:
      return r.name;
    case OpColumn::kCount:
      return std::to_string(r.count);
    case OpColumn::kTotal:
      return format_duration(r.total_ns);
    case OpColumn::kAverage:
      return format_duration(r.avg_ns);
    case OpColumn::kMedian:
      return format_duration(r.median_ns);
    case OpColumn::kMin:
      return format_duration(r.min_ns);
    case OpColumn::kMax:
      return format_duration(r.max_ns);
    case OpColumn::kPercent:
      return opt(r.pct, "%.1f");
    case OpColumn::kFlops:
      return r.flops ? format_si(*r.flops) : "-";
    case OpColumn::kBytes:
      return r.bytes ? format_si(*r.bytes) + "B" : "-";
    case OpColumn::kTflops:
      return opt(r.tflops, "%.2f");
    case OpColumn::kGbps:
      return opt(r.gbps, "%.1f");
    case OpColumn::kPercentPeak:
      return opt(r.pct_peak, "%.1f");
    case OpColumn::kPrecision:
      return row.precision.empty() ? "-" : row.precision;
    case OpColumn::kSelf:
      return r.self_ns ? format_duration(*r.self_ns) : "-";
    case OpColumn::kExtent:
      return r.extent_ns ? format_duration(*r.extent_ns) : "-";
    case OpColumn::kFlopsSource:
      return r.flops_source.empty() ? "-" : r.flops_source;
  }
  return "";
}

}  // namespace flopline::viewer
