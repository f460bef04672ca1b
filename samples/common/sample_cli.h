// Command-line handling shared by the samples: `--name value` / `--name=value` options and
// flags, `--help`, and clear errors (unknown option, missing or malformed value) with a
// non-zero exit. Small on purpose: the samples should read like the scripts they copy.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace flopline::samples {

struct OptionSpec {
  std::string name;      // without the dashes: "size"
  std::string value;     // placeholder for the help text ("N"); empty for a flag
  std::string help;      // one line
  std::string fallback;  // default value as text (shown in --help); empty: none
};

// An option that takes a value, and one that does not.
inline OptionSpec value_option(std::string name, std::string value, std::string help,
                               std::string fallback = {}) {
  return {.name = std::move(name),
          .value = std::move(value),
          .help = std::move(help),
          .fallback = std::move(fallback)};
}
inline OptionSpec flag_option(std::string name, std::string help) {
  return {.name = std::move(name), .value = {}, .help = std::move(help), .fallback = {}};
}

class SampleCli {
 public:
  SampleCli(std::string program, std::string summary, std::vector<OptionSpec> options);

  // Parses argv. Prints the help and exits 0 for --help/-h; prints "PROGRAM: REASON" and
  // the usage line and exits 2 on an unknown option or a missing value.
  void parse(int argc, char** argv);

  bool flag(const std::string& name) const;             // given on the command line
  std::string text(const std::string& name) const;      // value or its default
  std::int64_t integer(const std::string& name) const;  // exits 2 when not an integer
  double number(const std::string& name) const;         // exits 2 when not a number
  // A comma-separated list ("128,256,512"), each an integer >= 1.
  std::vector<std::int64_t> integers(const std::string& name) const;
  // A comma-separated list of words, each one of `allowed` ("all" expands to all of them).
  std::vector<std::string> words(const std::string& name,
                                 const std::vector<std::string>& allowed) const;

  // Prints "PROGRAM: message" to stderr and exits 2 (a usage error).
  [[noreturn]] void fail(const std::string& message) const;
  std::string help_text() const;

 private:
  const OptionSpec* find(const std::string& name) const;
  std::string program_;
  std::string summary_;
  std::vector<OptionSpec> options_;
  std::vector<std::pair<std::string, std::string>> given_;  // name, value ("" for flags)
};

}  // namespace flopline::samples
