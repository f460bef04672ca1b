#include "stats_overview.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "flopline/trace/analysis.h"
#include "flopline/trace/device_peaks.h"
#include "flopline/trace/kernel_names.h"
#include "flopline/trace/name_text.h"
#include "output_check.h"
#include "stats_output.h"
#include "trace_loading.h"

namespace flopline::cli {
namespace {

struct FileOverview {
  std::string file;
  trace::TimeNs total_ns = 0;
  std::uint64_t kernels = 0;
  std::vector<trace::StatsRow> top;
  bool has_kernels = false;  // false: the summary is of every category
};

std::string ms_text(trace::TimeNs ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f ms", static_cast<double>(ns) / 1e6);
  return buf;
}

std::string row_text(const trace::StatsRow& r) {
  char buf[96];
  std::string s;
  std::snprintf(buf, sizeof buf, "%5.1f%%  ", r.pct);
  s += buf;
  s += shorten_name(r.name, 60);
  // The rate that says more: FLOP/s for compute, bytes/s for what moves memory.
  if (r.tflops && (*r.tflops >= 1 || !r.gbps)) {
    std::snprintf(buf, sizeof buf, "  %.1f TFLOP/s", *r.tflops);
    s += buf;
  } else if (r.gbps) {
    std::snprintf(buf, sizeof buf, "  %.0f GB/s", *r.gbps);
    s += buf;
  }
  if (r.pct_peak) {
    std::snprintf(buf, sizeof buf, ", %.0f%% of peak", *r.pct_peak);
    s += buf;
  }
  if (!r.precision.empty() && r.precision != "mixed") s += concat(" (", r.precision, ")");
  return s;
}

}  // namespace

int run_overview_report(const StatsOptions& opt, const trace::TraceFiles& found, std::ostream& out,
                        std::ostream& err) {
  std::vector<FileOverview> files;
  const bool ok =
      for_each_trace(found.paths, err, found.from_directory, nullptr, [&](LoadedTrace& lt) {
        trace::fill_missing_peaks(*lt.trace);
        trace::use_kernel_base_names(*lt.trace);
        trace::StatsAccumulator acc(trace::GroupBy::kName);
        trace::StatsQuery q;
        q.categories = opt.categories;  // empty: kernels when there are any, else all
        acc.add(*lt.trace, q);
        trace::StatsResult r = acc.finish();
        FileOverview f;
        f.file = lt.path;
        f.total_ns = r.total_ns;
        f.kernels = r.slices_considered;
        f.has_kernels = r.categories_used == std::vector<std::string>{"kernel"};
        for (std::size_t i = 0; i < r.rows.size() && i < kOverviewKernels; ++i)
          f.top.push_back(std::move(r.rows[i]));
        files.push_back(std::move(f));
      });
  if (!ok) return kExitFailure;
  start_output();
  if (opt.format == StatsFormat::kJson) {
    using Json = nlohmann::ordered_json;
    Json list = Json::array();
    for (const FileOverview& f : files) {
      Json top = Json::array();
      for (const trace::StatsRow& r : f.top) {
        top.push_back({{"name", r.name},
                       {"pct", r.pct},
                       {"total_ns", r.total_ns},
                       {"tflops", r.tflops ? Json(*r.tflops) : Json(nullptr)},
                       {"gbps", r.gbps ? Json(*r.gbps) : Json(nullptr)},
                       {"pct_peak", r.pct_peak ? Json(*r.pct_peak) : Json(nullptr)},
                       {"precision", r.precision}});
      }
      list.push_back({{"file", f.file},
                      {"total_ns", f.total_ns},
                      {"slices", f.kernels},
                      {"kernels_only", f.has_kernels},
                      {"top", std::move(top)}});
    }
    out << Json{{"report", "overview"}, {"files", std::move(list)}}.dump(
               -1, ' ', false, Json::error_handler_t::replace)
        << "\n";
  } else {
    out << "What each trace spends its GPU time on (kernels by base name, the " << kOverviewKernels
        << " longest;\n`flopline stats FILE` has every row and docs/STATS.md every formula):\n";
    for (const FileOverview& f : files) {
      out << "\n"
          << trace::terminal_safe(f.file) << ": " << ms_text(f.total_ns) << " in "
          << with_thousands(static_cast<std::int64_t>(f.kernels))
          << (f.has_kernels ? " kernels" : " slices (no kernels)") << "\n";
      for (const trace::StatsRow& r : f.top)
        out << "  " << trace::terminal_safe(row_text(r)) << "\n";
    }
  }
  return output_complete(out, err, "stats") ? kExitOk : kExitFailure;
}

}  // namespace flopline::cli
