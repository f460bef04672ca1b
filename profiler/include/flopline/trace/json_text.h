// Writing JSON text fast and correctly: the one string escaper of flopline and the
// number formatters the Chrome-trace writer uses. Any byte sequence given to
// append_json_string() yields a valid JSON string: control characters are escaped,
// and bytes that are not valid UTF-8 are replaced by U+FFFD.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "flopline/trace/types.h"

namespace flopline::trace {

// Appends `s` as a quoted JSON string.
void append_json_string(std::string& out, std::string_view s);
void append_int(std::string& out, std::int64_t v);
void append_uint(std::string& out, std::uint64_t v);
// Shortest round-trip decimal; non-finite values are written as null.
void append_double(std::string& out, double v);
// Writes ns as microseconds with exactly three decimals: 1234567 -> "1234.567",
// -5 -> "-0.005". Exact for every int64.
void append_us3(std::string& out, TimeNs ns);
// True when `s` is valid UTF-8 (no overlongs, no surrogates, max U+10FFFF).
bool is_valid_utf8(std::string_view s);

}  // namespace flopline::trace
