#include "stats_command.h"

#include <algorithm>
#include <climits>
#include <map>
#include <utility>

#include "flopline/trace/device_peaks.h"
#include "flopline/trace/kernel_names.h"
#include "flopline/trace/name_text.h"
#include "flopline/trace/stats_schema.h"
#include "flopline/trace/step_window.h"
#include "flopline/trace/trace_paths.h"
#include "output_check.h"
#include "stats_breakdown.h"
#include "stats_output.h"
#include "stats_overview.h"
#include "trace_loading.h"

namespace flopline::cli {
namespace {

constexpr OptionSpec kStatsOptions[] = {
    {"--by", true},          {"--cat", true},       {"--top", true},         {"--range", true},
    {"--csv", false},        {"--json", false},     {"--help", false, "-h"}, {"--name-width", true},
    {"--full-names", false}, {"--report", true},    {"--steps", true},       {"--skip-first", true},
    {"--names", true},       {"--per-step", false},
};

Parsed<trace::GroupBy> parse_group_by(std::string_view v) {
  const trace::GroupingMatch m = trace::find_stats_grouping(v);
  if (m.grouping == nullptr) return Parsed<trace::GroupBy>::fail(m.error);
  return {m.grouping->by, {}};
}

// For "no slices match": which categories the traces have, most slices first, so the
// user sees what to pass to --cat. Counted trace by trace (none of them is kept).
using CategoryCounts = std::map<std::string, std::uint64_t, std::less<>>;

void count_categories(const trace::Trace& t, CategoryCounts& count) {
  std::vector<std::uint64_t> per_id(t.strings.size(), 0);
  for (const trace::Track& track : t.tracks) {
    for (const auto& row : track.rows) {
      for (const trace::Slice& s : row) {
        if (s.cat < per_id.size()) ++per_id[s.cat];
      }
    }
  }
  for (std::size_t id = 0; id < per_id.size(); ++id) {
    if (per_id[id] > 0)
      count[trace::terminal_safe(t.str(static_cast<trace::StringId>(id)))] += per_id[id];
  }
}

std::string categories_present(const CategoryCounts& count) {
  std::vector<std::pair<std::string, std::uint64_t>> v(count.begin(), count.end());
  std::stable_sort(v.begin(), v.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string s;
  const std::size_t shown = std::min<std::size_t>(v.size(), 12);
  for (std::size_t i = 0; i < shown; ++i) {
    if (i > 0) s += ", ";
    s += (v[i].first.empty() ? std::string("(none)") : v[i].first) + " (" +
         std::to_string(v[i].second) + ")";
  }
  if (v.size() > shown) s += ", ...";
  return s;
}

std::string join(const std::vector<std::string>& v, std::string_view sep) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (i > 0) s += sep;
    s += v[i];
  }
  return s;
}

}  // namespace

std::string steps_error(const StatsOptions& opt, const std::vector<std::string>& files) {
  const std::string what =
      opt.skip_first > 0 ? concat("fewer than ", std::to_string(opt.skip_first + 1),
                                  " CPU slices (--skip-first ", std::to_string(opt.skip_first), ")")
                         : std::string("no CPU slice");
  return concat("flopline stats: --steps '", trace::terminal_safe(opt.steps), "' matches ", what,
                " in ", trace::terminal_safe(join(files, ", ")),
                "\n  (names of NVTX ranges or torch.profiler's ProfilerStep#N; * matches any "
                "run, ? one character)\n");
}

namespace {

// The --by and --cat lines of the help, from the table of groupings.
std::string grouping_usage() {
  std::string by = "  --by GROUPING          rows by ";
  std::string cats;
  for (const trace::StatsGrouping& g : trace::stats_groupings()) {
    const bool first = &g == &trace::stats_groupings().front();
    if (!first) by += &g == &trace::stats_groupings().back() ? " or " : ", ";
    by += g.name;
    if (first) by += " (default)";
    std::string choices;
    for (const std::vector<std::string>& c : trace::default_category_choices(g)) {
      if (!choices.empty()) choices += "; else ";
      choices += c.empty() ? std::string("all") : join(c, ",");
    }
    cats += concat("                         --by ", g.name, ": ", choices, "\n");
  }
  return concat(by, "\n",
                "  --cat LIST             only these categories, comma-separated (e.g. "
                "kernel,gpu_memcpy);\n"
                "                         may be repeated. Default (the first present):\n",
                cats,
                "                         (an operator's time is the busy time of the GPU work\n"
                "                         it launched)\n");
}

}  // namespace

