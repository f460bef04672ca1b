// A fast, tolerant JSON tokenizer over text in memory, used by the Chrome-trace
// reader and by json_value.h.
//
// It never builds a tree: callers walk the text token by token and skip what they
// do not need. Strings without escapes come back as views into the text, so the
// reader interns names straight from the file buffer. Tolerance is what real trace
// files need (chrome://tracing accepts all of it): trailing commas, nan/inf/NaN/
// Infinity tokens, invalid UTF-8 and raw control characters inside strings, unknown
// escapes (kept as written). Nesting is limited by kMaxDepth with an explicit stack,
// so adversarial input ("[[[[..." a million deep) cannot overflow the C++ stack.
//
// The hot paths are inline here; escape decoding, skipping whole values, and
// re-writing values as strict JSON live in json_scanner.cc.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace flopline::trace::json {

inline constexpr int kMaxDepth = 1000;

enum class Kind : std::uint8_t {
  kNone,  // nothing there (end of text or an unexpected character)
  kObject,
  kArray,
  kString,
  kNumber,
  kTrue,
  kFalse,
  kNull,
  kNonFinite,  // nan, NaN, inf, Infinity, -Infinity...
};

// A scalar token. For strings, [begin, end) is the contents between the quotes, as
// written (escapes not resolved); for other scalars it is the token text.
struct Token {
  Kind kind = Kind::kNone;
  bool escaped = false;  // a string with at least one backslash
  const char* begin = nullptr;
  const char* end = nullptr;
  std::string_view text() const { return {begin, static_cast<std::size_t>(end - begin)}; }
};

// What skipping a value saw that strict JSON would reject. When any is set, a stored
// copy of the value is re-written as strict JSON (see Scanner::write_strict).
struct Laxness {
  bool non_finite = false;      // nan/inf tokens
  bool trailing_comma = false;  // [1,2,] or {"a":1,}
  bool control_char = false;    // a raw byte < 0x20 inside a string
  bool any() const { return non_finite || trailing_comma || control_char; }
};

class Scanner {
 public:
  Scanner(const char* begin, const char* end) : begin_(begin), end_(end), p_(begin) {}
  explicit Scanner(std::string_view text) : Scanner(text.data(), text.data() + text.size()) {}

  const char* begin() const { return begin_; }
  const char* end() const { return end_; }
  const char* pos() const { return p_; }
  void set_pos(const char* p) { p_ = p; }
  std::uint64_t offset() const { return static_cast<std::uint64_t>(p_ - begin_); }
  bool eof() const { return p_ >= end_; }
  char peek() const { return *p_; }  // only when !eof()

  void skip_ws() {
    if (p_ < end_ && !is_ws(*p_)) return;  // most values follow ':' or ',' directly
    skip_ws_run();
  }
  // Skips whitespace, then consumes `c` if it is next.
  bool consume(char c) {
    skip_ws();
    if (p_ < end_ && *p_ == c) {
      ++p_;
      return true;
    }
    return false;
  }
  // What kind of value starts at the current position (after whitespace).
  Kind peek_kind() {
    skip_ws();
    return p_ < end_ ? kind_of(*p_) : Kind::kNone;
  }

  // Reads the string starting at the current '"'. On failure sets the error.
  bool scan_string(Token& t) {
    const char* start = ++p_;  // past the opening quote
    bool escaped = false;
    for (;;) {
      p_ = find_special(p_, end_);
      if (p_ >= end_) return fail_unterminated(start - 1);
      const char c = *p_;
      if (c == '"') break;
      if (c == '\\') {
        escaped = true;
        if (end_ - p_ < 2) return fail_unterminated(start - 1);
        p_ += 2;  // the escaped byte can never end the string
        continue;
      }
      laxness_.control_char = true;  // a raw control byte: tolerated, noted
      ++p_;
    }
    t.kind = Kind::kString;
    t.escaped = escaped;
    t.begin = start;
    t.end = p_++;
    return true;
  }
  // Reads a number or a nan/inf/true/false/null literal at the current position.
  bool scan_scalar(Token& t);
  // Reads any scalar; objects and arrays are left in place with t.kind set.
  bool scan_value(Token& t) {
    skip_ws();
    if (p_ >= end_) return fail_expected("a value");
    t.escaped = false;
    t.begin = p_;
    switch (*p_) {
      case '"':
        return scan_string(t);
      case '{':
        t.kind = Kind::kObject;
        t.end = p_;
        return true;
      case '[':
        t.kind = Kind::kArray;
        t.end = p_;
        return true;
      default:
        return scan_scalar(t);
    }
  }

  // Skips one value of any kind, checking its syntax (tolerantly) and noting laxness.
  bool skip_value() {
    skip_ws();
    if (p_ < end_) {  // scalars, the common case, without the container machinery
      Token t;
      if (*p_ == '"') return scan_string(t);
      if (*p_ != '{' && *p_ != '[') return scan_scalar(t);
    }
    return skip_any();
  }

