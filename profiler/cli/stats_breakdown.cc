#include "stats_breakdown.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <string>
#include <vector>

#include "flopline/trace/collective_waits.h"
#include "flopline/trace/device_peaks.h"
#include "flopline/trace/name_text.h"
#include "flopline/trace/operator_time.h"
#include "flopline/trace/stats_csv.h"
#include "flopline/trace/step_window.h"
#include "flopline/trace/time_breakdown.h"
#include "output_check.h"
#include "stats_output.h"
#include "text_table.h"
#include "trace_loading.h"

namespace flopline::cli {
namespace {

struct BreakdownRow {
  std::string file;
  std::optional<std::int64_t> rank;
  trace::DeviceBreakdown b;
  std::optional<std::string> step;  // --per-step: the step's name
};

double pct(std::int64_t part, std::int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

std::string fixed1(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// Utilization: FLOPs' time at peak over a span (%): the counted (hardware) FLOPs'
// `peak_time_ns` or the model's `model_peak_time_ns`, over the window or the GPU's busy
// time (the window less idle).
std::optional<double> utilization(const std::optional<double>& peak_time_ns, std::int64_t span_ns) {
  if (!peak_time_ns || span_ns <= 0) return std::nullopt;
  return 100.0 * *peak_time_ns / static_cast<double>(span_ns);
}

std::string tflops_text(const std::optional<double>& flops, std::int64_t window_ns);

void write_table(const std::vector<BreakdownRow>& rows, bool per_step, std::ostream& out) {
  out << "Time breakdown per rank and GPU" << (per_step ? " and step" : "")
      << " (% of the window; communication and memory: the\n"
         "part not under computation; docs/STATS.md, \"Time breakdown\"):\n";
  std::vector<std::string> headers = {
      "Rank",           "GPU",           "Window (ns)",     "Compute %",
      "Comm %",         "Memory %",      "Idle %",          "Idle host %",
      "Idle queued %",  "Comm hidden %", "Counted TFLOP/s", "% of peak",
      "Busy % of peak", "Model TFLOP/s", "Model % of peak", "File"};
  std::vector<std::vector<std::string>> cells;
  for (const BreakdownRow& r : rows) {
    const trace::DeviceBreakdown& b = r.b;
    const std::int64_t w = b.window_ns();
    const auto u = utilization(b.peak_time_ns, w);
    const auto busy_u = utilization(b.peak_time_ns, w - b.idle_ns);
    const auto model_u = utilization(b.model_peak_time_ns, w);
    cells.push_back({r.rank ? std::to_string(*r.rank) : std::string("-"), std::to_string(b.device),
                     with_thousands(w), fixed1(pct(b.compute_ns, w)),
                     fixed1(pct(b.communication_ns, w)), fixed1(pct(b.memory_ns, w)),
                     fixed1(pct(b.idle_ns, w)), fixed1(pct(b.idle_host_ns, w)),
                     fixed1(pct(b.idle_queued_ns, w)),
                     b.communication_total_ns > 0
                         ? fixed1(pct(b.communication_hidden_ns, b.communication_total_ns))
                         : std::string("-"),
                     tflops_text(b.flops, w), u ? fixed1(*u) : std::string("-"),
                     busy_u ? fixed1(*busy_u) : std::string("-"), tflops_text(b.model_flops, w),
                     model_u ? fixed1(*model_u) : std::string("-"), trace::terminal_safe(r.file)});
    if (per_step) {
      cells.back().insert(cells.back().begin() + 2,
                          trace::terminal_safe(shorten_name(r.step.value_or("-"), 40)));
    }
  }
  if (per_step) headers.insert(headers.begin() + 2, "Step");
  std::vector<TextColumn> columns;
  for (const std::string& h : headers) columns.push_back({h, h == "Step"});
  write_text_table(columns, cells, out);
  bool no_peak = false;
  for (const BreakdownRow& r : rows) no_peak = no_peak || (r.b.flops && !r.b.peak_time_ns);
  if (no_peak) {
    out << "% of peak \"-\" with counted FLOPs: some kernel's precision has no peak for its "
           "device\n";
  }
  bool no_model_peak = false;
  for (const BreakdownRow& r : rows)
    no_model_peak = no_model_peak || (r.b.model_flops && !r.b.model_peak_time_ns);
  if (no_model_peak) {
    out << "Model % of peak \"-\" with model FLOPs: some operator's precision has no peak "
           "for its device\n";
  }
}

std::string tflops_text(const std::optional<double>& flops, std::int64_t window_ns) {
  if (!flops || window_ns <= 0) return "-";
  return fixed1(*flops / static_cast<double>(window_ns) / 1e3);
}

std::string number_text(double v) {
  std::string s;
  trace::append_stats_number(s, v);
  return s;
}

void write_csv(const std::vector<BreakdownRow>& rows, std::ostream& out) {
  out << "file,rank,device,window_begin_ns,window_ns,compute_ns,communication_ns,memory_ns,"
         "idle_ns,idle_host_ns,idle_queued_ns,idle_other_ns,communication_total_ns,"
         "communication_hidden_ns,kernels,flops,peak_time_ns,step,model_flops,"
         "model_peak_time_ns\n";
  for (const BreakdownRow& r : rows) {
    const trace::DeviceBreakdown& b = r.b;
    out << trace::csv_field(r.file) << "," << (r.rank ? std::to_string(*r.rank) : std::string())
        << "," << b.device << "," << b.window_begin << "," << b.window_ns() << "," << b.compute_ns
        << "," << b.communication_ns << "," << b.memory_ns << "," << b.idle_ns << ","
        << b.idle_host_ns << "," << b.idle_queued_ns << "," << b.idle_other_ns << ","
        << b.communication_total_ns << "," << b.communication_hidden_ns << "," << b.kernels << ","
        << (b.flops ? number_text(*b.flops) : std::string()) << ","
        << (b.peak_time_ns ? number_text(*b.peak_time_ns) : std::string()) << ","
        << (r.step ? trace::csv_field(*r.step) : std::string()) << ","
        << (b.model_flops ? number_text(*b.model_flops) : std::string()) << ","
        << (b.model_peak_time_ns ? number_text(*b.model_peak_time_ns) : std::string()) << "\n";
  }
}

void write_json(const std::vector<BreakdownRow>& rows, std::ostream& out) {
  using Json = nlohmann::ordered_json;
  Json list = Json::array();
  for (const BreakdownRow& r : rows) {
    const trace::DeviceBreakdown& b = r.b;
    list.push_back({{"file", r.file},
                    {"rank", r.rank ? Json(*r.rank) : Json(nullptr)},
                    {"device", b.device},
                    {"window_begin_ns", b.window_begin},
                    {"window_ns", b.window_ns()},
                    {"compute_ns", b.compute_ns},
                    {"communication_ns", b.communication_ns},
                    {"memory_ns", b.memory_ns},
                    {"idle_ns", b.idle_ns},
                    {"idle_host_ns", b.idle_host_ns},
                    {"idle_queued_ns", b.idle_queued_ns},
                    {"idle_other_ns", b.idle_other_ns},
                    {"communication_total_ns", b.communication_total_ns},
                    {"communication_hidden_ns", b.communication_hidden_ns},
                    {"kernels", b.kernels},
                    {"flops", b.flops ? Json(*b.flops) : Json(nullptr)},
                    {"peak_time_ns", b.peak_time_ns ? Json(*b.peak_time_ns) : Json(nullptr)},
                    {"step", r.step ? Json(*r.step) : Json(nullptr)},
                    {"model_flops", b.model_flops ? Json(*b.model_flops) : Json(nullptr)},
                    {"model_peak_time_ns",
                     b.model_peak_time_ns ? Json(*b.model_peak_time_ns) : Json(nullptr)}});
  }
  out << Json{{"report", "breakdown"}, {"devices", std::move(list)}}.dump(
             -1, ' ', false, Json::error_handler_t::replace)
      << "\n";
}

}  // namespace

int run_breakdown_report(const StatsOptions& opt, const trace::TraceFiles& found, std::ostream& out,
                         std::ostream& err) {
  std::vector<BreakdownRow> rows;
  std::vector<std::string> steps_missing;  // files with too few steps for --steps
  const bool ok =
      for_each_trace(found.paths, err, found.from_directory, nullptr, [&](LoadedTrace& lt) {
        trace::fill_missing_peaks(*lt.trace);
        std::optional<trace::TimeNs> begin, end;
        if (opt.range) {
          const trace::TimeNs first = lt.trace->time_bounds().first;
          if (opt.range->begin) begin = trace::add_saturating(first, *opt.range->begin);
          if (opt.range->end) end = trace::add_saturating(first, *opt.range->end);
        }
        const auto rank = trace::trace_rank(*lt.trace);
        if (opt.per_step) {
          const std::vector<trace::Step> steps =
              trace::steps_of(*lt.trace, opt.steps, opt.skip_first);
          if (steps.empty()) steps_missing.push_back(lt.path);
          // One operator index for every step's model FLOPs.
          const trace::OperatorIndex operators = trace::OperatorIndex::build(*lt.trace);
          for (const trace::Step& s : steps) {
            for (const trace::DeviceBreakdown& b :
                 trace::time_breakdown(*lt.trace, s.begin, s.end, &operators))
              rows.push_back(BreakdownRow{lt.path, rank, b, s.name});
          }
          return;
        }
        if (!opt.steps.empty()) {
          const auto w = trace::step_window(*lt.trace, opt.steps, opt.skip_first);
          if (!w) {
            steps_missing.push_back(lt.path);
            return;
          }
          begin = w->begin;
          end = w->end;
        }
        for (const trace::DeviceBreakdown& b : trace::time_breakdown(*lt.trace, begin, end))
          rows.push_back(BreakdownRow{lt.path, rank, b, std::nullopt});
      });
  if (!ok) return kExitFailure;
  if (!steps_missing.empty()) {
    err << steps_error(opt, steps_missing);
    return kExitFailure;
  }
  if (rows.empty()) {
    err << "flopline stats: no GPU work (kernels, copies, sets on a GPU's streams) in the "
           "trace"
        << (found.paths.size() > 1 ? "s" : "") << "\n";
    return kExitFailure;
  }
  start_output();
  switch (opt.format) {
    case StatsFormat::kTable:
      write_table(rows, opt.per_step, out);
      break;
    case StatsFormat::kCsv:
      write_csv(rows, out);
      break;
    case StatsFormat::kJson:
      write_json(rows, out);
      break;
  }
  return output_complete(out, err, "stats") ? kExitOk : kExitFailure;
}

}  // namespace flopline::cli
