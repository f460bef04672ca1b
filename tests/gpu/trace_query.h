// Small helpers for the GPU tests: run a command, read a trace, and look at its slices
// and flows by category and name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "flopline/trace/model.h"

namespace flopline::gputest {

struct CommandResult {
  int exit_code = -1;  // 128 + N when signal N ended it
  std::string out;
  std::string err;
};

// Runs argv (no shell; argv[0] looked up on PATH) with `env` added to this process's environment,
// capturing both streams.
CommandResult run_command(const std::vector<std::string>& argv,
                          const std::vector<std::string>& env = {});

struct SliceView {
  std::string name;
  std::string cat;
  trace::TimeNs start = 0;
  trace::TimeNs end = 0;
  std::int64_t pid = 0;
  std::int64_t tid = 0;
  std::string args;  // JSON object text
  trace::SliceMetrics metrics;
  trace::SliceRef ref;
};

struct FlowView {
  SliceView from;
  SliceView to;
};

struct TraceView {
  trace::Trace trace;
  std::vector<SliceView> slices;
  std::vector<FlowView> flows;  // joined flows only
  std::uint64_t unjoined_flows = 0;
  std::unordered_map<std::uint64_t, std::size_t> flow_by_end;  // slice key -> flows index

  std::vector<SliceView> by_cat(const std::string& cat) const;
  // Slices of `cat` whose name contains `part`.
  std::vector<SliceView> named(const std::string& cat, const std::string& part) const;
  // The flow whose end is this slice, if any.
  const FlowView* flow_to(const SliceView& s) const;
  // GPU slices of `cat` whose launch call (the start of their flow) lies inside the CPU
  // slice `range` on its thread: the work an NVTX range launched.
  std::vector<SliceView> launched_in(const SliceView& range,
                                     const std::string& cat = "kernel") const;
};

// Reads a trace file; a failure to read is returned as nullopt with `error` set.
std::optional<TraceView> load_trace(const std::string& path, std::string* error);

std::optional<double> arg_number(const SliceView& s, const std::string& key);

// Trace files written by a run: the lines "flopline: trace: PATH" of its output.
std::vector<std::string> traces_named_in(const std::string& run_output);

}  // namespace flopline::gputest
