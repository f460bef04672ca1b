// `flopline run [-o PATH] [--kinds LIST] [--max-memory-mb N] [--capture-range=...] [--top N]
//  [--no-summary] [--] CMD ARGS...`: runs CMD with flopline's injection library in its environment,
// waits for it, prints the top operators and kernels by GPU time with TFLOP/s and GB/s,
// names the trace files written, and exits with CMD's exit code (128 + N when a signal
// N ended it). docs/CAPTURE.md documents it.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli_parse.h"
#include "flopline/capture/capture_config.h"

namespace flopline::cli {

inline constexpr int kExitCommandNotFound = 127;
inline constexpr int kExitCommandNotExecutable = 126;

struct RunOptions {
  // -o, --kinds, --max-memory-mb, --counters, --capture-range...: the capture options as
  // given, by option (capture_config.h's table; "" = not given), checked together as the
  // injection library reads them.
  capture::CaptureOptionValues capture;
  std::uint64_t top = 10;
  bool summary = true;
  bool help = false;
  std::vector<std::string> command;  // CMD ARGS...
};

// Options end at "--" or at the first argument that is not an option (the command).
Parsed<RunOptions> parse_run_args(std::span<const std::string> args);
std::string run_usage();
// `flopline launch`: flopline run's options with --capture-range=ondemand (another
// capture range is refused): recording waits for `flopline start` (control_command.h).
Parsed<RunOptions> parse_launch_args(std::span<const std::string> args);
std::string launch_usage();

// What the child's environment gets (see docs/CAPTURE.md).
struct RunEnvironment {
  std::string inject_library;  // absolute path of libflopline_inject.so
  // Every capture variable, by option, unset when "": the options as given (-o made
  // absolute) and the run's own (FLOPLINE_MANIFEST, FLOPLINE_RUN_ID, ...).
  capture::CaptureOptionValues values;
};
// The child's capture options as the command line gave them (-o as given: run_recorded
// makes it absolute and adds the library and the run's own variables).
RunEnvironment capture_environment(const RunOptions& opt);
// `base` is "NAME=VALUE" entries (environ); returns it with flopline's variables set
// (replacing earlier values) and the library appended to LD_PRELOAD (once).
std::vector<std::string> build_run_environment(const std::vector<std::string>& base,
                                               const RunEnvironment& run);

// Where the executable `name` is: itself when it holds a '/', else the first
// executable file of that name in `path_var` (PATH; empty entries mean "."). Nothing
// when not found.
std::optional<std::string> resolve_command(const std::string& name, const std::string& path_var);

// libflopline_inject.so for the flopline executable at `exe_path`: FLOPLINE_INJECT_LIBRARY
// when set, else beside the executable, else ../lib or ../lib64 from it. Nothing when
// none exists.
std::optional<std::string> find_injection_library(const std::string& exe_path,
                                                  const char* override_path);

// FLOPLINE_OUTPUT for `-o` as given, relative to `cwd`: the recorded program may change
// directory, and `flopline run` reads the files back from its own. Empty `output` gives
// the directory `cwd` (the library then picks the default name).
std::string absolute_output(const std::string& output, const std::string& cwd);

// Exit status of `flopline run` for a wait() status: the child's code, or 128 + signal.
int exit_code_from_wait_status(int status);

// The command-table entries.
int run_run_command(std::span<const std::string> args, std::ostream& out, std::ostream& err);
int run_launch_command(std::span<const std::string> args, std::ostream& out, std::ostream& err);
// Both after parsing: runs CMD recorded. `name` ("run", "launch") starts messages.
int run_recorded(const RunOptions& opt, std::string_view name, std::ostream& out,
                 std::ostream& err);

}  // namespace flopline::cli
