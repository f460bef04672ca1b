// Command-line parsing helpers shared by the `flopline` commands: a table-driven
// option splitter and the value parsers (counts, durations with units, time ranges,
// comma lists). Every parser reports a message that names the problem; the caller
// prints it with a usage hint and exits with kExitUsage.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flopline/trace/types.h"

namespace flopline::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // the input could not be used (reader error, no match)
inline constexpr int kExitUsage = 2;    // the command line is wrong

// Joins pieces of text. Used instead of chains of operator+ that start with a literal,
// on which GCC 12 gives false -Wrestrict warnings.
template <class... Parts>
std::string concat(const Parts&... parts) {
  std::string s;
  (s.append(std::string_view(parts)), ...);
  return s;
}

// A value or the reason there is none.
template <class T>
struct Parsed {
  std::optional<T> value;
  std::string error;
  bool ok() const { return value.has_value(); }
  static Parsed fail(std::string why) { return Parsed{std::nullopt, std::move(why)}; }
};

struct OptionSpec {
  std::string_view name;  // "--by"
  bool takes_value = false;
  std::string_view alias = {};  // "-h" for "--help"
};

struct SplitArgs {
  std::vector<std::pair<std::string, std::string>> options;  // (spec name, value or "")
  std::vector<std::string> positional;
  bool has(std::string_view name) const;
};

// Splits a command's arguments into options and positional arguments. Accepts
// "--name value", "--name=value", options before and after positionals, and "--"
// to end options. Errors: unknown option, missing value (end of arguments, or the
// next argument is itself an option), a value given to a flag.
Parsed<SplitArgs> split_args(std::span<const std::string> args, std::span<const OptionSpec> specs);

// A positive decimal integer that fits in 64 bits ("--top 10").
Parsed<std::uint64_t> parse_positive_count(std::string_view text, std::string_view option);

// A non-negative duration: digits, optional fraction, optional unit ns|us|ms|s (none
// = ns). Fractions finer than 1 ns are rounded to nearest, halves up.
Parsed<trace::TimeNs> parse_duration_ns(std::string_view text, std::string_view option);

// "T0:T1", "T0:" or ":T1": relative times (see parse_duration_ns); T1 must be after T0.
struct RelativeRange {
  std::optional<trace::TimeNs> begin;  // ns after the trace's first event
  std::optional<trace::TimeNs> end;
};
Parsed<RelativeRange> parse_range(std::string_view text, std::string_view option);

// "a,b,c" -> {"a","b","c"}; blanks around items are dropped; an empty item is an error.
Parsed<std::vector<std::string>> parse_list(std::string_view text, std::string_view option);

// Formats the usage-error text: "flopline CMD: MESSAGE\nRun 'flopline CMD --help' ...".
std::string usage_error(std::string_view command, std::string_view message);

}  // namespace flopline::cli
