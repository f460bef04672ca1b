#include "flopline/capture/window_files.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <utility>

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

WindowFileWriter::WindowFileWriter(Hooks hooks, TimeNs grace_ns)
    : hooks_(std::move(hooks)), grace_ns_(grace_ns) {}

WindowFileWriter::~WindowFileWriter() = default;

bool WindowFileWriter::append(trace::Trace& t, const std::vector<CaptureWindowRecord>& windows,
                              TimeNs upto, bool holds_open, bool last, std::uint64_t kernels,
                              TimeNs time_base, const std::function<void(trace::Trace&)>& metadata,
                              std::string* error) {
  if (failed_) return false;
  const std::uint64_t events = t.slice_count() + t.instant_count() + t.counter_point_count();
  if (!file_) {
    const std::uint32_t w = window_for_new_file(windows, last_.window);
    if (w == 0) {
      events_without_file_ += events;  // late records of a finished window's file
      return true;
    }
    file_ = std::make_unique<trace::IncrementalTraceFile>(hooks_.path(w), time_base);
    file_window_ = w;
    file_kernels_ = 0;
    first_event_ = INT64_MAX;
  }
  file_kernels_ += kernels;
  if (events > 0) first_event_ = std::min(first_event_, t.time_bounds().first);
  if (!file_->append_all(t, error)) {
    failed_ = true;
    return false;
  }
  if (!last && !window_file_complete(windows, file_window_, upto, holds_open, grace_ns_)) {
    if (file_->started() && hooks_.appended && first_event_ != INT64_MAX) {
      hooks_.appended(file_->path(), file_->events(), upto - first_event_);
    }
    return true;
  }
  if (metadata) metadata(t);
  keep_only_capture_window(t, file_window_);
  if (events_without_file_ > 0) {
    t.info.emplace_back("events after their window's file was finished",
                        std::to_string(events_without_file_) + " (left out of every file)");
  }
  WindowFile f;
  f.window = file_window_;
  f.path = file_->path();
  f.ok = file_->finish(t, error);
  if (!f.ok && error != nullptr) f.error = *error;
  f.events = file_->events();
  f.kernels = file_kernels_;
  f.dropped_records = t.report.dropped_records;
  failed_ = !f.ok;
  last_ = f;
  file_.reset();
  if (hooks_.finished) hooks_.finished(f);
  return f.ok;
}

}  // namespace flopline::capture
