// A trace file written while the program runs, so a process killed at any moment
// (SIGKILL, the OOM killer, a job's time limit) leaves what was flushed before it.
//
// The file is Chrome's array form while it grows: a first line of "[" and spaces, then
// one event per line, never closed (Chrome, Perfetto and flopline's reader all open an
// array without its "]"). Events are separated, never followed, by commas, so the list
// is valid JSON up to its last line. Each append adds its events with one write(); a path
// ending in .gz gets one gzip member per append, and members concatenate into one valid
// gzip stream. The file is readable after every append.
//
// finish() ends it in place: the first line becomes {"traceEvents":[ (the same number
// of bytes; in a .gz file the first member is stored, not compressed, so it keeps its
// length too), and "]" with the members around the events (device properties,
// baseTimeNanoseconds, the "flopline" metadata) closes it. The finished file is the
// object form write_chrome_trace() writes, nothing appended is written again.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "flopline/trace/model.h"

namespace flopline::trace {

class IncrementalTraceFile {
 public:
  // Event times are written relative to `time_base` (ns; 0: absolute), which the
  // finished file gives as its baseTimeNanoseconds.
  explicit IncrementalTraceFile(std::string path, TimeNs time_base = 0);
  ~IncrementalTraceFile();
  IncrementalTraceFile(const IncrementalTraceFile&) = delete;
  IncrementalTraceFile& operator=(const IncrementalTraceFile&) = delete;

  // Appends the events of `trace` that ended after the last append's `upto` and at or
  // before this one's (ns, the trace's clock), leaving out slices `keep` refuses (ranges
  // still open). The first append creates the file. False with `error` set when the
  // file cannot be written; nothing is lost in `trace`.
  bool append(const Trace& trace, TimeNs upto, const std::function<bool(const Slice&)>& keep,
              std::string* error);
  // Appends every event of `trace`: one append of a streaming capture, whose trace holds
  // only the events it writes (streaming_decoder.h).
  bool append_all(const Trace& trace, std::string* error);
  // Ends the file as described above, with `meta`'s devices, metadata and top-level
  // members (its events are not written: append them first). A file not started yet is
  // created holding no event. No append may follow.
  bool finish(const Trace& meta, std::string* error);

  const std::string& path() const { return path_; }
  bool started() const { return fd_ >= 0; }
  bool finished() const { return finished_; }
  TimeNs watermark() const { return upto_; }        // events up to here are in the file
  std::uint64_t events() const { return events_; }  // events appended so far
  std::uint64_t bytes() const { return bytes_; }    // uncompressed JSON written so far

 private:
  bool write_events(std::string& lines, std::uint64_t n, std::string* error);
  bool start(std::string* error);
  bool write_text(const std::string& text, std::string* error);

  std::string path_;
  TimeNs time_base_ = 0;
  bool gzip_ = false;
  int fd_ = -1;
  bool finished_ = false;
  bool wrote_lines_ = false;  // event lines follow the first line
  TimeNs upto_ = INT64_MIN;
  std::uint64_t events_ = 0;
  std::uint64_t bytes_ = 0;
};

}  // namespace flopline::trace
