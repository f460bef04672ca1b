// Numbers with an SI prefix, for FLOPs, bytes and counter values.
#pragma once

#include <string>

namespace flopline::viewer {

// 3 significant digits with an SI prefix: 1.37e11 -> "137 G", 2e6 -> "2.00 M".
std::string format_si(double v);

}  // namespace flopline::viewer
