#include "cli_parse.h"

#include <climits>

namespace flopline::cli {
namespace {

std::string quoted(std::string_view s) {
  return concat("'", s, "'");
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

const OptionSpec* find_spec(std::span<const OptionSpec> specs, std::string_view name) {
  for (const OptionSpec& s : specs) {
    if (s.name == name || (!s.alias.empty() && s.alias == name)) return &s;
  }
  return nullptr;
}

}  // namespace

bool SplitArgs::has(std::string_view name) const {
  for (const auto& o : options) {
    if (o.first == name) return true;
  }
  return false;
}

Parsed<SplitArgs> split_args(std::span<const std::string> args, std::span<const OptionSpec> specs) {
  SplitArgs out;
  bool options_done = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    // "-" alone is an ordinary argument (a file name), as in most tools.
    if (options_done || a.size() < 2 || a[0] != '-') {
      out.positional.push_back(a);
      continue;
    }
    if (a == "--") {
      options_done = true;
      continue;
    }
    const auto eq = a.find('=');
    const std::string_view name = std::string_view(a).substr(0, eq);
    const OptionSpec* spec = find_spec(specs, name);
    if (spec == nullptr) return Parsed<SplitArgs>::fail(concat("unknown option ", quoted(name)));
    if (!spec->takes_value) {
      if (eq != std::string::npos) {
        return Parsed<SplitArgs>::fail(concat("option ", quoted(spec->name), " takes no value"));
      }
      out.options.emplace_back(std::string(spec->name), std::string());
      continue;
    }
    if (eq != std::string::npos) {
      out.options.emplace_back(std::string(spec->name), a.substr(eq + 1));
      continue;
    }
    // "--by --csv" is a forgotten value, not the value "--csv". A value that merely
    // starts with one dash ("--top -3") is taken and rejected by its own parser.
    if (i + 1 >= args.size() || args[i + 1].starts_with("--")) {
      return Parsed<SplitArgs>::fail(concat("option ", quoted(spec->name), " needs a value"));
    }
    out.options.emplace_back(std::string(spec->name), args[++i]);
  }
  return Parsed<SplitArgs>{std::move(out), {}};
}

Parsed<std::uint64_t> parse_positive_count(std::string_view text, std::string_view option) {
  using P = Parsed<std::uint64_t>;
  const std::string what = concat(option, " ", quoted(text));
  if (text.empty()) return P::fail(std::string(option) + " needs a positive integer");
  std::uint64_t v = 0;
  for (char c : text) {
    if (!is_digit(c)) return P::fail(what + " is not a positive integer");
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return P::fail(what + " is too large");
    v = v * 10 + d;
  }
  if (v == 0) return P::fail(what + " must be at least 1");
  return P{v, {}};
}

Parsed<trace::TimeNs> parse_duration_ns(std::string_view text, std::string_view option) {
  using P = Parsed<trace::TimeNs>;
  const std::string what = concat(option, " time ", quoted(text));
  const std::string hint = " (examples: 1500, 1500ns, 2.5us, 10ms, 1s)";
  if (text.empty()) return P::fail(concat(option, " needs a time", hint));
  if (text[0] == '-') return P::fail(what + " must not be negative");
  std::size_t i = 0;
  std::string_view whole, frac;
  while (i < text.size() && is_digit(text[i])) ++i;
  whole = text.substr(0, i);
  if (i < text.size() && text[i] == '.') {
    const std::size_t f0 = ++i;
    while (i < text.size() && is_digit(text[i])) ++i;
    frac = text.substr(f0, i - f0);
  }
  if (whole.empty() && frac.empty()) return P::fail(what + " is not a time" + hint);
  const std::string_view unit = text.substr(i);
  int scale_digits = 0;  // unit = 10^scale_digits ns
  if (unit.empty() || unit == "ns") {
    scale_digits = 0;
  } else if (unit == "us") {
    scale_digits = 3;
  } else if (unit == "ms") {
    scale_digits = 6;
  } else if (unit == "s") {
    scale_digits = 9;
  } else {
    return P::fail(concat(what, " has an unknown unit ", quoted(unit), "; use ns, us, ms or s"));
  }
  // Exact decimal arithmetic: whole * 10^k + the first k fraction digits, then round
  // on the next digit (halves up; the value is never negative).
  std::uint64_t scale = 1;
  for (int k = 0; k < scale_digits; ++k) scale *= 10;
  std::uint64_t ns = 0;
  for (char c : whole) {
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (ns > (static_cast<std::uint64_t>(INT64_MAX) - d) / 10)
      return P::fail(what + " is too large");
    ns = ns * 10 + d;
  }
  if (ns > static_cast<std::uint64_t>(INT64_MAX) / scale) return P::fail(what + " is too large");
  ns *= scale;
  std::uint64_t part = 0;
  for (int k = 0; k < scale_digits; ++k) {
    part =
        part * 10 +
        (static_cast<std::size_t>(k) < frac.size() ? static_cast<std::uint64_t>(frac[k] - '0') : 0);
  }
  if (static_cast<std::size_t>(scale_digits) < frac.size() && frac[scale_digits] >= '5') ++part;
  if (ns > static_cast<std::uint64_t>(INT64_MAX) - part) return P::fail(what + " is too large");
  return P{static_cast<trace::TimeNs>(ns + part), {}};
}

Parsed<RelativeRange> parse_range(std::string_view text, std::string_view option) {
  using P = Parsed<RelativeRange>;
  const auto colon = text.find(':');
  if (colon == std::string_view::npos || text.find(':', colon + 1) != std::string_view::npos) {
    return P::fail(concat(option, " ", quoted(text),
                          " is not a range; write T0:T1, T0: or :T1 (e.g. 5ms:10ms)"));
  }
  const std::string_view a = text.substr(0, colon), b = text.substr(colon + 1);
  if (a.empty() && b.empty()) {
    return P::fail(std::string(option) + " ':' names no bound; write T0:T1, T0: or :T1");
  }
  RelativeRange r;
  if (!a.empty()) {
    auto v = parse_duration_ns(a, option);
    if (!v.ok()) return P::fail(v.error);
    r.begin = v.value;
  }
  if (!b.empty()) {
    auto v = parse_duration_ns(b, option);
    if (!v.ok()) return P::fail(v.error);
    r.end = v.value;
  }
  if (r.begin && r.end && *r.end <= *r.begin) {
    return P::fail(concat(option, " ", quoted(text), " ends before it begins"));
  }
  return P{r, {}};
}

Parsed<std::vector<std::string>> parse_list(std::string_view text, std::string_view option) {
  using P = Parsed<std::vector<std::string>>;
  std::vector<std::string> out;
  std::string_view rest = text;
  while (true) {
    const auto comma = rest.find(',');
    const std::string_view item = trim(rest.substr(0, comma));
    if (item.empty()) {
      return P::fail(concat(option, " ", quoted(text), " has an empty item"));
    }
    out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return P{std::move(out), {}};
}

std::string usage_error(std::string_view command, std::string_view message) {
  // Built with append(): GCC 12 warns (-Wrestrict, a false positive) on chains of +.
  std::string prog = "flopline";
  if (!command.empty()) prog.append(" ").append(command);
  std::string s = prog;
  s.append(": ").append(message).append("\nRun '").append(prog).append(" --help' for usage.\n");
  return s;
}

}  // namespace flopline::cli
