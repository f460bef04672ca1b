// The fields of diff tables: one entry each. docs/DIFF.md describes them for users; a
// new entry needs its place there (tests/unit/test_stats_docs.cc checks it) and its tests.
#include "flopline/trace/diff_schema.h"

#include <algorithm>

#include "flopline/trace/stats_csv.h"

namespace flopline::trace {
namespace {

// clang-format off
constexpr DiffField kFields[] = {
    {.id = "name", .title = "Name", .table_title = "Name", .unit = StatsUnit::kText,
     .decimals = 0, .per_side = false,
     .row_value = [](const DiffRow& d) { return StatsValue::string(d.name); },
     .people_order = 100, .is_name = true},
    {.id = "change", .title = "Change", .table_title = "Change", .unit = StatsUnit::kText,
     .decimals = 0, .per_side = false,
     .row_value = [](const DiffRow& d) { return StatsValue::string(to_string(d.kind)); },
     .people_order = 0},
    {.id = "count", .title = "calls", .table_title = "calls", .unit = StatsUnit::kCount,
     .decimals = 0, .per_side = true,
     .side_value = [](const StatsRow& r) { return StatsValue::integer(static_cast<std::int64_t>(r.count)); },
     .people_order = 30},
    {.id = "total_ns", .title = "time", .table_title = "time (ns)", .unit = StatsUnit::kNs,
     .decimals = 0, .per_side = true,
     .side_value = [](const StatsRow& r) { return StatsValue::integer(r.total_ns); },
     .people_order = 40},
    // B's total time less A's: the rows' order.
    {.id = "delta_ns", .title = "Delta", .table_title = "Delta (ns)", .unit = StatsUnit::kNs,
     .decimals = 0, .per_side = false,
     .row_value = [](const DiffRow& d) { return StatsValue::integer(d.delta_ns); },
     .people_order = 10, .signed_change = true, .by_magnitude = true},
    {.id = "delta_pct", .title = "Delta %", .table_title = "Delta %", .unit = StatsUnit::kPercent,
     .decimals = 1, .per_side = false,
     .row_value = [](const DiffRow& d) { return StatsValue::number(d.delta_pct); },
     .people_order = 20, .signed_change = true},
    {.id = "avg_ns", .title = "average", .table_title = "avg (ns)", .unit = StatsUnit::kNs,
     .decimals = 0, .per_side = true,
     .side_value = [](const StatsRow& r) { return StatsValue::integer(r.avg_ns); },
     .people = false},
    {.id = "per_call_pct", .title = "Per call %", .table_title = "Per call %",
     .unit = StatsUnit::kPercent, .decimals = 1, .per_side = false,
     .row_value = [](const DiffRow& d) { return StatsValue::number(d.per_call_pct); },
     .people_order = 50, .signed_change = true},
    {.id = "flops", .title = "FLOPs", .table_title = "FLOPs", .unit = StatsUnit::kFlop,
     .decimals = 0, .per_side = true,
     .side_value = [](const StatsRow& r) { return StatsValue::number(r.flops); },
     .people = false},
    {.id = "work_pct", .title = "Work %", .table_title = "Work %", .unit = StatsUnit::kPercent,
     .decimals = 1, .per_side = false,
     .row_value = [](const DiffRow& d) { return StatsValue::number(d.work_pct); },
     .people_order = 60, .signed_change = true},
    {.id = "tflops", .title = "TFLOP/s", .table_title = "TFLOP/s", .unit = StatsUnit::kTflops,
     .decimals = 2, .per_side = true,
     .side_value = [](const StatsRow& r) { return StatsValue::number(r.tflops); },
     .people_order = 70},
    {.id = "precision", .title = "prec", .table_title = "prec", .unit = StatsUnit::kText,
     .decimals = 0, .per_side = true,
     .side_value = [](const StatsRow& r) { return StatsValue::string(r.precision); },
     .people_order = 80},
};
// clang-format on

std::vector<DiffColumn> expand_fields() {
  std::vector<DiffColumn> out;
  for (const DiffField& f : kFields) {
    if (!f.per_side) {
      out.push_back({std::string(f.id), std::string(f.title), std::string(f.table_title), &f,
                     DiffSide::kRow});
      continue;
    }
    for (DiffSide side : {DiffSide::kA, DiffSide::kB}) {
      const bool a = side == DiffSide::kA;
      out.push_back({(a ? "a_" : "b_") + std::string(f.id),
                     (a ? "A " : "B ") + std::string(f.title),
                     (a ? "A " : "B ") + std::string(f.table_title), &f, side});
    }
  }
  return out;
}

}  // namespace

StatsValue DiffColumn::value(const DiffRow& row) const {
  switch (side) {
    case DiffSide::kRow:
      return field->row_value(row);
    case DiffSide::kA:
      return row.a ? field->side_value(*row.a) : StatsValue::none();
    case DiffSide::kB:
      return row.b ? field->side_value(*row.b) : StatsValue::none();
  }
  return StatsValue::none();
}

std::span<const DiffField> diff_fields() {
  return kFields;
}

std::span<const DiffColumn> diff_columns() {
  static const std::vector<DiffColumn> columns = expand_fields();
  return columns;
}

std::vector<const DiffColumn*> diff_people_columns() {
  std::vector<const DiffColumn*> out;
  for (const DiffColumn& c : diff_columns()) {
    if (c.field->people) out.push_back(&c);
  }
  // A side's two columns share their field's place, A's first (expand_fields' order).
  std::stable_sort(out.begin(), out.end(), [](const DiffColumn* a, const DiffColumn* b) {
    return a->field->people_order < b->field->people_order;
  });
  return out;
}

const DiffColumn* find_diff_column(std::string_view id) {
  for (const DiffColumn& c : diff_columns()) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

std::string diff_csv_header() {
  std::string s;
  for (const DiffColumn& c : diff_columns()) {
    if (!s.empty()) s += ',';
    s += c.id;
  }
  return s;
}

std::string diff_csv_row(const DiffRow& row) {
  std::string s;
  bool first = true;
  for (const DiffColumn& c : diff_columns()) {
    if (!first) s += ',';
    first = false;
    append_stats_csv_cell(s, c.value(row));
  }
  return s;
}

}  // namespace flopline::trace
