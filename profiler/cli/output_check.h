// Whether what a command wrote reached its destination: a full disk, /dev/full or a
// failing pipe must not pass as success with a cut file.
#pragma once

#include <ostream>
#include <string_view>

namespace flopline::cli {

// Call before writing the output: clears errno, where a failed write leaves its reason.
void start_output();

// Flushes `out`. When that or an earlier write failed, says why on `err` ("flopline
// stats: cannot write the output: No space left on device") and returns false.
bool output_complete(std::ostream& out, std::ostream& err, std::string_view command);

}  // namespace flopline::cli
