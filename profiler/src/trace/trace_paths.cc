#include "flopline/trace/trace_paths.h"

#include <algorithm>
#include <filesystem>

namespace flopline::trace {

bool looks_like_trace_file(const std::string& name) {
  return name.ends_with(".json") || name.ends_with(".json.gz");
}

std::vector<std::string> expand_trace_paths(const std::vector<std::string>& paths,
                                            std::string* error) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (!fs::is_directory(p, ec)) {
      out.push_back(p);
      continue;
    }
    std::vector<std::string> found;
    for (fs::directory_iterator it(p, ec), end; !ec && it != end; it.increment(ec)) {
      std::error_code ec2;
      if (it->is_regular_file(ec2) && looks_like_trace_file(it->path().filename().string())) {
        found.push_back(it->path().string());
      }
    }
    if (ec) {
      if (error) *error = p + ": cannot list the directory: " + ec.message();
      return {};
    }
    if (found.empty()) {
      if (error) *error = p + ": a directory with no trace files (*.json, *.json.gz) in it";
      return {};
    }
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

}  // namespace flopline::trace
