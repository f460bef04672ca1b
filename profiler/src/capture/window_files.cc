#include "flopline/capture/window_files.h"

#include <nlohmann/json.hpp>

#include <algorithm>

#include "flopline/capture/output_manifest.h"

namespace flopline::capture {

std::uint32_t window_for_new_file(const std::vector<CaptureWindowRecord>& windows,
                                  std::uint32_t last_finished) {
  if (windows.empty()) return 0;
  const std::uint32_t newest = windows.back().index;
  return newest > last_finished ? newest : 0;
}

bool window_file_complete(const std::vector<CaptureWindowRecord>& windows, std::uint32_t index,
                          TimeNs upto, bool decoder_holds_open, TimeNs grace_ns) {
  const auto it = std::find_if(windows.begin(), windows.end(),
                               [&](const CaptureWindowRecord& w) { return w.index == index; });
  if (it == windows.end() || it->open || it->end > upto) return false;
  const bool later_opened = windows.back().index > index;
  return !decoder_holds_open || later_opened || upto - it->end >= grace_ns;
}

std::string window_file_path(const std::string& path, std::uint32_t index) {
  return path_with_suffix(path, "window" + std::to_string(index));
}

bool is_window_file_path(std::string_view path) {
  for (std::string_view ext : {".json.gz", ".json"}) {
    if (path.ends_with(ext)) {
      path.remove_suffix(ext.size());
      break;
    }
  }
  std::size_t digits = 0;
  while (digits < path.size() && path[path.size() - 1 - digits] >= '0' &&
         path[path.size() - 1 - digits] <= '9') {
    ++digits;
  }
  if (digits == 0) return false;
  path.remove_suffix(digits);
  return path.ends_with("-window");
}

void keep_only_capture_window(trace::Trace& t, std::uint32_t index) {
  for (auto& [key, value] : t.extra_top_level) {
    if (key != "captureWindows") continue;
    nlohmann::json list = nlohmann::json::parse(value, nullptr, false);
    if (!list.is_array()) continue;
    nlohmann::json kept = nlohmann::json::array();
    for (const nlohmann::json& w : list) {
      if (w.is_object() && w.value("index", 0u) == index) kept.push_back(w);
    }
    value = kept.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  for (auto& [key, value] : t.info) {
    if (key == "capture windows") value = "1";
  }
  t.info.emplace_back("window file", "window " + std::to_string(index) + " of the run");
}

}  // namespace flopline::capture
