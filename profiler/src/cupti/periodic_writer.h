// Writes the trace while the program runs (FLOPLINE_FLUSH_INTERVAL, `flopline run
// --flush-interval`): a thread that, every interval or sooner when many records have
// arrived, takes CUPTI's records of finished work, decodes what was captured so far, and
// appends the events that ended to the output file (trace/incremental_trace.h), so a
// process killed with SIGKILL keeps everything up to the last append. The launching
// threads never wait for it; the final write at a normal end replaces the file with the
// complete trace. docs/CAPTURE.md.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace flopline::cupti {

struct PeriodicWriterOptions {
  std::int64_t interval_ns = 0;
  // The output path, asked once, at the first append (the process has done GPU work).
  std::function<std::string()> path;
  // Told after each append: the path, the events in the file, how far they reach (ns
  // after the first event).
  std::function<void(const std::string&, std::uint64_t, std::int64_t)> appended;
};

class PeriodicWriter {
 public:
  static PeriodicWriter& instance();
  void start(PeriodicWriterOptions options);
  // Ends the appends: waits for one in progress, then no other starts. After it the
  // final write may replace the file.
  void stop();
  // The file the appends went to ("" when none was written).
  std::string path() const;

  PeriodicWriter(const PeriodicWriter&) = delete;
  PeriodicWriter& operator=(const PeriodicWriter&) = delete;
  struct Impl;

 private:
  PeriodicWriter();
  ~PeriodicWriter() = delete;  // used at exit and in signal handlers
  Impl* impl_;
};

}  // namespace flopline::cupti
