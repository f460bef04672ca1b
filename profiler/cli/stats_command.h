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

// --report: the summary table (default), the time breakdown per rank and GPU, or an
// overview of many files (a few lines each).
enum class StatsReportKind { kSummary, kBreakdown, kOverview };

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
  // --steps PATTERN, --skip-first N: each file's window is the span of its CPU slices
  // whose names match the pattern (flopline/trace/step_window.h), the first N left out.
  std::string steps;
  std::size_t skip_first = 0;
  // --names base, the default: kernels by base name (trace/kernel_names.h).
  bool base_names = true;
  // --names mangled: kernels by the names the driver gave them (trace/kernel_names.h).
  bool mangled_names = false;
  bool per_step = false;  // --per-step: the breakdown's rows step by step (with --steps)
};

Parsed<StatsOptions> parse_stats_args(std::span<const std::string> args);
// "flopline stats: --steps 'P' matches no CPU slice in FILES" and a hint.
std::string steps_error(const StatsOptions& opt, const std::vector<std::string>& files);
std::string stats_usage();

// The command-table entry.
int run_stats_command(std::span<const std::string> args, std::ostream& out, std::ostream& err);

}  // namespace flopline::cli
