// A trace file written while the program runs, so a process killed at any moment
// (SIGKILL, the OOM killer, a job's time limit) leaves what was flushed before it.
//
// The file is Chrome's array form: "[" and then one event per line, never closed (Chrome,
// Perfetto and flopline's reader all open an array without its "]"). Each append adds
// the events that ended since the last one, with one write(); a path ending in .gz gets
// one gzip member per append, and members concatenate into one valid gzip stream. The
// file is readable after every append. At a normal end the capture replaces it with the
// complete trace (object form, device properties and all).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "flopline/trace/model.h"

namespace flopline::trace {

class IncrementalTraceFile {
 public:
  explicit IncrementalTraceFile(std::string path);
  ~IncrementalTraceFile();
  IncrementalTraceFile(const IncrementalTraceFile&) = delete;
  IncrementalTraceFile& operator=(const IncrementalTraceFile&) = delete;

  // Appends the events of `trace` that ended after the last append's `upto` and at or
  // before this one's (ns, the trace's clock), leaving out slices `keep` refuses (ranges
  // still open). The first append creates the file. False with `error` set when the
  // file cannot be written; nothing is lost in `trace`.
  bool append(const Trace& trace, TimeNs upto, const std::function<bool(const Slice&)>& keep,
              std::string* error);

  const std::string& path() const { return path_; }
  bool started() const { return fd_ >= 0; }
  TimeNs watermark() const { return upto_; }        // events up to here are in the file
  std::uint64_t events() const { return events_; }  // events appended so far

 private:
  std::string path_;
  bool gzip_ = false;
  int fd_ = -1;
  TimeNs upto_ = INT64_MIN;
  std::uint64_t events_ = 0;
};

}  // namespace flopline::trace
