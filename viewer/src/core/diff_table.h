// The diff window's model: what changed from run A to run B, as `flopline diff A B`
// reports it (flopline/trace/trace_diff.h, docs/DIFF.md). Each side's traces are summed
// with the accumulator and the query the diff command uses, the rows are
// trace::diff_rows' own; the window only filters and orders them.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/op_table.h"
#include "flopline/trace/diff_schema.h"
#include "flopline/trace/trace_diff.h"

namespace flopline::viewer {

// One run: its traces (with their operator indices, for traces whose flows were released).
struct DiffSideTraces {
  std::string given;  // the file or directory named on the command line
  std::vector<const trace::Trace*> traces;
  std::vector<const trace::OperatorIndex*> operators;  // same order; may be empty
};

struct DiffSideSummary {
  std::string given;
  std::size_t files = 0;
  trace::TimeNs total_ns = 0;
};

struct DiffTable {
  trace::GroupBy by = trace::GroupBy::kName;  // kName (kernels, copies, sets) or kOperator
  DiffSideSummary a, b;
  std::vector<trace::DiffRow> rows;  // trace::diff_rows' order: largest |delta| first
};

// The query `flopline diff` sums each side with: kernels, copies and sets by name; or
// operators by each trace's default operator categories.
trace::StatsQuery diff_stats_query(trace::GroupBy by);

DiffTable build_diff_table(const DiffSideTraces& a, const DiffSideTraces& b, trace::GroupBy by);

// A cell as the window shows it (a column of trace::diff_people_columns()): times in the
// viewer's units, "-" where a side has no value.
std::string diff_cell_text(const trace::DiffRow& row, const trace::DiffColumn& c);

// The rows to show, as indices into table.rows: those whose name or change contains
// `filter` (ASCII case-insensitive), ordered by `column` (nullptr: by the time impact,
// |delta|; unknown values last either way), ties in diff_rows' order.
std::vector<std::size_t> diff_view(const DiffTable& table, std::string_view filter,
                                   const trace::DiffColumn* column = nullptr,
                                   bool descending = true);

// A row's instances are the table's rows of that name: the query that finds them in the
// timeline (kernels by name, or operators).
OpTableQuery diff_row_query(trace::GroupBy by);

}  // namespace flopline::viewer
