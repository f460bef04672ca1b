#include "command_table.h"

#include "calibrate_command.h"
#include "control_command.h"
#include "diff_command.h"
#include "run_command.h"
#include "stats_command.h"
#include "view_command.h"

namespace flopline::cli {

std::span<const Command> command_table() {
  // Only commands that are implemented appear here, so --help never promises one
  // that does not exist.
  static constexpr Command kCommands[] = {
      {"run", "run a CUDA program and record its GPU work (kernels, NVTX ranges)", run_run_command},
      {"launch", "run a CUDA program with recording off until 'flopline start'",
       run_launch_command},
      {"start", "switch recording on in a running launch or run, every process of it",
       run_start_command},
      {"stop", "switch recording off in a running launch or run", run_stop_command},
      {"stats", "time, FLOP/s and bandwidth per kernel, operator or category", run_stats_command},
      {"diff", "what changed between two runs: kernels or operators matched by name",
       run_diff_command},
      {"calibrate", "measure this GPU's achievable matmul FLOP/s and copy bandwidth",
       run_calibrate_command},
      {"view", "open traces in flopline-view, the desktop timeline (when built)", run_view_command},
  };
  return kCommands;
}

const Command* find_command(std::string_view name) {
  for (const Command& c : command_table()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

}  // namespace flopline::cli
