// Running the `flopline` dispatcher in-process, as the command line tests do.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "cli_app.h"

namespace flopline::cli::testing {

struct CliRun {
  int rc;
  std::string out, err;
};

// run_cli on `args` (those after "flopline"), with its output captured.
inline CliRun run_flopline(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int rc = run_cli(args, out, err);
  return {rc, out.str(), err.str()};
}

}  // namespace flopline::cli::testing
