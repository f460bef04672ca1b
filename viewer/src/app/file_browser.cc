#include "file_browser.h"

#include <algorithm>
#include <system_error>

namespace flopline::viewer {
namespace {

bool ends_with_ci(std::string_view s, std::string_view suffix) {
  if (s.size() < suffix.size()) return false;
  for (std::size_t i = 0; i < suffix.size(); ++i) {
    char c = s[s.size() - suffix.size() + i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c + 32);
    if (c != suffix[i]) return false;
  }
  return true;
}

}  // namespace

bool is_trace_file_name(std::string_view name) {
  return ends_with_ci(name, ".json") || ends_with_ci(name, ".json.gz");
}

FileBrowser::FileBrowser(std::filesystem::path start) {
  if (!change_dir(start)) change_dir("/");
}

void FileBrowser::set_show_all(bool all) {
  show_all_ = all;
  refresh();
}

bool FileBrowser::change_dir(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path target = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  std::vector<BrowserEntry> list;
  fs::directory_iterator it(target, fs::directory_options::skip_permission_denied, ec);
  if (ec) {
    error_ = dir.string() + ": " + ec.message();
    return false;
  }
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    const fs::directory_entry& e = *it;
    std::string name = e.path().filename().string();
    if (name.empty() || name[0] == '.') continue;  // hidden files stay hidden
    std::error_code ec2;
    const bool is_dir = e.is_directory(ec2);
    if (!is_dir && !show_all_ && !is_trace_file_name(name)) continue;
    const std::uint64_t size = is_dir ? 0 : static_cast<std::uint64_t>(e.file_size(ec2));
    list.push_back({.name = std::move(name), .is_dir = is_dir, .size = ec2 ? 0 : size});
  }
  std::sort(list.begin(), list.end(), [](const BrowserEntry& a, const BrowserEntry& b) {
    if (a.is_dir != b.is_dir) return a.is_dir;
    return a.name < b.name;
  });
  dir_ = target;
  entries_ = std::move(list);
  error_.clear();
  return true;
}

}  // namespace flopline::viewer
