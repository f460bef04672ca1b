// Writes the trace while the program runs (FLOPLINE_FLUSH_INTERVAL, `flopline run
// --flush-interval`), with memory bounded by what is still open: a thread that, every
// interval or sooner when many records have arrived, takes CUPTI's records of finished
// work out of the capture (CuptiSource::take()), hands them to a StreamingDecoder
// (capture/streaming_decoder.h) and appends the events that became final to the output
// file (trace/incremental_trace.h); their records are released. A process killed with
// SIGKILL keeps everything up to the last append. The launching threads never wait for
// it. At the end of the run finish() appends the remaining events and then the metadata,
// finishing the file in place; or, for an ondemand run, a file per capture window,
// each finished while the program runs on. docs/CAPTURE.md, "While the program runs".
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "flopline/capture/capture_config.h"
#include "trace_output.h"

namespace flopline::cupti {

struct PeriodicWriterOptions {
  std::int64_t interval_ns = 0;
  // The output path, asked once, at the first append (the process has done GPU work).
  std::function<std::string()> path;
  // Told after each append: the path, the events in the file, how far they reach (ns
  // after the first event).
  std::function<void(const std::string&, std::uint64_t, std::int64_t)> appended;
  // The activity kinds recorded: which records a launch call waits for.
  std::uint32_t kinds = capture::kDefaultKinds;
  // `--profiler-steps`: the glob of step ranges given ProfilerStep#N slices ("" none).
  std::string profiler_steps;
  // One file per capture window (an ondemand run, capture/window_files.h) instead of one
  // file for the process: window_path(N) names window N's file, and each file is
  // finished once its window's events are all in, with info() as its metadata, and told
  // to `finished`. finish() then reports nothing more.
  bool window_files = false;
  std::function<std::string(std::uint32_t)> window_path;
  std::function<std::vector<std::pair<std::string, std::string>>()> info;
  std::function<void(const CaptureWriteResult&)> finished;
};

class PeriodicWriter {
 public:
  static PeriodicWriter& instance();
  void start(PeriodicWriterOptions options);
  // Whether start() began streaming (the final write is then finish()).
  bool streaming() const;
  // Ends the periodic appends: waits for one in progress, then no other starts. The
  // decoder and the file stay for finish().
  void stop();
  // Appends now what has ended, after a forced flush (cudaDeviceReset, a program's
  // request): every record of finished work is in. `create` writes the file even when
  // the process has done no GPU work yet.
  void append_now(bool create);
  // The end of the run, after the capture stopped: appends the remaining events, then
  // the metadata (`info` as write_capture() takes it), finishing the file. Nothing is
  // written (result.ok false, no error) when the process did no GPU work and not
  // `always`.
  CaptureWriteResult finish(const std::vector<std::pair<std::string, std::string>>& info,
                            bool always);
  // The file the appends went to ("" when none was written).
  std::string path() const;
  // With one file per window: the file window `index` is written to (claimed in the run's
  // manifest, as its first append would); "" otherwise.
  std::string window_file_path(std::uint32_t index) const;
  // Whether this thread is inside an append (it holds the append lock): a fatal signal
  // taken here cannot write the trace, since the write waits for that lock.
  static bool appending_on_this_thread();

  PeriodicWriter(const PeriodicWriter&) = delete;
  PeriodicWriter& operator=(const PeriodicWriter&) = delete;
  struct Impl;

 private:
  PeriodicWriter();
  ~PeriodicWriter() = delete;  // used at exit and in signal handlers
  Impl* impl_;
};

}  // namespace flopline::cupti
