// Command-line trace arguments: a directory stands for every trace file in it (the files
// of one `flopline run`: ranks, workers), sorted by name.
#pragma once

#include <string>
#include <vector>

namespace flopline::trace {

// True for names that look like trace files: *.json, *.json.gz, *.pt.trace.json(.gz).
bool looks_like_trace_file(const std::string& name);

// The files that command-line trace arguments stand for.
struct TraceFiles {
  std::vector<std::string> paths;
  // Parallel to `paths`: found in a directory (a summary over a run's files goes on
  // without one that is not a trace) rather than named.
  std::vector<bool> from_directory;
  // One per file reached twice (a symbolic or hard link beside its target, a directory
  // and a file in it): "A is the same file as B: read once".
  std::vector<std::string> notes;
};

// Each path as given, except that a directory becomes the trace files directly in it
// (sorted), and a file reached a second time (the same device and inode) is left out
// with a note. A directory with no trace file is an error: `error` names it, and the
// result is empty.
TraceFiles find_trace_files(const std::vector<std::string>& paths, std::string* error);

// find_trace_files' paths alone.
std::vector<std::string> expand_trace_paths(const std::vector<std::string>& paths,
                                            std::string* error);

}  // namespace flopline::trace
