// Writing JSON text fast and correctly: the one string escaper of flopline and the
// number formatters the Chrome-trace writer uses. Any byte sequence given to
// append_json_string() yields a valid JSON string: control characters are escaped,
// and bytes that are not valid UTF-8 are replaced by U+FFFD.
#pragma once

#include <cstddef>
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

// --- Raw-buffer forms -------------------------------------------------------------
// The writer renders millions of events; these write at `p` (which must have room for
// the stated maximum) and return the end, so a whole event needs one capacity check.

// Most bytes write_json_string() can produce for n input bytes (a control byte
// becomes \u00XX: 6 bytes; quotes add 2).
constexpr std::size_t json_string_max_size(std::size_t n) {
  return 2 + 6 * n;
}
inline constexpr std::size_t kMaxIntChars = 20;     // "-9223372036854775808"
inline constexpr std::size_t kMaxUs3Chars = 21;     // "-9223372036854775.808"
inline constexpr std::size_t kMaxDoubleChars = 32;  // shortest round trip, or "null"

char* write_json_string(char* p, std::string_view s);
char* write_int(char* p, std::int64_t v);
char* write_uint(char* p, std::uint64_t v);
char* write_double(char* p, double v);
char* write_us3(char* p, TimeNs ns);

// True when every byte of `s` is printable ASCII (0x20..0x7f): such JSON text can be
// copied as is. Text with other bytes may need write_json_compact().
bool is_printable_ascii(std::string_view s);
// Copies `s` to p when every byte is printable ASCII and returns the end; returns
// nullptr otherwise (p then holds a partial copy). One pass for the common case.
char* copy_if_printable(char* p, std::string_view s);
// Most bytes write_json_compact() can produce for n input bytes.
constexpr std::size_t json_compact_max_size(std::size_t n) {
  return 6 * n + 4;
}
// Copies the JSON value text `json` (as stored from a tolerant read) so that the copy
// is strict JSON on one line: whitespace outside strings is dropped, control bytes
// inside strings are escaped, invalid UTF-8 becomes U+FFFD, and bare words other than
// true/false/null (nan, inf, NaN, Infinity, -inf...) become null.
char* write_json_compact(char* p, std::string_view json);
void append_json_compact(std::string& out, std::string_view json);

}  // namespace flopline::trace
