#include "cli_app.h"

#include <algorithm>
#include <exception>
#include <new>

#include "cli_parse.h"
#include "command_table.h"

#ifndef FLOPLINE_VERSION
#define FLOPLINE_VERSION "unknown"
#endif

namespace flopline::cli {

std::string main_usage() {
  std::string s =
      "usage: flopline <command> [options] [arguments]\n"
      "       flopline --help | --version\n"
      "\n"
      "commands:\n";
  std::size_t width = 0;
  for (const Command& c : command_table()) width = std::max(width, c.name.size());
  for (const Command& c : command_table()) {
    s += concat("  ", c.name, std::string(width - c.name.size() + 3, ' '), c.summary, "\n");
  }
  s += "\n"
       "options:\n"
       "  -h, --help     show this help\n"
       "  --version      show the version\n"
       "\n"
       "Run 'flopline <command> --help' for a command's options.\n";
  return s;
}

int run_cli(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  if (args.empty()) {
    err << "flopline: no command given\n\n" << main_usage();
    return kExitUsage;
  }
  const std::string& first = args[0];
  if (first == "--help" || first == "-h" || first == "help") {
    if (first == "help" && args.size() > 1) {
      // "flopline help stats" is "flopline stats --help".
      if (const Command* c = find_command(args[1])) {
        const std::string help[] = {"--help"};
        return c->run(std::span<const std::string>(help), out, err);
      }
      err << usage_error("", concat("unknown command '", args[1], "'"));
      return kExitUsage;
    }
    out << main_usage();
    return kExitOk;
  }
  if (first == "--version" || first == "-V") {
    out << "flopline " << FLOPLINE_VERSION << "\n";
    return kExitOk;
  }
  const Command* cmd = find_command(first);
  if (cmd == nullptr) {
    const std::string what = first.starts_with("-") ? "unknown option '" : "unknown command '";
    err << usage_error("", concat(what, first, "'"));
    return kExitUsage;
  }
  try {
    return cmd->run(args.subspan(1), out, err);
  } catch (const std::bad_alloc&) {
    err << "flopline " << cmd->name << ": out of memory\n";
  } catch (const std::exception& e) {
    err << "flopline " << cmd->name << ": internal error: " << e.what() << "\n";
  }
  return kExitFailure;
}

}  // namespace flopline::cli
