// Numbers in the reader's messages, as people read them.
#pragma once

#include <cstdint>
#include <string>

namespace flopline::trace {

// 1234567 -> "1,234,567".
inline std::string with_thousands(std::uint64_t v) {
  const std::string digits = std::to_string(v);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

}  // namespace flopline::trace
