// `flopline start [RUN] [--wait T]` and `flopline stop [RUN] [--wait T]`: switch the
// recording of a running `flopline launch` (or `flopline run` without --capture-range)
// on or off from another shell, in every process of the run at once. RUN is the run's
// id (or the start of it), or the pid of flopline launch/run or of any recording process
// of it; none when one run is live. The command goes into the run's control directory
// (flopline/capture/run_control.h), and each process answers it. docs/CAPTURE.md, "On
// demand".
#pragma once

#include <cstdint>
#include <ostream>
#include <span>
#include <string>

#include "cli_parse.h"
#include "flopline/capture/run_control.h"

namespace flopline::cli {

struct ControlOptions {
  std::string run;                        // "" = the one live run
  std::int64_t wait_ns = 10'000'000'000;  // --wait: for every process's answer
  bool help = false;
};
Parsed<ControlOptions> parse_control_args(std::span<const std::string> args);
std::string control_usage(capture::ControlVerb verb);

int run_start_command(std::span<const std::string> args, std::ostream& out, std::ostream& err);
int run_stop_command(std::span<const std::string> args, std::ostream& out, std::ostream& err);

}  // namespace flopline::cli
