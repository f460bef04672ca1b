// The `flopline` program without its main(): global flags (--help, --version) and
// dispatch to a command. Takes its streams as arguments so tests can run it.
#pragma once

#include <ostream>
#include <span>
#include <string>

namespace flopline::cli {

// `args` excludes the program name. Returns the process exit code.
int run_cli(std::span<const std::string> args, std::ostream& out, std::ostream& err);

// The text of `flopline --help`.
std::string main_usage();

}  // namespace flopline::cli
