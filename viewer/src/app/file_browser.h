// The folder listing behind the in-app file dialog: folders first, then trace files
// (.json, .json.gz), each sorted by name; GL-free, unit-tested.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace flopline::viewer {

struct BrowserEntry {
  std::string name;
  bool is_dir = false;
  std::uint64_t size = 0;  // bytes, files only
};

// True for names a trace may have: *.json and *.json.gz (case-insensitive).
bool is_trace_file_name(std::string_view name);

class FileBrowser {
 public:
  explicit FileBrowser(std::filesystem::path start = std::filesystem::current_path());
  // Lists `dir`; on failure keeps the previous listing and sets error().
  bool change_dir(const std::filesystem::path& dir);
  bool up() { return change_dir(dir_.parent_path()); }
  bool refresh() { return change_dir(dir_); }
  // Every file, not only traces (for saving next to any file, or odd names).
  void set_show_all(bool all);
  bool show_all() const { return show_all_; }

  const std::filesystem::path& dir() const { return dir_; }
  const std::vector<BrowserEntry>& entries() const { return entries_; }
  const std::string& error() const { return error_; }

 private:
  std::filesystem::path dir_;
  std::vector<BrowserEntry> entries_;
  std::string error_;
  bool show_all_ = false;
};

}  // namespace flopline::viewer
