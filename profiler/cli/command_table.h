// The `flopline` subcommands. Each command is one entry: a name, a one-line summary
// for `flopline --help`, and a function. Adding a command (run, merge, view,
// calibrate) is one new file plus one entry in command_table.cc.
#pragma once

#include <ostream>
#include <span>
#include <string>
#include <string_view>

namespace flopline::cli {

// Runs a command on its arguments (those after the command name). Returns the exit
// code: kExitOk, kExitFailure, or kExitUsage (see cli_parse.h).
using CommandFn = int (*)(std::span<const std::string> args, std::ostream& out, std::ostream& err);

struct Command {
  std::string_view name;
  std::string_view summary;
  CommandFn run;
};

// The commands that exist, in the order `flopline --help` lists them.
std::span<const Command> command_table();
const Command* find_command(std::string_view name);

}  // namespace flopline::cli
