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

std::vector<const trace::StatsColumn*> viewer_columns(std::span<const trace::StatsColumn> all) {
  std::vector<const trace::StatsColumn*> cols = trace::columns_for(trace::kStatsViewer, all);
  std::stable_partition(cols.begin(), cols.end(),
                        [](const trace::StatsColumn* c) { return c->is_name; });
  return cols;
}

std::string op_cell_text(const OpRow& row, const trace::StatsColumn& c) {
  const trace::StatsValue v = c.value(row.stats);
  if (!v.known()) return c.is_name ? std::string() : std::string("-");
  std::string s;
  switch (v.kind) {
    case trace::StatsValue::Kind::kInt:
      s = c.unit == trace::StatsUnit::kNs ? format_duration(v.i) : std::to_string(v.i);
      break;
    case trace::StatsValue::Kind::kNumber:
      if (c.unit == trace::StatsUnit::kFlop) {
        s = format_si(v.d);
      } else if (c.unit == trace::StatsUnit::kByte) {
        s = format_si(v.d) + "B";
      } else {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.*f", c.decimals, v.d);
        s = buf;
      }
      break;
    case trace::StatsValue::Kind::kText:
      s = v.text;
      break;
    case trace::StatsValue::Kind::kUnknown:
      break;
  }
  if (c.warn != nullptr && c.warn(row.stats)) s += "!";
  return s;
}

}  // namespace flopline::viewer
