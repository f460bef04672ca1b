#include "trace/json_scanner.h"

#include <cstdio>
#include <cstring>

namespace flopline::trace::json {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_letter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool equals_lower(std::string_view word, std::string_view lower) {
  if (word.size() != lower.size()) return false;
  for (std::size_t i = 0; i < word.size(); ++i) {
    char c = word[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != lower[i]) return false;
  }
  return true;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Four hex digits at p (p + 4 <= end), or -1.
long hex4(const char* p, const char* end) {
  if (end - p < 4) return -1;
  long v = 0;
  for (int i = 0; i < 4; ++i) {
    const int h = hex_value(p[i]);
    if (h < 0) return -1;
    v = v * 16 + h;
  }
  return v;
}

void append_utf8(std::string& out, unsigned long cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

}  // namespace

Kind Scanner::kind_of(char c) {
  switch (c) {
    case '{':
      return Kind::kObject;
    case '[':
      return Kind::kArray;
    case '"':
      return Kind::kString;
    case 't':
      return Kind::kTrue;
    case 'f':
      return Kind::kFalse;
    case 'n':
      return Kind::kNull;  // or nan: scan_scalar tells
    case 'N':
    case 'I':
    case 'i':
      return Kind::kNonFinite;
    default:
      return c == '-' || is_digit(c) ? Kind::kNumber : Kind::kNone;
  }
}

bool Scanner::scan_scalar(Token& t) {
  const char* start = p_;
  const char* q = p_;
  if (q < end_ && *q == '-') ++q;
  if (q < end_ && is_digit(*q)) {
    // JSON's number grammar, with leading zeros tolerated.
    while (q < end_ && is_digit(*q)) ++q;
    if (q < end_ && *q == '.') {
      ++q;
      if (q >= end_ || !is_digit(*q)) return fail_at(start, "malformed number");
      while (q < end_ && is_digit(*q)) ++q;
    }
    if (q < end_ && (*q == 'e' || *q == 'E')) {
      ++q;
      if (q < end_ && (*q == '+' || *q == '-')) ++q;
      if (q >= end_ || !is_digit(*q)) return fail_at(start, "malformed number");
      while (q < end_ && is_digit(*q)) ++q;
    }
    t.kind = Kind::kNumber;
    t.escaped = false;
    t.begin = start;
    t.end = p_ = q;
    return true;
  }
  const char* word = q;
  while (q < end_ && is_letter(*q)) ++q;
  const std::string_view w(word, static_cast<std::size_t>(q - word));
  const bool negative = word != start;
  Kind kind = Kind::kNone;
  if (equals_lower(w, "nan") || equals_lower(w, "inf") || equals_lower(w, "infinity")) {
    kind = Kind::kNonFinite;
  } else if (!negative && w == "true") {
    kind = Kind::kTrue;
  } else if (!negative && w == "false") {
    kind = Kind::kFalse;
  } else if (!negative && w == "null") {
    kind = Kind::kNull;
  }
  if (kind == Kind::kNone) {
    if (w.empty()) return fail_at(start, "expected a value, found " + describe(q));
    return fail_at(start, "unknown word '" + std::string(w.substr(0, 32)) + "'");
  }
  if (kind == Kind::kNonFinite) laxness_.non_finite = true;
  t.kind = kind;
  t.escaped = false;
  t.begin = start;
  t.end = p_ = q;
  return true;
}

// Iterative, with the open containers on an explicit stack: no recursion, so no
// input can exhaust the C++ stack.
bool Scanner::skip_any() {
  char closers[kMaxDepth];
  int depth = 0;
  Token t;
  enum class Next { kValue, kKey, kAfter } next = Next::kValue;
  for (;;) {
    skip_ws();
    if (p_ >= end_) {
      return depth == 0 ? fail_expected("a value") : fail_ends_inside(closers[depth - 1]);
    }
    const char c = *p_;
    switch (next) {
      case Next::kValue:
        if (c == '{' || c == '[') {
          if (depth == kMaxDepth)
            return fail("nesting deeper than " + std::to_string(kMaxDepth) + " levels");
          closers[depth++] = c == '{' ? '}' : ']';
          ++p_;
          skip_ws();
          if (p_ < end_ && *p_ == closers[depth - 1]) {  // empty container
            ++p_;
            --depth;
            next = Next::kAfter;
          } else {
            next = c == '{' ? Next::kKey : Next::kValue;
          }
        } else {
          if (!(c == '"' ? scan_string(t) : scan_scalar(t))) return false;
          next = Next::kAfter;
        }
        break;
      case Next::kKey:
        if (c != '"') return fail_expected("a string key");
        if (!scan_string(t)) return false;
        skip_ws();
        if (p_ >= end_ || *p_ != ':') return fail_expected("':' after an object key");
        ++p_;
        next = Next::kValue;
        break;
      case Next::kAfter:
        if (depth == 0) return true;
        if (c == ',') {
          ++p_;
          skip_ws();
          if (p_ < end_ && *p_ == closers[depth - 1]) {
            laxness_.trailing_comma = true;
            ++p_;
            --depth;
          } else {
            next = closers[depth - 1] == '}' ? Next::kKey : Next::kValue;
          }
        } else if (c == closers[depth - 1]) {
          ++p_;
          --depth;
        } else {
          return fail_separator(closers[depth - 1]);
        }
        break;
    }
    if (next == Next::kAfter && depth == 0) return true;
  }
}

void Scanner::decode_escapes(std::string_view raw, std::string& out) {
  out.clear();
  const char* p = raw.data();
  const char* end = p + raw.size();
  while (p < end) {
    const char* bs =
        static_cast<const char*>(std::memchr(p, '\\', static_cast<std::size_t>(end - p)));
    if (bs == nullptr) {
      out.append(p, end);
      return;
    }
    out.append(p, bs);
    p = bs + 1;
    if (p >= end) {  // a lone trailing backslash: keep it
      out += '\\';
      return;
    }
    const char e = *p++;
    switch (e) {
      case '"':
      case '\\':
      case '/':
        out += e;
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        long cp = hex4(p, end);
        if (cp < 0) {  // malformed: keep as written
          out += "\\u";
          break;
        }
        p += 4;
        if (cp >= 0xd800 && cp <= 0xdbff) {
          const long lo = end - p >= 6 && p[0] == '\\' && p[1] == 'u' ? hex4(p + 2, end) : -1;
          if (lo >= 0xdc00 && lo <= 0xdfff) {
            cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            p += 6;
          } else {
            cp = 0xfffd;
          }
        } else if (cp >= 0xdc00 && cp <= 0xdfff) {
          cp = 0xfffd;
        }
        append_utf8(out, static_cast<unsigned long>(cp));
        break;
      }
      default:  // not a JSON escape: keep both bytes
        out += '\\';
        out += e;
        break;
    }
  }
}

void Scanner::write_strict(std::string_view value, std::string& out) {
  Scanner s(value);
  bool pending_comma = false;  // emitted only if another value follows in its container
  Token t;
  for (;;) {
    s.skip_ws();
    if (s.eof()) return;
    const char c = s.peek();
    if (c == '}' || c == ']') {
      pending_comma = false;
      out += c;
      s.set_pos(s.pos() + 1);
      continue;
    }
    if (c == ',') {
      pending_comma = true;
      s.set_pos(s.pos() + 1);
      continue;
    }
    if (c == ':') {
      out += c;
      s.set_pos(s.pos() + 1);
      continue;
    }
    if (pending_comma) out += ',';
    pending_comma = false;
    if (c == '{' || c == '[') {
      out += c;
      s.set_pos(s.pos() + 1);
    } else if (c == '"') {
      if (!s.scan_string(t)) return;
      out += '"';
      for (const char* p = t.begin; p < t.end; ++p) {
        const auto b = static_cast<unsigned char>(*p);
        if (b < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", b);
          out += buf;
        } else {
          out += *p;
        }
      }
      out += '"';
    } else {
      if (!s.scan_scalar(t)) return;
      if (t.kind == Kind::kNonFinite) {
        out += "null";
      } else {
        out.append(t.begin, t.end);
      }
    }
  }
}

bool Scanner::fail_at(const char* where, std::string reason) {
  if (!failed_) {
    failed_ = true;
    error_pos_ = where < end_ ? where : end_;
    error_reason_ = std::move(reason);
  }
  p_ = end_;  // nothing more is read after an error
  return false;
}

bool Scanner::fail_unterminated(const char* quote) {
  return fail_at(quote, "unterminated string");
}

bool Scanner::fail_expected(const char* what) {
  return fail(std::string("expected ") + what + ", found " + describe(p_));
}

bool Scanner::fail_ends_inside(char closer) {
  return fail(std::string("the text ends inside an ") + (closer == '}' ? "object" : "array"));
}

bool Scanner::fail_separator(char closer) {
  return fail(std::string("expected ',' or '") + closer + "', found " + describe(p_));
}

std::string Scanner::describe(const char* p) const {
  if (p >= end_) return "the end of the text";
  const auto c = static_cast<unsigned char>(*p);
  if (c > 0x20 && c < 0x7f) return std::string("'") + static_cast<char>(c) + "'";
  char buf[16];
  std::snprintf(buf, sizeof buf, "byte 0x%02x", c);
  return buf;
}

void line_column(std::string_view text, std::uint64_t offset, std::uint64_t& line,
                 std::uint64_t& column) {
  if (offset > text.size()) offset = text.size();
  line = 1;
  std::uint64_t line_start = 0;
  const char* p = text.data();
  const char* end = p + offset;
  while (p < end) {
    const char* nl =
        static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
    if (nl == nullptr) break;
    ++line;
    line_start = static_cast<std::uint64_t>(nl + 1 - text.data());
    p = nl + 1;
  }
  column = offset - line_start + 1;
}

}  // namespace flopline::trace::json
