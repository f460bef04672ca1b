#include "flopline/trace/trace_paths.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <utility>

#include <sys/stat.h>

namespace flopline::trace {

bool looks_like_trace_file(const std::string& name) {
  return name.ends_with(".json") || name.ends_with(".json.gz");
}

TraceFiles find_trace_files(const std::vector<std::string>& paths, std::string* error) {
  namespace fs = std::filesystem;
  TraceFiles out;
  std::map<std::pair<dev_t, ino_t>, std::string> seen;  // file identity -> first path
  auto add = [&](const std::string& path, bool from_directory) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0) {
      auto [it, fresh] = seen.try_emplace({st.st_dev, st.st_ino}, path);
      if (!fresh) {
        out.notes.push_back(path + " is the same file as " + it->second + ": read once");
        return;
      }
    }
    out.paths.push_back(path);
    out.from_directory.push_back(from_directory);
  };
  for (const std::string& p : paths) {
    std::error_code ec;
    if (!fs::is_directory(p, ec)) {
      add(p, false);
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
    for (const std::string& f : found) add(f, true);
  }
  return out;
}

std::vector<std::string> expand_trace_paths(const std::vector<std::string>& paths,
                                            std::string* error) {
  return find_trace_files(paths, error).paths;
}

}  // namespace flopline::trace
