#include "trace/time_text.h"

#include <charconv>
#include <limits>

namespace flopline::trace {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() &&
         (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

bool is_non_finite_word(std::string_view w) {
  auto eq = [&](std::string_view lower) {
    if (w.size() != lower.size()) return false;
    for (std::size_t i = 0; i < w.size(); ++i) {
      char c = w[i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      if (c != lower[i]) return false;
    }
    return true;
  };
  return eq("nan") || eq("inf") || eq("infinity");
}

}  // namespace

// The value is the digit string D = integer digits ++ fraction digits with the
// decimal point after P = (integer digits) + exponent + scale places. The result is
// the first P digits of D (zeros past its end), plus one when digit P is 5 or more:
// that digit alone decides rounding half away from zero.
NumberStatus decimal_to_int(std::string_view text, int scale, std::int64_t& out) {
  text = trim(text);
  const char* p = text.data();
  const char* end = p + text.size();
  bool negative = false;
  if (p < end && (*p == '-' || *p == '+')) {
    negative = *p == '-';
    ++p;
  }
  if (p < end && !is_digit(*p) && *p != '.') {
    return is_non_finite_word(std::string_view(p, static_cast<std::size_t>(end - p)))
               ? NumberStatus::kNonFinite
               : NumberStatus::kNotANumber;
  }
  const char* int_begin = p;
  while (p < end && is_digit(*p)) ++p;
  const char* int_end = p;
  const char* frac_begin = p;
  const char* frac_end = p;
  if (p < end && *p == '.') {
    frac_begin = ++p;
    while (p < end && is_digit(*p)) ++p;
    frac_end = p;
  }
  if (int_begin == int_end && frac_begin == frac_end) return NumberStatus::kNotANumber;
  std::int64_t exponent = 0;
  if (p < end && (*p == 'e' || *p == 'E')) {
    ++p;
    bool exp_negative = false;
    if (p < end && (*p == '-' || *p == '+')) exp_negative = *p++ == '-';
    if (p >= end || !is_digit(*p)) return NumberStatus::kNotANumber;
    while (p < end && is_digit(*p)) {
      if (exponent < 1000000)
        exponent = exponent * 10 + (*p - '0');  // beyond: 0 or out of range anyway
      ++p;
    }
    if (exp_negative) exponent = -exponent;
  }
  if (p != end) return NumberStatus::kNotANumber;

  while (int_begin < int_end && *int_begin == '0') ++int_begin;
  if (exponent == 0 && scale >= 0 && (int_end - int_begin) + scale <= 19) {
    // The common case ("1712195495519695.812"): at most 19 digits always fit in
    // uint64, so no overflow checks per digit.
    std::uint64_t v = 0;
    for (const char* d = int_begin; d < int_end; ++d) v = v * 10 + static_cast<unsigned>(*d - '0');
    const char* f = frac_begin;
    for (int i = 0; i < scale; ++i)
      v = v * 10 + (f < frac_end ? static_cast<unsigned>(*f++ - '0') : 0u);
    if (f < frac_end && *f >= '5') ++v;
    if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      return NumberStatus::kOutOfRange;
    out = negative ? -static_cast<std::int64_t>(v) : static_cast<std::int64_t>(v);
    return NumberStatus::kOk;
  }
  const std::int64_t n_int = int_end - int_begin;
  const std::int64_t n_digits = n_int + (frac_end - frac_begin);
  auto digit = [&](std::int64_t i) -> unsigned {
    if (i < n_int) return static_cast<unsigned>(int_begin[i] - '0');
    i -= n_int;
    return static_cast<unsigned>(frac_begin[i] - '0');
  };
  const std::int64_t point = n_int + exponent + scale;
  std::uint64_t v = 0;
  const std::int64_t taken = point < 0 ? 0 : (point < n_digits ? point : n_digits);
  for (std::int64_t i = 0; i < taken; ++i) {
    const unsigned d = digit(i);
    if (v > (std::numeric_limits<std::uint64_t>::max() - d) / 10) return NumberStatus::kOutOfRange;
    v = v * 10 + d;
  }
  for (std::int64_t zeros = point - taken; zeros > 0 && v != 0; --zeros) {  // digits past D are 0
    if (v > std::numeric_limits<std::uint64_t>::max() / 10) return NumberStatus::kOutOfRange;
    v *= 10;
  }
  if (point >= 0 && point < n_digits && digit(point) >= 5) ++v;
  if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    return NumberStatus::kOutOfRange;
  out = negative ? -static_cast<std::int64_t>(v) : static_cast<std::int64_t>(v);
  return NumberStatus::kOk;
}

bool parse_int64(std::string_view text, std::int64_t& out) {
  if (text.empty()) return false;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

bool parse_id(std::string_view text, std::uint64_t& out) {
  text = trim(text);
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
    if (text.size() > 16) return false;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out, 16);
    return ec == std::errc() && ptr == text.data() + text.size();
  }
  if (!text.empty() && text[0] == '-') {
    std::int64_t v = 0;
    if (!parse_int64(text, v)) return false;
    out = static_cast<std::uint64_t>(v);
    return true;
  }
  if (text.empty()) return false;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

bool parse_double(std::string_view text, double& out) {
  text = trim(text);
  if (!text.empty() && text[0] == '+') text.remove_prefix(1);
  if (text.empty()) return false;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ptr != text.data() + text.size()) return false;
  // Out of range: from_chars leaves `out` alone; JSON readers give 0 for a tiny
  // number and +-inf for a huge one.
  if (ec == std::errc::result_out_of_range) {
    const bool tiny =
        text.find("e-") != std::string_view::npos || text.find("E-") != std::string_view::npos;
    const double magnitude = tiny ? 0.0 : std::numeric_limits<double>::infinity();
    out = text[0] == '-' ? -magnitude : magnitude;
    return true;
  }
  return ec == std::errc();
}

}  // namespace flopline::trace