std::string stats_usage() {
  return "usage: flopline stats TRACE... [options]\n"
         "\n"
         "Time per kernel, operator, category, GPU stream or GPU, with achieved TFLOP/s,\n"
         "GB/s and % of peak where the trace carries FLOP and byte counts. Several TRACE\n"
         "files are added together (rows of the same name merge). Reads Chrome/Kineto JSON,\n"
         ".json.gz too.\n"
         "\n"
         "options:\n" +
         grouping_usage() +
         "  --top N                show only the N rows with the most total time\n"
         "  --range T0:T1          only slices that start in [T0, T1), times after the first\n"
         "                         event of each file; units ns (default), us, ms, s; either\n"
         "                         side may be empty (5ms: or :10ms)\n"
         "  --names base|full|mangled\n"
         "                         kernels by their base name (default: no return type,\n"
         "                         namespaces, template arguments or parameters, as nsys'\n"
         "                         :base, so a kernel's instantiations make one row;\n"
         "                         namespaces stay where two functions share a name) or by\n"
         "                         their full name, or their mangled name as the driver\n"
         "                         gave it (traces flopline records; what ncu's\n"
         "                         --kernel-name takes)\n"
         "  --steps PATTERN        only what starts inside the span of the steps: the CPU\n"
         "                         slices (NVTX ranges, ProfilerStep#N) whose names match\n"
         "                         PATTERN (* any run, ? one character; e.g. 'step *')\n"
         "  --skip-first N         with --steps: leave out the first N steps (warm-up)\n"
         "  --per-step             with --report breakdown and --steps: a row per step\n"
         "  --name-width N         cut names in the table to N bytes (default 100; names\n"
         "                         that would read the same get what tells them apart)\n"
         "  --full-names           never cut names in the table (CSV and JSON never do)\n"
         "  --report NAME          summary (default: the table above, then NCCL collectives\n"
         "                         and waits across ranks when the traces have them), or\n"
         "                         breakdown: per rank and GPU, compute, communication,\n"
         "                         memory and idle time over the window (--range), the\n"
         "                         communication hidden under compute, counted TFLOP/s;\n"
         "                         or overview: a few lines per file, for many files\n"
         "  --csv                  write CSV (fixed columns, see docs/STATS.md)\n"
         "  --json                 write JSON (see docs/STATS.md)\n"
         "  -h, --help             show this help\n"
         "\n"
         "Exit status: 0 ok, 1 unreadable trace, no matching slices or output that could not\n"
         "be written, 2 bad command line.\n";
}

Parsed<StatsOptions> parse_stats_args(std::span<const std::string> args) {
  using P = Parsed<StatsOptions>;
  StatsOptions o;
  // --help wins over everything else on the line, as people add it to a failing command.
  for (const std::string& a : args) {
    if (a == "--") break;
    if (a == "--help" || a == "-h") {
      o.help = true;
      return P{std::move(o), {}};
    }
  }
  auto split = split_args(args, kStatsOptions);
  if (!split.ok()) return P::fail(split.error);
  bool csv = false, json = false;
  for (const auto& [name, value] : split.value->options) {
    if (name == "--by") {
      auto by = parse_group_by(value);
      if (!by.ok()) return P::fail(by.error);
      o.by = *by.value;
    } else if (name == "--cat") {
      auto list = parse_list(value, "--cat");
      if (!list.ok()) return P::fail(list.error);
      for (std::string& c : *list.value) {
        if (std::find(o.categories.begin(), o.categories.end(), c) == o.categories.end()) {
          o.categories.push_back(std::move(c));
        }
      }
    } else if (name == "--top") {
      auto n = parse_positive_count(value, "--top");
      if (!n.ok()) return P::fail(n.error);
      o.top = n.value;
    } else if (name == "--range") {
      auto r = parse_range(value, "--range");
      if (!r.ok()) return P::fail(r.error);
      o.range = r.value;
    } else if (name == "--name-width") {
      auto n = parse_positive_count(value, "--name-width");
      if (!n.ok()) return P::fail(n.error);
      if (*n.value < 8) return P::fail("--name-width must be at least 8");
      o.name_width = static_cast<std::size_t>(*n.value);
    } else if (name == "--report") {
      if (value == "summary") {
        o.report = StatsReportKind::kSummary;
      } else if (value == "breakdown") {
        o.report = StatsReportKind::kBreakdown;
      } else if (value == "overview") {
        o.report = StatsReportKind::kOverview;
      } else {
        return P::fail(
            concat("--report '", value, "' is not a report; use summary, breakdown or overview"));
      }
    } else if (name == "--names") {
      if (value != "full" && value != "base" && value != "mangled")
        return P::fail(concat("--names '", value, "' is not a naming; use base, full or mangled"));
      o.base_names = value == "base";
      o.mangled_names = value == "mangled";
    } else if (name == "--per-step") {
      o.per_step = true;
    } else if (name == "--steps") {
      if (value.empty()) return P::fail("--steps needs a name pattern, like 'step *'");
      o.steps = value;
    } else if (name == "--skip-first") {
      if (value == "0") {
        o.skip_first = 0;
      } else {
        auto n = parse_positive_count(value, "--skip-first");
        if (!n.ok()) return P::fail(n.error);
        o.skip_first = static_cast<std::size_t>(*n.value);
      }
    } else if (name == "--full-names") {
      o.name_width = 0;
    } else if (name == "--csv") {
      csv = true;
    } else if (name == "--json") {
      json = true;
    }
  }
  if (csv && json) return P::fail("--csv and --json cannot be combined");
  if (!o.steps.empty() && o.range) return P::fail("--steps and --range cannot be combined");
  if (o.steps.empty() && split.value->has("--skip-first"))
    return P::fail("--skip-first needs --steps");
  if (o.per_step && (o.steps.empty() || o.report != StatsReportKind::kBreakdown))
    return P::fail("--per-step needs --report breakdown and --steps");
  o.format = csv ? StatsFormat::kCsv : json ? StatsFormat::kJson : StatsFormat::kTable;
  o.files = std::move(split.value->positional);
  if (o.files.empty()) return P::fail("no trace file given");
  return P{std::move(o), {}};
}

