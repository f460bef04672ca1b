// Loading trace files for the commands, with the reporting every command shares:
// a file that is not a readable trace is an error (ReadError::message(): file,
// line:column, byte offset, reason); a partly readable file loads, and what the
// reader skipped or warned about is said on stderr.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "flopline/trace/model.h"

namespace flopline::cli {

struct LoadedTrace {
  std::string path;
  // Heap-held so the Trace never moves (views into its string table stay valid).
  std::unique_ptr<trace::Trace> trace;
};

// One line: "N events, K skipped (reason: n; reason: n)". Empty when nothing was skipped.
std::string skip_summary(const trace::TraceReport& report);

// Reads every path in order. Warnings and skip summaries go to `err` prefixed by
// "flopline: PATH: ". Stops at the first unreadable file: prints "flopline: " +
// ReadError::message() and returns nullopt; except that a file whose `skippable` entry
// is true (found in a directory, not named) is left out with "flopline: left out: " +
// the message, and its path added to `left_out`. Nothing read at all is a failure.
// The same, one file at a time: `use` gets each trace read, in the order of `paths` and
// on the calling thread, and the trace is released when it returns. Files are parsed
// ahead on reading_threads() threads, each holding at most one trace: memory holds at
// most that many traces plus the one in use, never all of them. False where load_traces
// gives nullopt; what is said on `err`, and which files reach `use`, do not depend on
// the number of threads.
bool for_each_trace(const std::vector<std::string>& paths, std::ostream& err,
                    const std::vector<bool>& skippable, std::vector<std::string>* left_out,
                    const std::function<void(LoadedTrace&)>& use);
// The same with `threads` reading threads (0 or 1: read on the calling thread).
bool for_each_trace(const std::vector<std::string>& paths, std::ostream& err,
                    const std::vector<bool>& skippable, std::vector<std::string>* left_out,
                    const std::function<void(LoadedTrace&)>& use, unsigned threads);

// Threads that parse trace files ahead of their use: FLOPLINE_READ_THREADS when set to
// a number from 1 to 256, else the machine's cores, at most 16; never more than `files`.
unsigned reading_threads(std::size_t files);

std::optional<std::vector<LoadedTrace>> load_traces(const std::vector<std::string>& paths,
                                                    std::ostream& err,
                                                    const std::vector<bool>& skippable = {},
                                                    std::vector<std::string>* left_out = nullptr);

}  // namespace flopline::cli
