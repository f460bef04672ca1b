// How a slice's category and precision texts are compared: shared by the analysis
// (analysis.h) and operator time (operator_time.h), which must not include each other.
#pragma once

#include <string>
#include <string_view>

namespace flopline::trace {

// True when the slice category `cat` matches the filter entry `wanted`: ASCII
// case-insensitive, and a cat that is a comma-separated list ("a,b", Chrome's
// convention) matches when any element does (see StatsQuery).
bool category_matches(std::string_view cat, std::string_view wanted);

// Normalizes a precision name for DeviceProperties::peak_flops_for: lower case, an
// optional "torch." prefix dropped, dtype synonyms mapped ("float32" -> "fp32",
// "bfloat16" -> "bf16", "half" -> "fp16", "float8_e4m3fn" -> "fp8", ...). Unknown
// names are returned lower-cased, unchanged otherwise.
std::string normalize_precision(std::string_view precision);

}  // namespace flopline::trace
