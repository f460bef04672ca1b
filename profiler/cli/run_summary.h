// The summary `flopline run` prints after the command ends: the top operators (NVTX
// ranges, by GPU time) and the top kernels, with TFLOP/s and GB/s where counts are
// known, over every trace the run wrote. Uses the same aggregation and table as
// `flopline stats`.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace flopline::cli {

void print_run_summary(const std::vector<std::string>& files, std::uint64_t top, std::ostream& out,
                       std::ostream& err);

}  // namespace flopline::cli
