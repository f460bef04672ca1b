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

// What the reader keeps of each event's "args" object.
enum class ArgsMode : std::uint8_t {
  // The text of every args object, in memory (Trace::args). What `flopline stats`,
  // merging and writing need.
  kKeep,
  // Only where each args object lies in the JSON text (ArgStore::add_location: 8
  // bytes per event instead of the text, ~130 bytes for a Kineto kernel); the viewer
  // reads one back when it is shown (args_text_from_source below). Args of events that
  // carry flops or bytes are still kept as text: analysis reads their "precision".
  kOnDemand,
};

struct ReadOptions {
  ArgsMode args = ArgsMode::kKeep;

  // The most text read_chrome_trace_file takes from a stream (a pipe, a device) or
  // inflates from a .gz; past it, what was read is used with a warning. 0: half of
  // this machine's memory. Plain files are mapped, not copied, and need no limit.
  std::uint64_t max_text_bytes = 0;

  // Called now and then from the reading thread with bytes consumed / total and
  // events so far. Return false to cancel (the read then fails with "cancelled").
  std::function<bool(std::uint64_t bytes_done, std::uint64_t bytes_total, std::uint64_t events)>
      progress;

  // Called while a gzip file is inflated, before parsing (and `progress`) starts: compressed
  // bytes consumed / compressed size, every few MB and once at the end. Return false to
  // cancel (the read then fails with "cancelled").
  std::function<bool(std::uint64_t compressed_done, std::uint64_t compressed_total)>
      inflate_progress;
};

struct ReadResult {
  bool ok() const { return !error.has_value(); }
  Trace trace;                     // valid when ok(); also what was loaded before a fatal error
  std::optional<ReadError> error;  // set when the input is not a readable trace
};

// The args text that ArgsMode::kKeep would have stored, from the raw text of an args
// object as it appears in the file (at an ArgStore location): the text as written, or
// strict JSON where it was lax (nan/inf -> null, trailing commas dropped, raw control
// bytes escaped). Locations are only made for events without flops/bytes, whose text
// kKeep stores unchanged otherwise. "{}" when `raw` is not a JSON object.
std::string args_text_from_source(std::string_view raw);

// Reads a file; gzip is detected by its magic bytes (".json.gz" or not). Any path: a
// directory is an error, a pipe, /dev/stdin or a device is read as a stream up to
// max_text_bytes, a named pipe without a writer is given up after 10 s. A damaged
// .gz (cut off, corrupt, a bad member after good ones) gives the text inflated before
// the damage, with a warning saying where. A plain file that shrinks while it is read
// (it is mapped) is read up to its new end and reported; profiler/src/trace/
// mapped_file.h describes the SIGBUS handler that makes this possible. Running out of
// memory is an error naming the file. docs/TRACE_FORMAT.md has the rules.
ReadResult read_chrome_trace_file(const std::string& path, const ReadOptions& opt = {});
// Reads JSON text already in memory. `name` is used in error messages.
ReadResult read_chrome_trace_text(std::string_view text, std::string_view name,
                                  const ReadOptions& opt = {});

}  // namespace flopline::trace
