#include "calibrate_command.h"

#include <filesystem>
#include <vector>

#include "cli_parse.h"
#include "flopline/capture/calibration.h"
#include "run_process.h"

extern char** environ;

// The install's libexec folder relative to its prefix (CMake's CMAKE_INSTALL_LIBEXECDIR).
#ifndef FLOPLINE_INSTALL_LIBEXECDIR
#define FLOPLINE_INSTALL_LIBEXECDIR "libexec"
#endif

namespace flopline::cli {

std::optional<std::string> find_calibrate_program(const std::string& exe_path) {
  namespace fs = std::filesystem;
  if (exe_path.empty()) return std::nullopt;
  std::error_code ec;
  const fs::path dir = fs::path(exe_path).parent_path();
  for (const fs::path& p : {dir / "flopline-calibrate", dir / ".." / FLOPLINE_INSTALL_LIBEXECDIR /
                                                            "flopline" / "flopline-calibrate"}) {
    if (fs::is_regular_file(p, ec)) return fs::weakly_canonical(p, ec).string();
  }
  return std::nullopt;
}

int run_calibrate_command(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  for (const std::string& a : args) {
    if (a == "--help" || a == "-h") {
      out << capture::calibrate_usage();
      return kExitOk;
    }
  }
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  const auto program = find_calibrate_program(ec ? std::string() : self);
  if (!program) {
    err << "flopline calibrate: flopline-calibrate not found beside the flopline executable; "
           "it is built when flopline is built with the CUDA toolkit\n";
    return kExitFailure;
  }
  std::vector<std::string> argv = {*program};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) env.emplace_back(*e);
  out.flush();
  const ChildResult r = run_child(*program, argv, env);
  if (!r.started) err << "flopline calibrate: cannot run " << *program << ": " << r.error << "\n";
  return r.exit_code;
}

}  // namespace flopline::cli
