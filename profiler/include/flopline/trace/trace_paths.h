// Command-line trace arguments: a directory stands for every trace file in it (the files
// of one `flopline run`: ranks, workers), sorted by name.
#pragma once

#include <string>
#include <vector>

namespace flopline::trace {

// True for names that look like trace files: *.json, *.json.gz, *.pt.trace.json(.gz).
bool looks_like_trace_file(const std::string& name);

// Each path as given, except that a directory becomes the trace files directly in it
// (sorted). A directory with none is an error: `error` names it, and the result is empty.
std::vector<std::string> expand_trace_paths(const std::vector<std::string>& paths,
                                            std::string* error);

}  // namespace flopline::trace
