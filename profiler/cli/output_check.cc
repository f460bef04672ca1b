#include "output_check.h"

#include <cerrno>
#include <cstring>
#include <string>

namespace flopline::cli {

void start_output() {
  errno = 0;
}

bool output_complete(std::ostream& out, std::ostream& err, std::string_view command) {
  out.flush();
  if (out) return true;
  // The stream keeps no reason: the failed write(2) left it in errno (cleared by
  // start_output(), so an older error is not taken for it).
  const int e = errno;
  err << "flopline" << (command.empty() ? "" : " ") << command
      << ": cannot write the output: " << (e != 0 ? std::strerror(e) : "the write failed") << "\n";
  return false;
}

}  // namespace flopline::cli
