#include "sample_cli.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace flopline::samples {

SampleCli::SampleCli(std::string program, std::string summary, std::vector<OptionSpec> options)
    : program_(std::move(program)), summary_(std::move(summary)), options_(std::move(options)) {}

const OptionSpec* SampleCli::find(const std::string& name) const {
  for (const OptionSpec& o : options_) {
    if (o.name == name) return &o;
  }
  return nullptr;
}

std::string SampleCli::help_text() const {
  std::ostringstream out;
  out << "Usage: " << program_ << " [OPTIONS]\n\n" << summary_ << "\n\nOptions:\n";
  for (const OptionSpec& o : options_) {
    std::string head = "  --" + o.name + (o.value.empty() ? "" : " " + o.value);
    if (head.size() < 26)
      head.resize(26, ' ');
    else
      head += "  ";
    out << head << o.help;
    if (!o.fallback.empty()) out << " (default: " << o.fallback << ")";
    out << "\n";
  }
  out << "  --help                  this text\n";
  return out.str();
}

void SampleCli::fail(const std::string& message) const {
  std::fprintf(stderr, "%s: %s\nUsage: %s [OPTIONS]; %s --help lists them.\n", program_.c_str(),
               message.c_str(), program_.c_str(), program_.c_str());
  std::exit(2);
}

void SampleCli::parse(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(help_text().c_str(), stdout);
      std::exit(0);
    }
    if (arg.rfind("--", 0) != 0) fail("unexpected argument '" + arg + "'");
    std::string name = arg.substr(2);
    std::string value;
    bool inline_value = false;
    if (const auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      inline_value = true;
    }
    const OptionSpec* spec = find(name);
    if (spec == nullptr) fail("unknown option '--" + name + "'");
    if (spec->value.empty()) {
      if (inline_value) fail("--" + name + " takes no value");
    } else if (!inline_value) {
      if (i + 1 >= argc) fail("--" + name + " needs a value (" + spec->value + ")");
      value = argv[++i];
    }
    given_.emplace_back(name, value);
  }
}

bool SampleCli::flag(const std::string& name) const {
  for (const auto& [n, v] : given_) {
    if (n == name) return true;
  }
  return false;
}

std::string SampleCli::text(const std::string& name) const {
  std::string value;
  bool found = false;
  for (const auto& [n, v] : given_) {
    if (n == name) {
      value = v;  // the last one wins, as in argparse
      found = true;
    }
  }
  if (found) return value;
  const OptionSpec* spec = find(name);
  return spec != nullptr ? spec->fallback : std::string();
}

std::int64_t SampleCli::integer(const std::string& name) const {
  const std::string t = text(name);
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(t.c_str(), &end, 10);
  if (t.empty() || end == nullptr || *end != '\0' || errno != 0) {
    fail("--" + name + " wants an integer, got '" + t + "'");
  }
  return v;
}

double SampleCli::number(const std::string& name) const {
  const std::string t = text(name);
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (t.empty() || end == nullptr || *end != '\0')
    fail("--" + name + " wants a number, got '" + t + "'");
  return v;
}

namespace {
std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> parts;
  std::string cur;
  for (char c : text) {
    if (c == ',') {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  parts.push_back(cur);
  return parts;
}
}  // namespace

std::vector<std::int64_t> SampleCli::integers(const std::string& name) const {
  std::vector<std::int64_t> out;
  for (const std::string& p : split_commas(text(name))) {
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(p.c_str(), &end, 10);
    if (p.empty() || *end != '\0' || errno != 0 || v < 1) {
      fail("--" + name + " wants positive integers separated by commas, got '" + text(name) + "'");
    }
    out.push_back(v);
  }
  return out;
}

std::vector<std::string> SampleCli::words(const std::string& name,
                                          const std::vector<std::string>& allowed) const {
  std::vector<std::string> out;
  for (const std::string& p : split_commas(text(name))) {
    if (p == "all") {
      out.insert(out.end(), allowed.begin(), allowed.end());
      continue;
    }
    bool ok = false;
    for (const std::string& a : allowed) ok = ok || a == p;
    if (!ok) {
      std::string list;
      for (const std::string& a : allowed) list += (list.empty() ? "" : ", ") + a;
      fail("--" + name + ": '" + p + "' is not one of " + list + ", all");
    }
    out.push_back(p);
  }
  return out;
}

}  // namespace flopline::samples
