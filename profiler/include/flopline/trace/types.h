// Basic units of the flopline trace model.
//
// Every time in the model is an int64 count of nanoseconds on one clock shared by
// CPU and GPU events. Nothing is stored as floating-point microseconds: Chrome-trace
// microsecond text is converted straight to integer nanoseconds by the reader.
#pragma once

#include <cstdint>

namespace flopline::trace {

using TimeNs = std::int64_t;     // nanoseconds
using StringId = std::uint32_t;  // index into StringTable; 0 is the empty string
using ArgsId = std::uint32_t;    // index into ArgStore; kNoArgs when an event has none

inline constexpr ArgsId kNoArgs = 0xffffffffu;
inline constexpr std::uint32_t kNone = 0xffffffffu;

// Sums and differences of times that stop at the ends of the range instead of wrapping:
// a trace can hold times and spans near 2^63 ns (docs/STATS.md, "Numbers out of range").
inline TimeNs add_saturating(TimeNs a, TimeNs b) {
  TimeNs r = 0;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? INT64_MAX : INT64_MIN;
  return r;
}
inline TimeNs sub_saturating(TimeNs a, TimeNs b) {
  TimeNs r = 0;
  if (__builtin_sub_overflow(a, b, &r)) return b < 0 ? INT64_MAX : INT64_MIN;
  return r;
}

}  // namespace flopline::trace
