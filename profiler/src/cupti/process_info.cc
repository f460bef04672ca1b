#include "process_info.h"

#include <unistd.h>

#include <fstream>
#include <iterator>

namespace flopline::cupti {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

std::string first_line(std::string s) {
  const std::size_t nl = s.find('\n');
  if (nl != std::string::npos) s.resize(nl);
  return s;
}

}  // namespace

std::string process_name() {
  return first_line(read_file("/proc/self/comm"));
}

std::string process_command_line() {
  std::string s = read_file("/proc/self/cmdline");
  while (!s.empty() && s.back() == '\0') s.pop_back();
  for (char& c : s) {
    if (c == '\0') c = ' ';
  }
  return s;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return {};
  return buf;
}

std::string thread_name(std::uint32_t tid) {
  return first_line(read_file("/proc/self/task/" + std::to_string(tid) + "/comm"));
}

}  // namespace flopline::cupti
