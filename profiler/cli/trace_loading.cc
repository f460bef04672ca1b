#include "trace_loading.h"

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <thread>

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

unsigned reading_threads(std::size_t files) {
  unsigned n = std::min(16u, std::max(1u, std::thread::hardware_concurrency()));
  if (const char* env = std::getenv("FLOPLINE_READ_THREADS"); env != nullptr) {
    char* end = nullptr;
    const unsigned long v = std::strtoul(env, &end, 10);
    if (end != env && *end == '\0' && v >= 1 && v <= 256) n = static_cast<unsigned>(v);
  }
  return static_cast<unsigned>(std::min<std::size_t>(n, std::max<std::size_t>(files, 1)));
}

namespace {

// Files parsed ahead by worker threads, handed out in order. A worker takes the next
// file only while fewer than `window` parsed files wait for their use: memory holds at
// most `window` traces beyond the one in use.
class ReadAhead {
 public:
  ReadAhead(const std::vector<std::string>& paths, unsigned threads)
      : paths_(paths), slots_(paths.size()), window_(threads) {
    for (unsigned t = 0; t < threads; ++t) workers_.emplace_back([this] { work(); });
  }
  ~ReadAhead() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    changed_.notify_all();
    for (std::thread& t : workers_) t.join();
  }
  // The file at `i` (taken in increasing order), parsed.
  trace::ReadResult take(std::size_t i) {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [&] { return slots_[i].has_value(); });
    trace::ReadResult r = std::move(*slots_[i]);
    slots_[i].reset();
    taken_ = i + 1;
    lock.unlock();
    changed_.notify_all();
    return r;
  }

 private:
  void work() {
    for (;;) {
      std::size_t i = 0;
      {
        std::unique_lock<std::mutex> lock(mu_);
        changed_.wait(lock,
                      [&] { return stop_ || next_ >= paths_.size() || next_ < taken_ + window_; });
        if (stop_ || next_ >= paths_.size()) return;
        i = next_++;
      }
      trace::ReadResult r = trace::read_chrome_trace_file(paths_[i]);
      {
        std::lock_guard<std::mutex> lock(mu_);
        slots_[i] = std::move(r);
      }
      changed_.notify_all();
    }
  }

  const std::vector<std::string>& paths_;
  std::vector<std::optional<trace::ReadResult>> slots_;
  const std::size_t window_;
  std::size_t next_ = 0;   // the next file a worker takes
  std::size_t taken_ = 0;  // files handed to the caller
  bool stop_ = false;
  std::mutex mu_;
  std::condition_variable changed_;
  std::vector<std::thread> workers_;
};

}  // namespace

bool for_each_trace(const std::vector<std::string>& paths, std::ostream& err,
                    const std::vector<bool>& skippable, std::vector<std::string>* left_out,
                    const std::function<void(LoadedTrace&)>& use) {
  return for_each_trace(paths, err, skippable, left_out, use, reading_threads(paths.size()));
}

bool for_each_trace(const std::vector<std::string>& paths, std::ostream& err,
                    const std::vector<bool>& skippable, std::vector<std::string>* left_out,
                    const std::function<void(LoadedTrace&)>& use, unsigned threads) {
  std::optional<ReadAhead> ahead;
  if (threads > 1 && paths.size() > 1) ahead.emplace(paths, threads);
  std::size_t read = 0;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const std::string& path = paths[i];
    trace::ReadResult r = ahead ? ahead->take(i) : trace::read_chrome_trace_file(path);
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
