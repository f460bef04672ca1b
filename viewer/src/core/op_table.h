// The FLOP/s table: one row per operator (NVTX range / gpu_user_annotation), kernel
// name, category, GPU stream or GPU, with the columns of `flopline stats` (both from
// stats_schema.h). The numbers come from trace::StatsAccumulator (analysis.h; formulas
// in docs/STATS.md), so the viewer and `flopline stats` always agree.
//
// Time range (ruler drag): slices that OVERLAP [begin, end) count, with durations
// CLIPPED to the range and their FLOPs and bytes scaled by the clipped share
// (StatsQuery::clip_to_range), so a range over half a kernel shows half of it.
// RangeRule::kStartInside gives `flopline stats --range` instead (whole slices that
// start inside the range).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/selection.h"
#include "core/slice_handle.h"
#include "flopline/trace/analysis.h"
#include "flopline/trace/counted_basis.h"
#include "flopline/trace/operator_time.h"
#include "flopline/trace/stats_schema.h"

namespace flopline::viewer {

enum class RangeRule { kOverlapClipped, kStartInside };

struct OpTableQuery {
  trace::GroupBy by = trace::GroupBy::kOperator;  // any grouping of stats_schema.h
  std::vector<std::string> categories;            // empty: analysis.h's default for `by`
  std::optional<TimeRange> range;
  RangeRule range_rule = RangeRule::kOverlapClipped;
  // Also sum the traces' kernel time by counted basis: a pass over every kernel's args
  // that depends on the traces alone, so the caller asks once per set of traces.
  bool counted_coverage = false;
};

struct OpRow {
  trace::StatsRow stats;  // name, count, total_ns ... pct_peak, precision (analysis.h)
  // The precision whose peak "% of peak" used ("tf32", "bf16"...), "mixed" when the
  // instances used several, "" when none carried one (stats.precision).
  std::string precision;
};

// One operator index per trace of a TraceList (nullptr: built when needed), for traces
// whose flows were released after loading (LoadResult::operator_list()).
using OperatorList = std::span<const trace::OperatorIndex* const>;

class OpTable {
 public:
  const std::vector<OpRow>& rows() const { return rows_; }
  trace::TimeNs total_ns() const { return total_ns_; }
  std::uint64_t slices() const { return slices_; }
  const OpTableQuery& query() const { return query_; }
  // Some trace carries a device peak: otherwise the % of peak column is hidden.
  bool has_peaks() const { return has_peaks_; }
  // Kernel time by the basis of its counted values over the whole traces (not the range);
  // only when the query asked for it.
  const std::optional<trace::CountedCoverage>& counted() const { return counted_; }
  std::vector<std::string> categories_used;  // as analysis.h reports them
  bool all_categories = false;

  // Stable sort by a column (stats_schema.h); unknown values (no FLOPs...) always go
  // last.
  void sort(const trace::StatsColumn& column, bool descending);
  const trace::StatsColumn* sort_column() const { return sort_column_; }
  bool sort_descending() const { return sort_descending_; }
  // Indices of rows whose name contains `filter` (ASCII case-insensitive), in table
  // order; every row for an empty filter.
  std::vector<std::size_t> filtered(std::string_view filter) const;

 private:
  friend OpTable build_op_table(TraceList traces, const OpTableQuery& query,
                                OperatorList operators);
  std::vector<OpRow> rows_;
  trace::TimeNs total_ns_ = 0;
  std::uint64_t slices_ = 0;
  OpTableQuery query_;
  bool has_peaks_ = false;
  std::optional<trace::CountedCoverage> counted_;
  const trace::StatsColumn* sort_column_ = trace::find_stats_column("total_ns");
  bool sort_descending_ = true;
};

// Builds the table over all traces (rows of the same name merge across traces).
// Rows start sorted by total time, descending (as `flopline stats`). Operator rows
// take their GPU time from `operators` (one per trace, or empty: built here).
OpTable build_op_table(TraceList traces, const OpTableQuery& query, OperatorList operators = {});

// The instances of one table row (same grouping, categories and range as `query`: the
// slices stats_schema.h's selection takes, in the row's key), sorted by start; for
// highlighting and "jump to the longest".
std::vector<SliceHandle> row_instances(TraceList traces, const OpTableQuery& query,
                                       std::string_view row_name);
// The longest of `instances` (the first of equals), or an invalid handle when empty.
SliceHandle longest_instance(TraceList traces, const std::vector<SliceHandle>& instances);

// The table as CSV in `flopline stats --csv`'s format, byte for byte (its header and
// columns, docs/STATS.md). `rows` selects and orders the rows (e.g. filtered()); all
// rows in table order when empty.
std::string op_table_csv(const OpTable& table, const std::vector<std::size_t>& rows = {});

}  // namespace flopline::viewer
