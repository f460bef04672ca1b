#include "core/diff_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/search.h"
#include "core/viewport.h"

namespace flopline::viewer {
namespace {

DiffSideSummary summarize(const DiffSideTraces& side, trace::GroupBy by, trace::StatsResult& out) {
  trace::StatsAccumulator acc(by);
  const trace::StatsQuery q = diff_stats_query(by);
  for (std::size_t i = 0; i < side.traces.size(); ++i) {
    const trace::OperatorIndex* ops = i < side.operators.size() ? side.operators[i] : nullptr;
    acc.add(*side.traces[i], q, ops);
  }
  out = acc.finish();
  return {.given = side.given, .files = side.traces.size(), .total_ns = out.total_ns};
}

// A value to order by, or none (a side without the row has no calls, no per-call change).
std::optional<double> value_of(const trace::DiffRow& r, const trace::DiffColumn& c) {
  const trace::StatsValue v = c.value(r);
  std::optional<double> x;
  if (v.kind == trace::StatsValue::Kind::kInt) x = static_cast<double>(v.i);
  if (v.kind == trace::StatsValue::Kind::kNumber && std::isfinite(v.d)) x = v.d;
  if (x && c.field->by_magnitude) x = std::abs(*x);
  return x;
}

std::string percent_text(double v, int decimals, bool sign) {
  char buf[48];
  std::snprintf(buf, sizeof buf, sign ? "%+.*f%%" : "%.*f%%", decimals, v);
  return buf;
}

}  // namespace

std::string diff_cell_text(const trace::DiffRow& r, const trace::DiffColumn& c) {
  if (c.field->is_name) return r.name;
  const trace::StatsValue v = c.value(r);
  if (!v.known()) return "-";
  switch (v.kind) {
    case trace::StatsValue::Kind::kText:
      return std::string(v.text);
    case trace::StatsValue::Kind::kInt: {
      if (c.field->unit != trace::StatsUnit::kNs) return std::to_string(v.i);
      // Sign then magnitude, appended: gcc 12 warns (-Wrestrict) on a literal + string.
      std::string text = !c.field->signed_change ? "" : v.i > 0 ? "+" : v.i < 0 ? "-" : "";
      text += format_duration(v.i < 0 && c.field->signed_change ? -v.i : v.i);
      return text;
    }
    case trace::StatsValue::Kind::kNumber: {
      if (c.field->unit == trace::StatsUnit::kPercent)
        return percent_text(v.d, c.field->decimals, c.field->signed_change);
      char buf[48];
      std::snprintf(buf, sizeof buf, c.field->signed_change ? "%+.*f" : "%.*f", c.field->decimals,
                    v.d);
      return buf;
    }
    case trace::StatsValue::Kind::kUnknown:
      break;
  }
  return "-";
}

trace::StatsQuery diff_stats_query(trace::GroupBy by) {
  trace::StatsQuery q;
  q.by = by;
  if (by == trace::GroupBy::kName) q.categories = {"kernel", "gpu_memcpy", "gpu_memset"};
  return q;
}

DiffTable build_diff_table(const DiffSideTraces& a, const DiffSideTraces& b, trace::GroupBy by) {
  DiffTable t;
  t.by = by;
  trace::StatsResult ra, rb;
  t.a = summarize(a, by, ra);
  t.b = summarize(b, by, rb);
  t.rows = trace::diff_rows(ra.rows, rb.rows);
  return t;
}

std::vector<std::size_t> diff_view(const DiffTable& table, std::string_view filter,
                                   const trace::DiffColumn* column, bool descending) {
  if (column == nullptr) column = trace::find_diff_column("delta_ns");
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    const trace::DiffRow& r = table.rows[i];
    if (contains_case_insensitive(r.name, filter) ||
        contains_case_insensitive(trace::to_string(r.kind), filter))
      out.push_back(i);
  }
  const bool text = column->field->unit == trace::StatsUnit::kText;
  auto text_less = [&](std::size_t x, std::size_t y) {
    return diff_cell_text(table.rows[x], *column) < diff_cell_text(table.rows[y], *column);
  };
  std::stable_sort(out.begin(), out.end(), [&](std::size_t x, std::size_t y) {
    if (text) return descending ? text_less(y, x) : text_less(x, y);
    const std::optional<double> vx = value_of(table.rows[x], *column);
    const std::optional<double> vy = value_of(table.rows[y], *column);
    if (!vx || !vy) return vx.has_value() && !vy.has_value();  // unknown last
    return descending ? *vx > *vy : *vx < *vy;
  });
  return out;
}

OpTableQuery diff_row_query(trace::GroupBy by) {
  OpTableQuery q;
  q.by = by;
  if (by == trace::GroupBy::kName) q.categories = {"kernel", "gpu_memcpy", "gpu_memset"};
  return q;
}

}  // namespace flopline::viewer
