#include "trace_loading.h"

#include "flopline/trace/chrome_reader.h"

namespace flopline::cli {

std::string skip_summary(const trace::TraceReport& report) {
  if (report.events_skipped == 0) return {};
  std::string s = std::to_string(report.events_skipped) + " of " +
                  std::to_string(report.events_total) + " events skipped";
  if (!report.skip_reasons.empty()) {
    s += " (";
    bool first = true;
    for (const auto& [reason, n] : report.skip_reasons) {
      if (!first) s += "; ";
      first = false;
      s += reason + ": " + std::to_string(n);
    }
    s += ")";
  }
  return s;
}

std::optional<std::vector<LoadedTrace>> load_traces(const std::vector<std::string>& paths,
                                                    std::ostream& err) {
  std::vector<LoadedTrace> out;
  out.reserve(paths.size());
  for (const std::string& path : paths) {
    trace::ReadResult r = trace::read_chrome_trace_file(path);
    if (!r.ok()) {
      // The message carries the file name, position and reason; nothing to add.
      err << "flopline: " << r.error->message() << "\n";
      return std::nullopt;
    }
    for (const std::string& w : r.trace.report.warnings) {
      err << "flopline: " << path << ": warning: " << w << "\n";
    }
    if (const std::string s = skip_summary(r.trace.report); !s.empty()) {
      err << "flopline: " << path << ": " << s << "\n";
    }
    out.push_back({path, std::make_unique<trace::Trace>(std::move(r.trace))});
  }
  return out;
}

}  // namespace flopline::cli
