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
std::optional<double> value_of(const trace::DiffRow& r, DiffColumn c) {
  switch (c) {
    case DiffColumn::kDelta:
      return std::abs(static_cast<double>(r.delta_ns));
    case DiffColumn::kDeltaPct:
      return r.delta_pct;
    case DiffColumn::kCallsA:
      if (!r.a) return std::nullopt;
      return static_cast<double>(r.a->count);
    case DiffColumn::kCallsB:
      if (!r.b) return std::nullopt;
      return static_cast<double>(r.b->count);
    case DiffColumn::kTimeA:
      if (!r.a) return std::nullopt;
      return static_cast<double>(r.a->total_ns);
    case DiffColumn::kTimeB:
      if (!r.b) return std::nullopt;
      return static_cast<double>(r.b->total_ns);
    case DiffColumn::kPerCallPct:
      return r.per_call_pct;
    case DiffColumn::kWorkPct:
      return r.work_pct;
    case DiffColumn::kTflopsA:
      return r.a ? r.a->tflops : std::nullopt;
    case DiffColumn::kTflopsB:
      return r.b ? r.b->tflops : std::nullopt;
    case DiffColumn::kChange:
    case DiffColumn::kPrecisionA:
    case DiffColumn::kPrecisionB:
    case DiffColumn::kName:
      break;
  }
  return std::nullopt;
}

bool is_text(DiffColumn c) {
  return c == DiffColumn::kChange || c == DiffColumn::kName || c == DiffColumn::kPrecisionA ||
         c == DiffColumn::kPrecisionB;
}

std::string percent_text(const std::optional<double>& v) {
  if (!v || !std::isfinite(*v)) return "-";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%+.1f%%", *v);
  return buf;
}

std::string side_precision(const std::optional<trace::StatsRow>& r) {
  return r && !r->precision.empty() ? r->precision : "-";
}

}  // namespace

const char* diff_column_title(DiffColumn c) {
  switch (c) {
    case DiffColumn::kChange:
      return "Change";
    case DiffColumn::kDelta:
      return "Delta";
    case DiffColumn::kDeltaPct:
      return "Delta %";
    case DiffColumn::kCallsA:
      return "A calls";
    case DiffColumn::kCallsB:
      return "B calls";
    case DiffColumn::kTimeA:
      return "A time";
    case DiffColumn::kTimeB:
      return "B time";
    case DiffColumn::kPerCallPct:
      return "Per call %";
    case DiffColumn::kWorkPct:
      return "Work %";
    case DiffColumn::kTflopsA:
      return "A TFLOP/s";
    case DiffColumn::kTflopsB:
      return "B TFLOP/s";
    case DiffColumn::kPrecisionA:
      return "A prec";
    case DiffColumn::kPrecisionB:
      return "B prec";
    case DiffColumn::kName:
      return "Name";
  }
  return "";
}

std::string diff_cell_text(const trace::DiffRow& r, DiffColumn c) {
  switch (c) {
    case DiffColumn::kChange:
      return trace::to_string(r.kind);
    case DiffColumn::kDelta: {
      // Sign then magnitude, appended: gcc 12 warns (-Wrestrict) on a literal + string.
      std::string text = r.delta_ns > 0 ? "+" : r.delta_ns < 0 ? "-" : "";
      text += format_duration(r.delta_ns < 0 ? -r.delta_ns : r.delta_ns);
      return text;
    }
    case DiffColumn::kDeltaPct:
      return percent_text(r.delta_pct);
    case DiffColumn::kCallsA:
      return r.a ? std::to_string(r.a->count) : "-";
    case DiffColumn::kCallsB:
      return r.b ? std::to_string(r.b->count) : "-";
    case DiffColumn::kTimeA:
      return r.a ? format_duration(r.a->total_ns) : "-";
    case DiffColumn::kTimeB:
      return r.b ? format_duration(r.b->total_ns) : "-";
    case DiffColumn::kPerCallPct:
      return percent_text(r.per_call_pct);
    case DiffColumn::kWorkPct:
      return percent_text(r.work_pct);
    case DiffColumn::kTflopsA:
    case DiffColumn::kTflopsB: {
      const std::optional<double> v = value_of(r, c);
      if (!v || !std::isfinite(*v)) return "-";
      char buf[48];
      std::snprintf(buf, sizeof buf, "%.2f", *v);
      return buf;
    }
    case DiffColumn::kPrecisionA:
      return side_precision(r.a);
    case DiffColumn::kPrecisionB:
      return side_precision(r.b);
    case DiffColumn::kName:
      return r.name;
  }
  return "";
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
                                   DiffColumn column, bool descending) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    const trace::DiffRow& r = table.rows[i];
    if (contains_case_insensitive(r.name, filter) ||
        contains_case_insensitive(trace::to_string(r.kind), filter))
      out.push_back(i);
  }
  auto text_less = [&](std::size_t x, std::size_t y) {
    const trace::DiffRow& a = table.rows[x];
    const trace::DiffRow& b = table.rows[y];
    if (column == DiffColumn::kName) return a.name < b.name;
    return diff_cell_text(a, column) < diff_cell_text(b, column);
  };
  std::stable_sort(out.begin(), out.end(), [&](std::size_t x, std::size_t y) {
    if (is_text(column)) return descending ? text_less(y, x) : text_less(x, y);
    const std::optional<double> vx = value_of(table.rows[x], column);
    const std::optional<double> vy = value_of(table.rows[y], column);
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
