// The `flopline` command. Everything but the process boundary lives in cli_app.cc.
#include <iostream>
#include <string>
#include <vector>

#include "cli_app.h"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);
  const std::vector<std::string> args(argv + 1, argv + argc);
  const int rc = flopline::cli::run_cli(args, std::cout, std::cerr);
  std::cout.flush();
  return rc;
}