int run_stats_command(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  auto parsed = parse_stats_args(args);
  if (!parsed.ok()) {
    err << usage_error("stats", parsed.error);
    return kExitUsage;
  }
  const StatsOptions& opt = *parsed.value;
  if (opt.help) {
    out << stats_usage();
    return kExitOk;
  }
  // A directory stands for the traces in it (every file of one `flopline run`).
  std::string dir_error;
  const trace::TraceFiles found = trace::find_trace_files(opt.files, &dir_error);
  if (found.paths.empty()) {
    err << "flopline: " << dir_error << "\n";
    return kExitFailure;
  }
  for (const std::string& note : found.notes)
    err << "flopline: " << trace::terminal_safe(note) << "\n";
  if (opt.report == StatsReportKind::kBreakdown) return run_breakdown_report(opt, found, out, err);
  if (opt.report == StatsReportKind::kOverview) return run_overview_report(opt, found, out, err);
  StatsReport report;
  report.by = opt.by;
  report.range = opt.range;
  report.steps = opt.steps;
  report.skip_first = opt.skip_first;
  report.top = opt.top;
  report.name_width = opt.name_width;
  // One accumulator per answer the default categories can give, since that answer
  // depends on every file: each file is added to each, then released, so a summary over
  // many files holds one trace at a time (and the accumulators' durations).
  trace::DefaultCategories defaults(opt.by);
  std::vector<std::vector<std::string>> choices =
      opt.categories.empty() ? defaults.choices()
                             : std::vector<std::vector<std::string>>{opt.categories};
  std::vector<trace::StatsAccumulator> accs;
  for (std::size_t i = 0; i < choices.size(); ++i) accs.emplace_back(opt.by);
  CategoryCounts categories_seen;
  std::size_t traces_read = 0;
  trace::CollectiveSummary collectives;
  std::vector<std::string> steps_missing;                // files with too few steps for --steps
  std::vector<trace::RankCollectives> rank_collectives;  // per file, its NCCL kernels
  // A directory's files that are not traces (a metadata.json beside the ranks, a rank
  // killed before it wrote) are left out by name; the others are summarized.
  const bool ok = for_each_trace(
      found.paths, err, found.from_directory, &report.files_left_out, [&](LoadedTrace& lt) {
        trace::fill_missing_peaks(*lt.trace);
        if (opt.mangled_names && !trace::use_kernel_mangled_names(*lt.trace)) {
          err << "flopline: " << trace::terminal_safe(lt.path)
              << ": no mangled kernel names (only traces flopline records carry them); "
                 "full names shown\n";
        } else if (opt.base_names) {
          trace::use_kernel_base_names(*lt.trace);
        }
        ++traces_read;
        report.files.push_back(lt.path);
        defaults.note(*lt.trace);
        trace::StatsQuery query;
        query.by = opt.by;
        if (opt.range) {
          // Relative to this file's first event: ranks' clocks start at different times.
          const trace::TimeNs first = lt.trace->time_bounds().first;
          if (opt.range->begin) query.range_begin = trace::add_saturating(first, *opt.range->begin);
          if (opt.range->end) query.range_end = trace::add_saturating(first, *opt.range->end);
        }
        if (!opt.steps.empty()) {
          const auto w = trace::step_window(*lt.trace, opt.steps, opt.skip_first);
          if (!w) {
            steps_missing.push_back(lt.path);
            return;
          }
          query.range_begin = w->begin;
          query.range_end = w->end;
          report.steps_kept += w->steps;
        }
        // Built once for the accumulators of every choice.
        std::optional<trace::OperatorIndex> index;
        const trace::StatsGrouping& grouping = trace::stats_grouping(opt.by);
        if (grouping.operator_rows || grouping.inherit_counts)
          index = trace::OperatorIndex::build(*lt.trace);
        for (std::size_t i = 0; i < choices.size(); ++i) {
          query.categories = choices[i];
          // An empty list would mean "this trace's default": "every category" is meant.
          query.all_categories = choices[i].empty();
          accs[i].add(*lt.trace, query, index ? &*index : nullptr);
        }
        report.events_total += lt.trace->report.events_total;
        report.events_skipped += lt.trace->report.events_skipped;
        report.text_bytes += lt.trace->report.text_bytes;
        report.text_bytes_unread += lt.trace->report.text_bytes_unread;
        report.counted.add(trace::counted_coverage(*lt.trace));
        // NCCL kernels, read once for the summary and the waits across ranks.
        std::vector<trace::CollectiveInstance> instances = trace::collective_instances(*lt.trace);
        collectives.add(instances);
        trace::RankCollectives& rc = rank_collectives.emplace_back();
        rc.file = lt.path;
        rc.rank = trace::trace_rank(*lt.trace);
        rc.group = trace::trace_window_group(*lt.trace);
        rc.windowed = trace::trace_recorded_in_windows(*lt.trace);
        rc.host = trace::trace_host(*lt.trace);
        rc.instances = std::move(instances);
        // The waits over the same window as the table (--range, --steps).
        rc.window_begin = query.range_begin.value_or(INT64_MIN);
        rc.window_end = query.range_end.value_or(INT64_MAX);
        count_categories(*lt.trace, categories_seen);
        for (const trace::DeviceProperties& d : lt.trace->devices) {
          if (d.peak_bytes_per_s > 0 || !d.peak_flops.empty()) {
            report.has_device_peaks = true;
            const std::string source =
                concat(d.name.empty() ? std::string("device") : d.name, ": ",
                       d.peak_source.empty() ? std::string("trace") : d.peak_source);
            if (std::find(report.peak_sources.begin(), report.peak_sources.end(), source) ==
                report.peak_sources.end())
              report.peak_sources.push_back(source);
          }
        }
      });
  if (!ok) return kExitFailure;
  if (!steps_missing.empty()) {
    err << steps_error(opt, steps_missing);
    return kExitFailure;
  }
  std::size_t chosen = 0;
  if (opt.categories.empty()) {
    const std::vector<std::string> wanted = defaults.categories();
    for (std::size_t i = 0; i < choices.size(); ++i) {
      if (choices[i] == wanted) chosen = i;
    }
  }
  report.result = accs[chosen].finish();
  report.collectives = collectives.rows();
  std::size_t ranks_with_communicators = 0;
  for (const trace::RankCollectives& r : rank_collectives) {
    ranks_with_communicators +=
        std::any_of(r.instances.begin(), r.instances.end(),
                    [](const trace::CollectiveInstance& i) { return !i.communicator.empty(); });
  }
  if (ranks_with_communicators >= 2)
    report.collective_waits = trace::collective_waits(rank_collectives);
  if (report.result.rows.empty()) {
    err << "flopline stats: no slices match (categories: "
        << (report.result.all_categories
                ? std::string("all")
                : trace::terminal_safe(join(report.result.categories_used, ",")));
    if (opt.range) err << "; in the --range given";
    err << ")\n";
    const std::string present = categories_present(categories_seen);
    err << "  categories in the trace" << (traces_read > 1 ? "s" : "") << ": "
        << (present.empty() ? std::string("none (no slices)") : present) << "\n";
    return kExitFailure;
  }
  report.rows_total = report.result.rows.size();
  if (opt.top && *opt.top < report.result.rows.size()) {
    report.result.rows.resize(static_cast<std::size_t>(*opt.top));
  }
  start_output();
  switch (opt.format) {
    case StatsFormat::kTable:
      write_stats_table(report, out);
      break;
    case StatsFormat::kCsv:
      write_stats_csv(report, out);
      break;
    case StatsFormat::kJson:
      write_stats_json(report, out);
      break;
  }
  return output_complete(out, err, "stats") ? kExitOk : kExitFailure;
}

}  // namespace flopline::cli
