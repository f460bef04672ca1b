#include "core/si_format.h"

#include <array>
#include <cmath>
#include <cstdio>

namespace flopline::viewer {

std::string format_si(double v) {
  static constexpr std::array<const char*, 7> kPrefixes = {"", " k", " M", " G", " T", " P", " E"};
  double a = std::fabs(v);
  std::size_t p = 0;
  while (a >= 999.5 && p + 1 < kPrefixes.size()) {
    a /= 1000;
    v /= 1000;
    ++p;
  }
  char buf[48];
  if (p == 0 && a == std::floor(a)) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else if (a >= 99.95) {
    std::snprintf(buf, sizeof buf, "%.0f%s", v, kPrefixes[p]);
  } else if (a >= 9.995) {
    std::snprintf(buf, sizeof buf, "%.1f%s", v, kPrefixes[p]);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f%s", v, kPrefixes[p]);
  }
  return buf;
}

}  // namespace flopline::viewer
