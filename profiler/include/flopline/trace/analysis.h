// Aggregates slices into per-name, per-operator or per-category rows with time
// statistics and, where slices carry FLOP and byte counts, achieved TFLOP/s, GB/s and
// % of the device's peak. Used by `flopline stats`, `flopline run` and the viewer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "flopline/trace/model.h"

namespace flopline::trace {

enum class GroupBy { kName, kOperator, kCategory };

struct StatsQuery {
  GroupBy by = GroupBy::kName;
  // Categories to include; empty = the default for `by` (see docs/STATS.md).
  std::vector<std::string> categories;
  // Only slices whose start lies in [range_begin, range_end) (absolute ns).
  std::optional<TimeNs> range_begin;
  std::optional<TimeNs> range_end;
};

struct StatsRow {
  std::string name;
  std::uint64_t count = 0;
  TimeNs total_ns = 0;
  TimeNs avg_ns = 0;     // total / count, rounded to nearest
  TimeNs median_ns = 0;  // lower median for even counts... see docs/STATS.md
  TimeNs min_ns = 0;
  TimeNs max_ns = 0;
  TimeNs std_ns = 0;     // population standard deviation, rounded
  double pct = 0;        // share of the summed time of all rows, 0..100
  std::optional<double> flops;  // summed over instances that carry flops
  std::optional<double> bytes;
  std::optional<double> tflops;  // flops / time of the instances that carry flops
  std::optional<double> gbps;    // bytes / time of the instances that carry bytes
  std::optional<double> pct_peak;  // see docs/STATS.md
};

struct StatsResult {
  std::vector<StatsRow> rows;  // sorted by total_ns descending, then name
  TimeNs total_ns = 0;
  std::uint64_t slices_considered = 0;
  std::vector<std::string> categories_used;
};

StatsResult compute_stats(const Trace& trace, const StatsQuery& query);

}  // namespace flopline::trace
