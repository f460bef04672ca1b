// json_value.h on top of the reader's scanner, so args text is read with exactly the
// tolerance it was accepted with.
#include "flopline/trace/json_value.h"

#include <cmath>

#include "trace/json_scanner.h"
#include "trace/time_text.h"

namespace flopline::trace {
namespace {

// Calls fn(key_token, value_text) for each member until fn returns false.
template <typename Fn>
void for_each_member(std::string_view object_text, Fn&& fn) {
  json::Scanner s(object_text);
  if (!s.consume('{')) return;
  bool first = true;
  json::Token key;
  while (s.next_member(first, key)) {
    s.skip_ws();
    const char* value_begin = s.pos();
    if (!s.skip_value()) return;
    if (!fn(key, std::string_view(value_begin, static_cast<std::size_t>(s.pos() - value_begin))))
      return;
  }
}

// The single scalar token that is all of `value_text` (surrounding spaces aside).
bool single_token(std::string_view value_text, json::Token& t) {
  json::Scanner s(value_text);
  s.skip_ws();
  if (s.eof() || !s.scan_value(t)) return false;
  if (t.kind == json::Kind::kObject || t.kind == json::Kind::kArray) return false;
  s.skip_ws();
  return s.eof();
}

std::optional<double> number_text(std::string_view text) {
  double v = 0;
  if (!parse_double(text, v)) return std::nullopt;
  return v;
}

std::optional<std::int64_t> int_text(std::string_view text) {
  std::int64_t v = 0;
  if (parse_int64(text, v)) return v;
  // 1e3, 42.0: integral values written another way.
  double d = 0;
  if (!parse_double(text, d) || !std::isfinite(d) || d != std::floor(d)) return std::nullopt;
  if (decimal_to_int(text, 0, v) != NumberStatus::kOk) return std::nullopt;
  return v;
}

}  // namespace

std::optional<std::string_view> json_member(std::string_view object_text, std::string_view key) {
  std::optional<std::string_view> found;
  std::string scratch;
  for_each_member(object_text, [&](const json::Token& k, std::string_view value) {
    if (json::Scanner::string_value(k, scratch) != key) return true;
    found = value;
    return false;
  });
  return found;
}

std::vector<std::pair<std::string, std::string_view>> json_members(std::string_view object_text) {
  std::vector<std::pair<std::string, std::string_view>> members;
  std::string scratch;
  for_each_member(object_text, [&](const json::Token& k, std::string_view value) {
    members.emplace_back(std::string(json::Scanner::string_value(k, scratch)), value);
    return true;
  });
  return members;
}

std::optional<double> json_number(std::string_view value_text) {
  json::Token t;
  if (!single_token(value_text, t)) return std::nullopt;
  switch (t.kind) {
    case json::Kind::kNumber:
    case json::Kind::kNonFinite:
      return number_text(t.text());
    case json::Kind::kTrue:
      return 1.0;
    case json::Kind::kFalse:
      return 0.0;
    case json::Kind::kString: {
      std::string scratch;
      return number_text(json::Scanner::string_value(t, scratch));
    }
    default:
      return std::nullopt;
  }
}

std::optional<std::int64_t> json_int(std::string_view value_text) {
  json::Token t;
  if (!single_token(value_text, t)) return std::nullopt;
  switch (t.kind) {
    case json::Kind::kNumber:
      return int_text(t.text());
    case json::Kind::kTrue:
      return 1;
    case json::Kind::kFalse:
      return 0;
    case json::Kind::kString: {
      std::string scratch;
      return int_text(json::Scanner::string_value(t, scratch));
    }
    default:
      return std::nullopt;
  }
}

std::optional<std::string> json_string(std::string_view value_text) {
  json::Token t;
  if (!single_token(value_text, t) || t.kind != json::Kind::kString) return std::nullopt;
  std::string out;
  if (t.escaped) {
    json::Scanner::decode_escapes(t.text(), out);
  } else {
    out.assign(t.begin, t.end);
  }
  return out;
}

}  // namespace flopline::trace
