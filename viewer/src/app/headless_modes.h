// The modes that run without a person: --screenshot renders once the traces are
// loaded and writes a PNG (and optionally the table as CSV and the state dump);
// --bench drives a scripted fit / zoom to 1 us / pan / zoom out and prints frame
// times and resident memory. Both still need an X display (Xvfb is enough).
#pragma once

#include "app_options.h"

namespace flopline::viewer {

// Return the process exit code; messages go to stderr, bench figures to stdout.
int run_screenshot(const AppOptions& options);
int run_bench(const AppOptions& options);

}  // namespace flopline::viewer
