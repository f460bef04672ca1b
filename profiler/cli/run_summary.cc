#include "run_summary.h"

#include <cstdio>
#include <string_view>

#include "flopline/trace/analysis.h"
#include "flopline/trace/counted_basis.h"
#include "flopline/trace/device_peaks.h"
#include "flopline/trace/kernel_names.h"
#include "stats_output.h"
#include "trace_loading.h"

namespace flopline::cli {
namespace {

// One table: the rows of `by` over all loaded traces, cut to `top`. False when no
// slice matched (the table is then left out).
bool print_table(const std::vector<LoadedTrace>& traces, const std::vector<std::string>& files,
                 trace::GroupBy by, const std::vector<std::string>& categories, std::uint64_t top,
                 std::ostream& out) {
  trace::StatsQuery query;
  query.by = by;
  query.categories = categories;
  trace::StatsAccumulator acc(by);
  for (const LoadedTrace& lt : traces) acc.add(*lt.trace, query);
  StatsReport report;
  report.result = acc.finish();
  if (report.result.rows.empty()) return false;
  report.files = files;
  report.by = by;
  report.top = top;
  report.rows_total = report.result.rows.size();
  if (top < report.result.rows.size()) report.result.rows.resize(static_cast<std::size_t>(top));
  write_stats_table(report, out);
  return true;
}

// What --counters did: the metadata line of each trace and how much kernel time rests
// on which basis (trace/counted_basis.h).
void print_counter_note(const std::vector<LoadedTrace>& traces, std::ostream& out) {
  std::string what;
  // Per trace: launches not measured as planned, and what measuring cost.
  std::vector<std::string> shortfalls;
  trace::CountedCoverage coverage;
  for (const LoadedTrace& lt : traces) {
    const trace::Trace& t = *lt.trace;
    for (const auto& [k, v] : t.info) {
      if (k == "counters" && what.empty()) what = v;
      if (k == "counters failed launches" || k == "counters without their kernel" ||
          k == "counters time measuring") {
        shortfalls.push_back(k.substr(std::string_view("counters ").size()) + ": " + v);
      }
    }
    coverage.add(trace::counted_coverage(t));
  }
  if (what.empty()) return;
  out << "\ncounters: " << what << "\n";
  if (coverage.kernel_ns > 0 && what.rfind("unavailable", 0) != 0) {
    out << "counters: " << counted_coverage_line(coverage) << "\n";
  }
  for (const std::string& line : shortfalls) out << "counters: " << line << "\n";
}

}  // namespace

void print_run_summary(const std::vector<std::string>& files, std::uint64_t top, std::ostream& out,
                       std::ostream& err) {
  auto loaded = load_traces(files, err);
  if (!loaded) return;
  for (LoadedTrace& lt : *loaded) {
    trace::fill_missing_peaks(*lt.trace);
    trace::use_kernel_base_names(*lt.trace);  // as flopline stats shows them by default
  }
  std::vector<const trace::Trace*> all;
  std::uint64_t dropped = 0;
  for (const LoadedTrace& lt : *loaded) {
    all.push_back(lt.trace.get());
    dropped += lt.trace->report.dropped_records;
  }
  out << "\n== Operators (NVTX ranges) by GPU time ==\n";
  if (!print_table(*loaded, files, trace::GroupBy::kOperator,
                   trace::default_categories(all, trace::GroupBy::kOperator), top, out)) {
    out << "(no NVTX ranges with GPU work)\n";
  }
  out << "\n== Kernels by GPU time ==\n";
  if (!print_table(*loaded, files, trace::GroupBy::kName, {"kernel"}, top, out)) {
    out << "(no kernels)\n";
  }
  print_counter_note(*loaded, out);
  if (dropped > 0) {
    err << "flopline run: " << dropped
        << " activity records were dropped (raise --max-memory-mb to keep them)\n";
  }
}

}  // namespace flopline::cli