  // Walks an object whose '{' was consumed: reads the next key and its ':' and leaves
  // the position at the value, which the caller must consume. `first` starts true.
  // Returns false after the closing '}' (consumed) or on an error (failed()).
  bool next_member(bool& first, Token& key) {
    if (!before_item(first, '}')) return false;
    if (*p_ != '"') return fail_expected("a string key");
    if (!scan_string(key)) return false;
    skip_ws();
    if (p_ >= end_ || *p_ != ':') return fail_expected("':' after an object key");
    ++p_;
    return true;
  }
  // Walks an array whose '[' was consumed, like next_member: true when a value follows.
  bool next_element(bool& first) { return before_item(first, ']'); }

  // The contents of a string token with escapes resolved: a view into the text when
  // there were none, else decoded into `scratch`. \u0000 stays a NUL byte; a lone
  // surrogate becomes U+FFFD; an unknown escape is kept as written.
  static std::string_view string_value(const Token& t, std::string& scratch) {
    if (!t.escaped) return t.text();
    decode_escapes(t.text(), scratch);
    return scratch;
  }
  static void decode_escapes(std::string_view raw, std::string& out);

  // Appends `value` (one complete JSON value, as skip_value accepts it) to `out` as
  // strict JSON: nan/inf -> null, trailing commas dropped, raw control bytes escaped.
  static void write_strict(std::string_view value, std::string& out);

  // Laxness seen since the last reset.
  const Laxness& laxness() const { return laxness_; }
  void reset_laxness() { laxness_ = Laxness{}; }

  // The first error: where it was and why. Errors are sticky; callers stop at one.
  bool failed() const { return failed_; }
  const char* error_at() const { return error_pos_; }
  const std::string& error_reason() const { return error_reason_; }
  bool fail(std::string reason) { return fail_at(p_, std::move(reason)); }
  // Forgets the error and goes on reading at `p` (recovery after a syntax error).
  void resume_at(const char* p) {
    failed_ = false;
    error_pos_ = nullptr;
    error_reason_.clear();
    p_ = p;
  }
  [[gnu::cold, gnu::noinline]] bool fail_at(const char* where, std::string reason);

  // Describes the byte at `p` for messages: "'x'", "byte 0x89", "the end of the text".
  std::string describe(const char* p) const;

  static bool is_ws(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
  static Kind kind_of(char c);

 private:
  bool skip_any();

  // Error paths, out of line so the inline scanning paths stay small.
  [[gnu::cold, gnu::noinline]] bool fail_unterminated(const char* quote);
  [[gnu::cold, gnu::noinline]] bool fail_expected(const char* what);  // "expected WHAT, found X"
  [[gnu::cold, gnu::noinline]] bool fail_ends_inside(char closer);
  [[gnu::cold, gnu::noinline]] bool fail_separator(char closer);

  // Consumes the ',' between items (or the closer, then returns false).
  bool before_item(bool& first, char closer) {
    skip_ws();
    if (p_ >= end_) return fail_ends_inside(closer);
    if (*p_ == closer) {
      ++p_;
      return false;
    }
    if (first) {
      first = false;
      return true;
    }
    if (*p_ != ',') return fail_separator(closer);
    ++p_;
    skip_ws();
    if (p_ < end_ && *p_ == closer) {
      laxness_.trailing_comma = true;
      ++p_;
      return false;
    }
    if (p_ >= end_) return fail_ends_inside(closer);
    return true;
  }

  // Pretty-printed traces (Kineto) put a newline and an indent before every member:
  // skip runs 16 bytes at a time.
  void skip_ws_run() {
#if defined(__SSE2__)
    while (end_ - p_ >= 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p_));
      const __m128i ws = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')),
                                                   _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'))),
                                      _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\r')),
                                                   _mm_cmpeq_epi8(v, _mm_set1_epi8('\t'))));
      const unsigned not_ws = ~static_cast<unsigned>(_mm_movemask_epi8(ws)) & 0xffffu;
      if (not_ws != 0) {
        p_ += __builtin_ctz(not_ws);
        return;
      }
      p_ += 16;
    }
#endif
    while (p_ < end_ && is_ws(*p_)) ++p_;
  }

  // The first '"', '\\' or control byte at or after p (or end).
  static const char* find_special(const char* p, const char* end) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i ctrl_max = _mm_set1_epi8(0x1f);
    while (end - p >= 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      // Unsigned v <= 0x1f  <=>  max(v, 0x1f) == 0x1f.
      const __m128i ctrl = _mm_cmpeq_epi8(_mm_max_epu8(v, ctrl_max), ctrl_max);
      const __m128i hit =
          _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)), ctrl);
      const unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(hit));
      if (mask != 0) return p + __builtin_ctz(mask);
      p += 16;
    }
#endif
    while (p < end) {
      const auto c = static_cast<unsigned char>(*p);
      if (c == '"' || c == '\\' || c < 0x20) return p;
      ++p;
    }
    return p;
  }

  const char* begin_;
  const char* end_;
  const char* p_;
  Laxness laxness_;
  bool failed_ = false;
  const char* error_pos_ = nullptr;
  std::string error_reason_;
};

// 1-based line and column (in bytes) of `offset` in `text`.
void line_column(std::string_view text, std::uint64_t offset, std::uint64_t& line,
                 std::uint64_t& column);

}  // namespace flopline::trace::json
