// The `flopline` command. Everything but the process boundary lives in cli_app.cc.
#include <iostream>
#include <string>
#include <vector>

#include "cli_app.h"
#include "output_check.h"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  const std::vector<std::string> args(argv + 1, argv + argc);
  const int rc = flopline::cli::run_cli(args, std::cout, std::cerr);
  // Commands that fail have said why; one that succeeded must also have been heard.
  if (rc != 0) {
    std::cout.flush();
    return rc;
  }
  return flopline::cli::output_complete(std::cout, std::cerr, "") ? 0 : 1;
}
