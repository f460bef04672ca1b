// Renderers for `flopline stats`: an aligned table for people (nsys-style), and CSV
// and JSON with fixed schemas for programs (docs/STATS.md).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "cli_parse.h"
#include "flopline/trace/analysis.h"
#include "flopline/trace/collective_waits.h"
#include "flopline/trace/collectives.h"
#include "flopline/trace/counted_basis.h"
#include "flopline/trace/stats_schema.h"

namespace flopline::cli {

// Everything a renderer shows.
struct StatsReport {
  trace::StatsResult result;   // rows already cut to --top
  std::size_t rows_total = 0;  // rows before --top
  std::optional<std::uint64_t> top;
  std::vector<std::string> files;           // the files summarized
  std::vector<std::string> files_left_out;  // found in a directory, not readable as traces
  trace::GroupBy by = trace::GroupBy::kName;
  std::optional<RelativeRange> range;  // as given (relative to each file's first event)
  std::string steps;                   // --steps: the pattern; empty without
  std::size_t skip_first = 0;
  std::size_t steps_kept = 0;  // over all files
  // What the reader read and skipped, over all files (the reasons go to stderr).
  std::uint64_t events_total = 0;
  std::uint64_t events_skipped = 0;
  std::uint64_t text_bytes = 0;           // JSON text read (after inflating)
  std::uint64_t text_bytes_unread = 0;    // of it, left unread by syntax errors
  bool has_device_peaks = false;          // some trace carries a device peak (for the footer's why)
  std::size_t name_width = 100;           // table names cut to this many bytes; 0 = never cut
  std::vector<std::string> peak_sources;  // "NVIDIA H200: table" per device with peaks
  // Kernel time by the basis of its counted values, over all files (the whole files,
  // not --range): shown when some kernel carries counted values or a reason.
  trace::CountedCoverage counted;
  // NCCL kernels with their call's size, by collective and size (whole files).
  std::vector<trace::CollectiveRow> collectives;
  // With two or more files whose NCCL kernels name their communicator: each rank's wait
  // for the last rank to arrive.
  std::optional<trace::CollectiveWaits> collective_waits;
  // The columns every renderer shows (stats_schema.h); tests add their own.
  std::span<const trace::StatsColumn> columns = trace::stats_columns();
};

std::string_view group_by_name(trace::GroupBy by);  // the grouping's --by word

// A value as every output shows it: none when unknown or not finite (a sum of counts
// beyond the range of a double). The table prints "-", CSV an empty cell, JSON null.
std::optional<double> shown_value(const std::optional<double>& v);

void write_stats_table(const StatsReport& report, std::ostream& out);
// The header, then one line per row (flopline/trace/stats_csv.h): the machine columns
// of report.columns, in their order (docs/STATS.md, "CSV schema").
void write_stats_csv(const StatsReport& report, std::ostream& out);
// One object: the fields stats_json_fields() names, in that order ("rows": the CSV's
// columns, by id); unknown values are null (docs/STATS.md, "JSON schema").
void write_stats_json(const StatsReport& report, std::ostream& out);
// The JSON document's top-level keys, in order; some are only written when the report
// has them (files_left_out, counted_kernel_time, collectives, collective_waits).
std::vector<std::string_view> stats_json_fields();

// Table helpers, exposed for tests.
std::string with_thousands(std::int64_t v);  // 1234567 -> "1,234,567"
// Table names of `rows`: each shortened to `max_bytes` (0: not at all), and names that
// would then read the same told apart (trace::disambiguate_names).
std::vector<std::string> table_names(const std::vector<trace::StatsRow>& rows,
                                     std::size_t max_bytes);
// "1.50 MB": bytes with a decimal unit (B, KB, MB, GB, TB), three significant digits.
std::string bytes_text(double bytes);
// Shortens `name` to at most `max_bytes` bytes by eliding its middle with "...",
// never splitting a UTF-8 sequence; control characters become '?'.
std::string shorten_name(std::string_view name, std::size_t max_bytes);

}  // namespace flopline::cli
