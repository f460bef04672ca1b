// Starting the command of `flopline run` and waiting for it: fork and execve (never
// system(), so arguments reach it unchanged), signals from the terminal left to the
// child, SIGTERM and SIGHUP passed on to it.
#pragma once

#include <string>
#include <vector>

namespace flopline::cli {

struct ChildResult {
  bool started = false;
  std::string error;  // why it could not be started
  int exit_code = 0;  // the child's, 128 + signal, or 126/127 when exec failed
  int signal = 0;     // the signal that ended it, 0 when it exited
};

// Runs `program` (a resolved path) with argv `args` (args[0] as given) and environment
// `env`, and waits for it.
ChildResult run_child(const std::string& program, const std::vector<std::string>& args,
                      const std::vector<std::string>& env);

// "SIGABRT"; "signal N" for one without a name here.
std::string signal_name(int sig);

}  // namespace flopline::cli
