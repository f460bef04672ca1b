// `flopline calibrate [--device N] [--size N] [--reps N] [-o PATH]`: measures achievable
// peaks on this machine's GPU and stores them for later traces. The measuring is done
// by the flopline-calibrate program (built with CUDA, installed beside flopline or in
// ../libexec/flopline), so this command builds and answers --help without CUDA.
#pragma once

#include <optional>
#include <ostream>
#include <span>
#include <string>

namespace flopline::cli {

// flopline-calibrate for the flopline executable at `exe_path`; nothing when absent.
std::optional<std::string> find_calibrate_program(const std::string& exe_path);

int run_calibrate_command(std::span<const std::string> args, std::ostream& out, std::ostream& err);

}  // namespace flopline::cli
