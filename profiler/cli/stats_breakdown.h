// `flopline stats --report breakdown`: per rank and device, where GPU time goes over
// the window (flopline/trace/time_breakdown.h), as a table, CSV or JSON.
#pragma once

#include <ostream>

#include "flopline/trace/trace_paths.h"
#include "stats_command.h"

namespace flopline::cli {

// Reads each file of `found` once; returns the exit status.
int run_breakdown_report(const StatsOptions& opt, const trace::TraceFiles& found, std::ostream& out,
                         std::ostream& err);

}  // namespace flopline::cli
