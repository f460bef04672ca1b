// `flopline stats --report overview`: one short block per file (its kernel time and the
// kernels that take most of it, by base name, with their FLOP/s and % of peak), for a
// first look at many traces on one screen.
#pragma once

#include <ostream>

#include "flopline/trace/trace_paths.h"
#include "stats_command.h"

namespace flopline::cli {

// How many kernels each file's block names.
inline constexpr std::size_t kOverviewKernels = 2;

int run_overview_report(const StatsOptions& opt, const trace::TraceFiles& found, std::ostream& out,
                        std::ostream& err);

}  // namespace flopline::cli
