// What the GPU test binaries share: where their traces go, `flopline run` with the trace
// files it named, and gtest-aware loading and reporting.
#pragma once

#include <string>
#include <vector>

#include "trace_query.h"

namespace flopline::gputest {

// $FLOPLINE_GPU_TEST_OUT, or `fallback`; created if missing.
std::string gpu_test_out_dir(const std::string& fallback);

// `flopline run -o BASE.json [OPTIONS] -- COMMAND...`, with the trace files it named.
struct RunResult {
  CommandResult result;
  std::vector<std::string> files;
};
// Removes BASE.json first (an earlier run's file would look like this one's) and keeps
// the run's output in BASE.log for people reading a failed run.
RunResult run_under_flopline(const std::string& flopline_exe, const std::string& base,
                             const std::vector<std::string>& command,
                             const std::vector<std::string>& env = {},
                             const std::vector<std::string>& options = {});

// The trace at path; a failure to read is a test failure (and an empty view).
TraceView must_load(const std::string& path);

// "exit N", stdout and stderr of a run, for failure messages.
std::string describe(const RunResult& r);

}  // namespace flopline::gputest
