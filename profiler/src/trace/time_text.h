// Number text -> integers, exactly. Chrome traces write times as microseconds with
// up to 17 significant digits ("1712195495519695.8"), past what a double holds
// exactly, so times are converted from the decimal digits straight to integer
// nanoseconds and never pass through floating point.
#pragma once

#include <cstdint>
#include <string_view>

namespace flopline::trace {

enum class NumberStatus : std::uint8_t {
  kOk,
  kNotANumber,  // not decimal number text
  kNonFinite,   // nan, inf, Infinity...
  kOutOfRange,  // does not fit in int64 after scaling
};

// `text` (JSON number grammar; a leading '+' and surrounding spaces are tolerated,
// since the same text also arrives inside strings) times 10^scale, rounded half away
// from zero, as int64. scale 3 turns microseconds into nanoseconds:
// "1712195495519695.8" -> 1712195495519695800, "1.69e15" -> 1690000000000000000.
NumberStatus decimal_to_int(std::string_view text, int scale, std::int64_t& out);
inline NumberStatus micros_to_ns(std::string_view text, std::int64_t& out) {
  return decimal_to_int(text, 3, out);
}

// A plain decimal integer ("-1", "25738"); false for anything else or out of range.
bool parse_int64(std::string_view text, std::int64_t& out);
// An id: a decimal integer (negative ones wrap to uint64) or "0x" hex of up to 16
// digits, as flow and async ids are written ("0xaf4f9533f4c9b7e7" is above INT64_MAX).
bool parse_id(std::string_view text, std::uint64_t& out);
// A JSON number or a nan/inf word as a double.
bool parse_double(std::string_view text, double& out);

}  // namespace flopline::trace
