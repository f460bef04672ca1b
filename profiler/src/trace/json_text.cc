// JSON text output: string escaping, UTF-8 repair, integer/decimal formatting.
//
// The escaper scans eight bytes at a time with SWAR bit tricks (portable, no SIMD
// intrinsics) and copies runs of plain bytes whole; only quotes, backslashes, control
// bytes and bytes >= 0x80 leave the fast loop. Non-ASCII bytes are checked against the
// UTF-8 grammar of Unicode 15 table 3-7; each maximal invalid subpart becomes one
// U+FFFD, which is what WHATWG decoders and Python's "replace" handler do, so the
// reader and other tools agree on the repaired text.
#include "flopline/trace/json_text.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>

namespace flopline::trace {
namespace {

constexpr std::uint64_t kOnes = 0x0101010101010101ull;
constexpr std::uint64_t kHigh = 0x8080808080808080ull;

constexpr char kDigitPairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

constexpr char kHex[] = "0123456789abcdef";

std::uint64_t load8(const unsigned char* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// High bit set in each byte lane that is < 0x20, '"', '\\' or >= 0x80. Lanes above
// the first flagged lane may be flagged falsely (borrows), so only the first counts.
std::uint64_t special_lanes(std::uint64_t v) {
  const std::uint64_t control = (v - kOnes * 0x20) & ~v;
  const std::uint64_t q = v ^ (kOnes * '"');
  const std::uint64_t quote = (q - kOnes) & ~q;
  const std::uint64_t b = v ^ (kOnes * '\\');
  const std::uint64_t backslash = (b - kOnes) & ~b;
  return (control | quote | backslash | v) & kHigh;
}

// Lanes < 0x20 or >= 0x80 (same first-lane caveat).
std::uint64_t non_printable_lanes(std::uint64_t v) {
  return (((v - kOnes * 0x20) & ~v) | v) & kHigh;
}

// Index of the first flagged lane in memory order.
unsigned first_lane(std::uint64_t mask) {
  if constexpr (std::endian::native == std::endian::little) {
    return static_cast<unsigned>(std::countr_zero(mask)) / 8;
  } else {
    return static_cast<unsigned>(std::countl_zero(mask)) / 8;
  }
}

// Length of the valid UTF-8 sequence at p (2..4), or minus the length of its maximal
// invalid subpart (-1..-3). Called only for bytes >= 0x80.
int utf8_sequence(const unsigned char* p, const unsigned char* end) {
  const unsigned c = p[0];
  int n;
  unsigned lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c < 0xC2) return -1;        // continuation byte, or overlong lead C0/C1
  if (c < 0xE0) {
    n = 2;
  } else if (c < 0xF0) {
    n = 3;
    if (c == 0xE0)
      lo = 0xA0;  // overlong
    else if (c == 0xED)
      hi = 0x9F;  // surrogates D800-DFFF
  } else if (c < 0xF5) {
    n = 4;
    if (c == 0xF0)
      lo = 0x90;  // overlong
    else if (c == 0xF4)
      hi = 0x8F;  // above U+10FFFF
  } else {
    return -1;
  }
  if (end - p < 2 || p[1] < lo || p[1] > hi) return -1;
  for (int k = 2; k < n; ++k) {
    if (end - p <= k || (p[k] & 0xC0) != 0x80) return -k;
  }
  return n;
}

bool is_hex(unsigned c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

char* write_replacement(char* p) {
  p[0] = '\xEF';
  p[1] = '\xBF';
  p[2] = '\xBD';
  return p + 3;
}

// Escape of an ASCII byte that may not appear raw in a JSON string.
char* write_escape(char* p, unsigned char c) {
  p[0] = '\\';
  switch (c) {
    case '"':
      p[1] = '"';
      return p + 2;
    case '\\':
      p[1] = '\\';
      return p + 2;
    case '\b':
      p[1] = 'b';
      return p + 2;
    case '\f':
      p[1] = 'f';
      return p + 2;
    case '\n':
      p[1] = 'n';
      return p + 2;
    case '\r':
      p[1] = 'r';
      return p + 2;
    case '\t':
      p[1] = 't';
      return p + 2;
    default:
      std::memcpy(p + 1, "u00", 3);
      p[4] = kHex[c >> 4];
      p[5] = kHex[c & 15];
      return p + 6;
  }
}

// Copies string content from `i` until the closing quote (when `quoted`, i.e. the
// source is JSON text whose escapes stay as they are) or the end. Returns the output
// end; `i` is left after what was consumed (after the closing quote when found).
char* write_string_body(char* p, const unsigned char*& i, const unsigned char* end, bool quoted) {
  while (true) {
    while (end - i >= 8) {
      const std::uint64_t lanes = special_lanes(load8(i));
      std::memcpy(p, i, 8);  // room: every input byte has >= 6 output bytes reserved
      if (lanes == 0) {
        p += 8;
        i += 8;
        continue;
      }
      const unsigned k = first_lane(lanes);
      p += k;
      i += k;
      break;
    }
    if (i == end) return p;
    const unsigned c = *i;
    if (c >= 0x80) {
      const int n = utf8_sequence(i, end);
      if (n > 0) {
        std::memcpy(p, i, static_cast<std::size_t>(n));
        p += n;
        i += n;
      } else {
        p = write_replacement(p);
        i += -n;
      }
    } else if (quoted && c == '"') {
      ++i;
      return p;
    } else if (quoted && c == '\\') {
      // Keep a valid escape; a stray backslash becomes an escaped backslash.
      const bool has_next = end - i >= 2;
      const unsigned e = has_next ? i[1] : 0;
      bool valid = e == '"' || e == '\\' || e == '/' || e == 'b' || e == 'f' || e == 'n' ||
                   e == 'r' || e == 't';
      if (e == 'u') {
        valid = end - i >= 6;
        for (int k = 2; valid && k < 6; ++k) valid = is_hex(i[k]);
      }
      if (valid) {
        const int len = e == 'u' ? 6 : 2;
        std::memcpy(p, i, static_cast<std::size_t>(len));
        p += len;
        i += len;
      } else {
        p = write_escape(p, '\\');
        ++i;
      }
    } else if (c < 0x20 || c == '"' || c == '\\') {
      p = write_escape(p, static_cast<unsigned char>(c));
      ++i;
    } else {
      *p++ = static_cast<char>(c);  // plain byte in the tail shorter than 8
      ++i;
    }
  }
}

// Digits of v (>= 1).
unsigned digit_count(std::uint64_t v) {
  static constexpr std::uint64_t kPow10[20] = {1ull,
                                               10ull,
                                               100ull,
                                               1000ull,
                                               10000ull,
                                               100000ull,
                                               1000000ull,
                                               10000000ull,
                                               100000000ull,
                                               1000000000ull,
                                               10000000000ull,
                                               100000000000ull,
                                               1000000000000ull,
                                               10000000000000ull,
                                               100000000000000ull,
                                               1000000000000000ull,
                                               10000000000000000ull,
                                               100000000000000000ull,
                                               1000000000000000000ull,
                                               10000000000000000000ull};
  // floor(log10) estimated from the bit width (1233/4096 ~ log10 2), off by at most one.
  const unsigned t = static_cast<unsigned>(std::bit_width(v) * 1233) >> 12;
  return t + 1 - (v < kPow10[t] ? 1u : 0u);
}

bool is_word_char(unsigned c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.' || c == '+' || c == '-';
}

bool is_letter(unsigned c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

}  // namespace

char* write_json_string(char* p, std::string_view s) {
  auto i = reinterpret_cast<const unsigned char*>(s.data());
  *p++ = '"';
  p = write_string_body(p, i, i + s.size(), /*quoted=*/false);
  *p++ = '"';
  return p;
}

char* write_uint(char* p, std::uint64_t v) {
  if (v < 10) {
    *p = static_cast<char>('0' + v);
    return p + 1;
  }
  char* const end = p + digit_count(v);
  char* q = end;
  while (v >= 100) {
    q -= 2;
    std::memcpy(q, kDigitPairs + 2 * (v % 100), 2);
    v /= 100;
  }
  if (v >= 10) {
    std::memcpy(q - 2, kDigitPairs + 2 * v, 2);
  } else {
    q[-1] = static_cast<char>('0' + v);
  }
  return end;
}

char* write_int(char* p, std::int64_t v) {
  if (v >= 0) return write_uint(p, static_cast<std::uint64_t>(v));
  *p++ = '-';
  // Negating in unsigned arithmetic is exact for INT64_MIN too.
  return write_uint(p, 0 - static_cast<std::uint64_t>(v));
}

char* write_us3(char* p, TimeNs ns) {
  std::uint64_t a = static_cast<std::uint64_t>(ns);
  if (ns < 0) {
    *p++ = '-';
    a = 0 - a;
  }
  p = write_uint(p, a / 1000);
  const unsigned frac = static_cast<unsigned>(a % 1000);
  p[0] = '.';
  p[1] = static_cast<char>('0' + frac / 100);
  std::memcpy(p + 2, kDigitPairs + 2 * (frac % 100), 2);
  return p + 4;
}

char* write_double(char* p, double v) {
  if (!std::isfinite(v)) {
    std::memcpy(p, "null", 4);
    return p + 4;
  }
  // Integral values below 2^53 are common (counts, bytes): plain integer digits are
  // exact, faster than to_chars, and easier to read than its "1e+15".
  if (v == std::trunc(v) && std::fabs(v) < 9007199254740992.0 && !(v == 0 && std::signbit(v))) {
    return write_int(p, static_cast<std::int64_t>(v));
  }
  return std::to_chars(p, p + kMaxDoubleChars, v).ptr;
}

bool is_printable_ascii(std::string_view s) {
  auto i = reinterpret_cast<const unsigned char*>(s.data());
  const auto end = i + s.size();
  for (; end - i >= 8; i += 8) {
    if (non_printable_lanes(load8(i)) != 0) return false;
  }
  for (; i < end; ++i) {
    if (*i < 0x20 || *i >= 0x80) return false;
  }
  return true;
}

char* copy_if_printable(char* p, std::string_view s) {
  auto i = reinterpret_cast<const unsigned char*>(s.data());
  const auto end = i + s.size();
  std::uint64_t bad = 0;  // nonzero iff some lane was truly non-printable
  for (; end - i >= 8; i += 8, p += 8) {
    const std::uint64_t v = load8(i);
    std::memcpy(p, &v, 8);
    bad |= non_printable_lanes(v);
  }
  for (; i < end; ++i, ++p) {
    *p = static_cast<char>(*i);
    bad |= *i < 0x20 || *i >= 0x80;
  }
  return bad == 0 ? p : nullptr;
}

bool is_valid_utf8(std::string_view s) {
  auto i = reinterpret_cast<const unsigned char*>(s.data());
  const auto end = i + s.size();
  while (i < end) {
    if (end - i >= 8 && (load8(i) & kHigh) == 0) {
      i += 8;
      continue;
    }
    if (*i < 0x80) {
      ++i;
      continue;
    }
    const int n = utf8_sequence(i, end);
    if (n < 0) return false;
    i += n;
  }
  return true;
}

char* write_json_compact(char* p, std::string_view json) {
  auto i = reinterpret_cast<const unsigned char*>(json.data());
  const auto end = i + json.size();
  while (i < end) {
    const unsigned c = *i;
    if (c == '"') {
      *p++ = '"';
      ++i;
      p = write_string_body(p, i, end, /*quoted=*/true);
      *p++ = '"';
    } else if ((c >= '0' && c <= '9') || (c == '-' && end - i >= 2 && i[1] >= '0' && i[1] <= '9')) {
      // A number, exponent letters included.
      do {
        *p++ = static_cast<char>(*i++);
      } while (i < end && ((*i >= '0' && *i <= '9') || *i == '.' || *i == 'e' || *i == 'E' ||
                           *i == '+' || *i == '-'));
    } else if (is_letter(c) || (c == '-' && end - i >= 2 && is_letter(i[1]))) {
      const auto start = i;
      do {
        ++i;
      } while (i < end && is_word_char(*i));
      const std::string_view word(reinterpret_cast<const char*>(start),
                                  static_cast<std::size_t>(i - start));
      if (word == "true" || word == "false" || word == "null") {
        std::memcpy(p, word.data(), word.size());
        p += word.size();
      } else {
        std::memcpy(p, "null", 4);  // nan, inf, NaN, Infinity, -inf: not JSON
        p += 4;
      }
    } else if (c <= 0x20 || c >= 0x80) {
      ++i;  // whitespace (or a stray byte) between tokens
    } else {
      *p++ = static_cast<char>(c);
      ++i;
    }
  }
  return p;
}

// The std::string forms size the string for the worst case, write, then trim: one
// capacity check instead of one per piece.
void append_json_string(std::string& out, std::string_view s) {
  const std::size_t old = out.size();
  out.resize(old + json_string_max_size(s.size()));
  char* const end = write_json_string(out.data() + old, s);
  out.resize(static_cast<std::size_t>(end - out.data()));
}

void append_json_compact(std::string& out, std::string_view json) {
  const std::size_t old = out.size();
  out.resize(old + json_compact_max_size(json.size()));
  char* const end = write_json_compact(out.data() + old, json);
  out.resize(static_cast<std::size_t>(end - out.data()));
}

void append_int(std::string& out, std::int64_t v) {
  char buf[kMaxIntChars];
  out.append(buf, write_int(buf, v));
}

void append_uint(std::string& out, std::uint64_t v) {
  char buf[kMaxIntChars];
  out.append(buf, write_uint(buf, v));
}

void append_double(std::string& out, double v) {
  char buf[kMaxDoubleChars];
  out.append(buf, write_double(buf, v));
}

void append_us3(std::string& out, TimeNs ns) {
  char buf[kMaxUs3Chars];
  out.append(buf, write_us3(buf, ns));
}

}  // namespace flopline::trace
