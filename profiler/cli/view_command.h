// `flopline view TRACE... [flopline-view options]`: opens traces in flopline-view, the
// desktop timeline (viewer/). The viewer is a separate program (it needs Dear ImGui,
// GLFW and OpenGL, which `flopline` does not), found beside this executable, in the
// build tree's viewer/ folder, or on PATH, and run in place of this process.
#pragma once

#include <optional>
#include <ostream>
#include <span>
#include <string>

namespace flopline::cli {

// flopline-view for the flopline executable at `exe_path`, else on `path_env` (the
// PATH value; may be null). Nothing when not found.
std::optional<std::string> find_view_program(const std::string& exe_path, const char* path_env);

int run_view_command(std::span<const std::string> args, std::ostream& out, std::ostream& err);

}  // namespace flopline::cli
