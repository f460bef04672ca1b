// The NVTX suffix grammar and payload rule documented in nvtx_flops.h.
#include "flopline/capture/nvtx_flops.h"

#include <algorithm>

#include <charconv>
#include <cmath>

namespace flopline::capture {
namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
char lower(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

// The multiplier of a scale letter (and optional "i"), or 0 when `s` is not one.
double scale_of(std::string_view s) {
  if (s.empty()) return 1;
  if (s.size() > 2 || (s.size() == 2 && s[1] != 'i')) return 0;
  int power = 0;
  switch (s[0]) {
    case 'k':
    case 'K':
      power = 1;
      break;
    case 'M':
      power = 2;
      break;
    case 'G':
      power = 3;
      break;
    case 'T':
      power = 4;
      break;
    case 'P':
      power = 5;
      break;
    default:
      return 0;
  }
  return s.size() == 2 ? std::ldexp(1.0, 10 * power) : std::pow(1000.0, power);
}

bool is_word_char(char c) {
  return is_digit(c) || c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// Stores one item's value; false when the key is unknown or repeated, or the value
// does not fit its key.
bool store_item(std::string_view key, std::string_view value, RangeCounts& out) {
  std::string* word = iequals(key, "precision") ? &out.precision
                      : iequals(key, "plan")    ? &out.plan
                                                : nullptr;
  if (word != nullptr) {
    if (!word->empty() || value.empty() || !std::all_of(value.begin(), value.end(), is_word_char)) {
      return false;
    }
    *word = std::string(value);
    return true;
  }
  std::optional<double>* slot = nullptr;
  if (iequals(key, "flops")) slot = &out.flops;
  if (iequals(key, "bytes")) slot = &out.bytes;
  if (slot == nullptr || slot->has_value()) return false;
  *slot = parse_count(value);
  return slot->has_value();
}

// Parses the items between the brackets; false when they do not follow the grammar.
bool parse_items(std::string_view body, RangeCounts& out) {
  body = trim(body);
  if (body.empty()) return false;
  std::size_t i = 0;
  while (true) {
    std::size_t k = i;
    while (k < body.size() &&
           ((body[k] >= 'a' && body[k] <= 'z') || (body[k] >= 'A' && body[k] <= 'Z')))
      ++k;
    const std::string_view key = body.substr(i, k - i);
    i = k;
    while (i < body.size() && is_blank(body[i])) ++i;
    if (i >= body.size() || body[i] != '=') return false;
    ++i;
    while (i < body.size() && is_blank(body[i])) ++i;
    std::size_t v = i;
    while (v < body.size() && !is_blank(body[v]) && body[v] != ',') ++v;
    if (!store_item(key, body.substr(i, v - i), out)) return false;
    i = v;
    if (i == body.size()) return true;
    // separator: blanks, or blanks around one comma
    bool comma = false;
    while (i < body.size() && (is_blank(body[i]) || (!comma && body[i] == ','))) {
      if (body[i] == ',') comma = true;
      ++i;
    }
    if (i == body.size()) return false;  // trim() removed trailing blanks, so a comma ended it
  }
}

}  // namespace

std::optional<double> parse_count(std::string_view text) {
  std::size_t i = 0;
  const std::size_t int_start = i;
  while (i < text.size() && is_digit(text[i])) ++i;
  bool digits = i > int_start;
  if (i < text.size() && text[i] == '.') {
    ++i;
    const std::size_t frac_start = i;
    while (i < text.size() && is_digit(text[i])) ++i;
    digits = digits || i > frac_start;
  }
  if (!digits) return std::nullopt;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    const std::size_t exp_start = i;
    while (i < text.size() && is_digit(text[i])) ++i;
    if (i == exp_start) return std::nullopt;
  }
  const double scale = scale_of(text.substr(i));
  if (scale == 0) return std::nullopt;
  double value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + i, value);
  // Out of range (1e999) is refused rather than clamped.
  if (ec != std::errc() || ptr != text.data() + i) return std::nullopt;
  value *= scale;
  if (!std::isfinite(value) || value < 0) return std::nullopt;
  return value;
}

ParsedRangeMessage parse_range_message(std::string_view message) {
  ParsedRangeMessage r;
  r.name = message;
  std::string_view s = message;
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  if (s.empty() || s.back() != ']') return r;
  const std::size_t open = s.rfind('[');
  if (open == std::string_view::npos) return r;
  RangeCounts counts;
  if (!parse_items(s.substr(open + 1, s.size() - open - 2), counts)) return r;
  std::string_view name = s.substr(0, open);
  while (!name.empty() && is_blank(name.back())) name.remove_suffix(1);
  r.name = name;
  r.counts = counts;
  r.has_suffix = true;
  return r;
}

std::string format_range_message(std::string_view name, const RangeCounts& counts) {
  std::string out(name);
  const bool flops = counts.flops && std::isfinite(*counts.flops) && *counts.flops >= 0;
  const bool bytes = counts.bytes && std::isfinite(*counts.bytes) && *counts.bytes >= 0;
  // A precision or plan is written only when it is a word of the grammar, so it reads back.
  auto is_word = [](const std::string& w) {
    return !w.empty() && std::all_of(w.begin(), w.end(), is_word_char);
  };
  const bool precision = is_word(counts.precision);
  const bool plan = is_word(counts.plan);
  if (!flops && !bytes && !precision && !plan) return out;
  auto append = [&out](std::string_view key, double v) {
    out += key;
    char buf[32];
    const auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, ec == std::errc() ? ptr : buf);
  };
  out += out.empty() ? "[" : " [";
  if (flops) append("flops=", *counts.flops);
  if (flops && bytes) out += ' ';
  if (bytes) append("bytes=", *counts.bytes);
  if (precision) {
    if (flops || bytes) out += ' ';
    out += "precision=";
    out += counts.precision;
  }
  if (plan) {
    if (flops || bytes || precision) out += ' ';
    out += "plan=";
    out += counts.plan;
  }
  out += ']';
  return out;
}

std::optional<double> payload_flops(PayloadKind kind, std::uint64_t u64, std::int64_t i64,
                                    double f64) {
  switch (kind) {
    case PayloadKind::kUint64:
      return static_cast<double>(u64);
    case PayloadKind::kInt64:
      if (i64 < 0) return std::nullopt;
      return static_cast<double>(i64);
    case PayloadKind::kDouble:
      if (!std::isfinite(f64) || f64 < 0) return std::nullopt;
      return f64;
    case PayloadKind::kNone:
      break;
  }
  return std::nullopt;
}

}  // namespace flopline::capture
