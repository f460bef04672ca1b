// `flopline diff A B`: what changed between two runs (docs/DIFF.md).
#pragma once

#include <ostream>
#include <span>
#include <string>

namespace flopline::cli {

inline constexpr int kExitThresholdExceeded = 3;  // a --fail-if-* threshold was passed

std::string diff_usage();
// The command-table entry.
int run_diff_command(std::span<const std::string> args, std::ostream& out, std::ostream& err);

}  // namespace flopline::cli
