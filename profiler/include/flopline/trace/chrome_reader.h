// Reads Chrome Trace Event Format JSON (and Kineto/PyTorch profiler traces) into a
// Trace. Tolerant like chrome://tracing: both top-level forms, a missing final "]",
// trailing commas, string pid/tid/ts, nan/inf, invalid UTF-8, huge strings, deep
// args, every phase. Exact: microsecond text is converted to integer nanoseconds
// without passing through double. Honest: anything skipped is counted with a reason
// in Trace::report, and a file that is not a trace is an error with its position.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "flopline/trace/model.h"

namespace flopline::trace {

struct ReadError {
  std::string file;
  std::uint64_t offset = 0;  // byte offset in the (decompressed) JSON text
  std::uint64_t line = 0;    // 1-based
  std::uint64_t column = 0;  // 1-based, in bytes
  std::string reason;
  // "FILE:LINE:COLUMN (byte OFFSET): REASON", or "FILE: REASON" when no position.
  std::string message() const;
};

struct ReadOptions {
  // Called now and then from the reading thread with bytes consumed / total and
  // events so far. Return false to cancel (the read then fails with "cancelled").
  std::function<bool(std::uint64_t bytes_done, std::uint64_t bytes_total,
                     std::uint64_t events)>
      progress;
};

struct ReadResult {
  bool ok() const { return !error.has_value(); }
  Trace trace;                     // valid when ok(); also what was loaded before a fatal error
  std::optional<ReadError> error;  // set when the input is not a readable trace
};

// Reads a file; gzip is detected by its magic bytes (".json.gz" or not).
ReadResult read_chrome_trace_file(const std::string& path, const ReadOptions& opt = {});
// Reads JSON text already in memory. `name` is used in error messages.
ReadResult read_chrome_trace_text(std::string_view text, std::string_view name,
                                  const ReadOptions& opt = {});

}  // namespace flopline::trace
