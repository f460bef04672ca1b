#include "trace_loading.h"

#include "flopline/trace/chrome_reader.h"
#include "flopline/trace/name_text.h"

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

bool for_each_trace(const std::vector<std::string>& paths, std::ostream& err,
                    const std::vector<bool>& skippable, std::vector<std::string>* left_out,
                    const std::function<void(LoadedTrace&)>& use) {
  std::size_t read = 0;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const std::string& path = paths[i];
    trace::ReadResult r = trace::read_chrome_trace_file(path);
    if (!r.ok()) {
      // The message carries the file name, position and reason; nothing to add.
      if (i < skippable.size() && skippable[i]) {
        err << "flopline: left out: " << trace::terminal_safe(r.error->message()) << "\n";
        if (left_out) left_out->push_back(path);
        continue;
      }
      err << "flopline: " << trace::terminal_safe(r.error->message()) << "\n";
      return false;
    }
    for (const std::string& w : r.trace.report.warnings) {
      err << "flopline: " << trace::terminal_safe(path) << ": warning: " << w << "\n";
    }
    if (const std::string s = skip_summary(r.trace.report); !s.empty()) {
      err << "flopline: " << trace::terminal_safe(path) << ": " << s << "\n";
    }
    LoadedTrace lt{path, std::make_unique<trace::Trace>(std::move(r.trace))};
    ++read;
    use(lt);
  }
  if (read == 0 && !paths.empty()) {
    err << "flopline: no file could be read as a trace\n";
    return false;
  }
  return true;
}

std::optional<std::vector<LoadedTrace>> load_traces(const std::vector<std::string>& paths,
                                                    std::ostream& err,
                                                    const std::vector<bool>& skippable,
                                                    std::vector<std::string>* left_out) {
  std::vector<LoadedTrace> out;
  out.reserve(paths.size());
  if (!for_each_trace(paths, err, skippable, left_out,
                      [&out](LoadedTrace& lt) { out.push_back(std::move(lt)); })) {
    return std::nullopt;
  }
  return out;
}

}  // namespace flopline::cli
