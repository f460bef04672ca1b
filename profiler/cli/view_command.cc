#include "view_command.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <vector>

#include "cli_parse.h"

namespace flopline::cli {
namespace {

constexpr std::string_view kUsage =
    "usage: flopline view TRACE... [flopline-view options]\n"
    "       flopline view --diff A B [flopline-view options]\n"
    "\n"
    "Opens Chrome/Kineto trace files (.json or .json.gz) in flopline-view, the desktop\n"
    "timeline with FLOP/s tables and a roofline. Several files are shown as separate\n"
    "processes, with a rank summary when they are ranks. --diff A B opens two runs (files\n"
    "or run directories) and what changed between them, as 'flopline diff A B'. Every\n"
    "option is passed to flopline-view: --screenshot OUT.png, --size WxH, --range T0:T1,\n"
    "--select NAME, --window table|roofline|ranks|diff, --bench ('flopline-view --help').\n";

bool is_executable(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

}  // namespace

std::optional<std::string> find_view_program(const std::string& exe_path, const char* path_env) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!exe_path.empty()) {
    const fs::path dir = fs::path(exe_path).parent_path();
    // Installed side by side; or the build tree, where the viewer is built in viewer/.
    for (const fs::path& p : {dir / "flopline-view", dir / ".." / "viewer" / "flopline-view"}) {
      if (is_executable(p)) return fs::weakly_canonical(p, ec).string();
    }
  }
  std::string_view path = path_env ? path_env : "";
  while (!path.empty()) {
    const auto colon = path.find(':');
    const std::string_view dir = path.substr(0, colon);
    if (!dir.empty()) {
      const fs::path p = fs::path(dir) / "flopline-view";
      if (is_executable(p)) return p.string();
    }
    if (colon == std::string_view::npos) break;
    path.remove_prefix(colon + 1);
  }
  return std::nullopt;
}

int run_view_command(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  for (const std::string& a : args) {
    if (a == "--") break;
    if (a == "--help" || a == "-h") {
      out << kUsage;
      return kExitOk;
    }
  }
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  const auto program = find_view_program(ec ? std::string() : self, std::getenv("PATH"));
  if (!program) {
    err << "flopline view: flopline-view not found beside the flopline executable or on PATH; "
           "it is built when Dear ImGui, GLFW and OpenGL are installed (Debian: libimgui-dev "
           "libglfw3-dev libpng-dev)\n";
    return kExitFailure;
  }
  std::vector<std::string> argv_text = {*program};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : argv_text) argv.push_back(s.data());
  argv.push_back(nullptr);
  out.flush();
  err.flush();
  ::execv(program->c_str(), argv.data());
  err << "flopline view: cannot run " << *program << ": " << std::strerror(errno) << "\n";
  return kExitFailure;
}

}  // namespace flopline::cli
