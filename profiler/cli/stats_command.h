// `flopline stats TRACE... [--by name|op|category] [--cat LIST] [--top N]
//  [--range T0:T1] [--name-width N|--full-names] [--csv|--json]`: per-kernel, per-operator or
//  per-category time
// statistics with achieved TFLOP/s, GB/s and % of peak. docs/STATS.md documents it.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "cli_parse.h"
#include "flopline/trace/analysis.h"

namespace flopline::cli {

enum class StatsFormat { kTable, kCsv, kJson };

// --report: the summary table (default) or the time breakdown per rank and GPU.
enum class StatsReportKind { kSummary, kBreakdown };

struct StatsOptions {
  std::vector<std::string> files;
  trace::GroupBy by = trace::GroupBy::kName;
  std::vector<std::string> categories;  // empty = the default for `by`
  std::optional<std::uint64_t> top;
  std::optional<RelativeRange> range;
  StatsFormat format = StatsFormat::kTable;
  std::size_t name_width = 100;  // table names cut to this many bytes; 0 = never cut
  bool help = false;             // print stats_usage() and do nothing else
  StatsReportKind report = StatsReportKind::kSummary;
};

Parsed<StatsOptions> parse_stats_args(std::span<const std::string> args);
std::string stats_usage();

// The command-table entry.
int run_stats_command(std::span<const std::string> args, std::ostream& out, std::ostream& err);

}  // namespace flopline::cli
