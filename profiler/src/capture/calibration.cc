#include "flopline/capture/calibration.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "flopline/trace/json_text.h"

namespace flopline::capture {
namespace {

std::string number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6e", v);
  return buf;
}

// A small reader for the flat format above: enough to read back what
// format_calibration writes, tolerant of whitespace and member order.
class Scanner {
 public:
  explicit Scanner(std::string_view s) : s_(s) {}
  void blanks() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool eat(char c) {
    blanks();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  std::optional<std::string> string() {
    if (!eat('"')) return std::nullopt;
    std::string out;
    while (i_ < s_.size() && s_[i_] != '"') {
      if (s_[i_] == '\\' && i_ + 1 < s_.size()) ++i_;  // the names we write need no more
      out += s_[i_++];
    }
    if (i_ >= s_.size()) return std::nullopt;
    ++i_;
    return out;
  }
  std::optional<double> num() {
    blanks();
    std::size_t j = i_;
    while (j < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[j])) || s_[j] == '.' ||
                             s_[j] == 'e' || s_[j] == 'E' || s_[j] == '+' || s_[j] == '-')) {
      ++j;
    }
    double v = 0;
    const auto [end, ec] = std::from_chars(s_.data() + i_, s_.data() + j, v);
    if (ec != std::errc() || end != s_.data() + j || j == i_) return std::nullopt;
    i_ = j;
    return v;
  }

 private:
  std::string_view s_;
  std::size_t i_ = 0;
};

}  // namespace

std::string format_calibration(const CalibratedPeaks& p) {
  std::string s = "{\"device\":";
  trace::append_json_string(s, p.device);
  s += ",\"uuid\":";
  trace::append_json_string(s, p.uuid);
  s += ",\"date\":";
  trace::append_json_string(s, p.date);
  s += ",\"peak_flops\":{";
  for (std::size_t i = 0; i < p.peak_flops.size(); ++i) {
    if (i > 0) s += ',';
    trace::append_json_string(s, p.peak_flops[i].first);
    s += ':' + number(p.peak_flops[i].second);
  }
  s += "},\"peak_bytes_per_s\":" + number(p.peak_bytes_per_s) + "}\n";
  return s;
}

std::optional<CalibratedPeaks> parse_calibration(std::string_view json) {
  Scanner sc(json);
  CalibratedPeaks p;
  if (!sc.eat('{')) return std::nullopt;
  bool first = true;
  while (!sc.eat('}')) {
    if (!first && !sc.eat(',')) return std::nullopt;
    first = false;
    const auto key = sc.string();
    if (!key || !sc.eat(':')) return std::nullopt;
    if (*key == "device" || *key == "uuid" || *key == "date") {
      auto v = sc.string();
      if (!v) return std::nullopt;
      (*key == "device" ? p.device : *key == "uuid" ? p.uuid : p.date) = std::move(*v);
    } else if (*key == "peak_flops") {
      if (!sc.eat('{')) return std::nullopt;
      bool first_item = true;
      while (!sc.eat('}')) {
        if (!first_item && !sc.eat(',')) return std::nullopt;
        first_item = false;
        auto name = sc.string();
        if (!name || !sc.eat(':')) return std::nullopt;
        auto v = sc.num();
        if (!v || !std::isfinite(*v) || *v <= 0) return std::nullopt;
        p.peak_flops.emplace_back(std::move(*name), *v);
      }
    } else if (*key == "peak_bytes_per_s") {
      auto v = sc.num();
      if (!v || !std::isfinite(*v) || *v < 0) return std::nullopt;
      p.peak_bytes_per_s = *v;
    } else {
      return std::nullopt;
    }
  }
  if (p.peak_flops.empty() && p.peak_bytes_per_s <= 0) return std::nullopt;
  return p;
}

std::string calibration_path(std::string_view uuid, std::string_view device_name,
                             const GetEnv& getenv) {
  if (const char* f = getenv("FLOPLINE_PEAKS_FILE"); f != nullptr && *f != '\0') return f;
  std::string dir;
  if (const char* x = getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0') {
    dir = x;
  } else if (const char* h = getenv("HOME"); h != nullptr && *h != '\0') {
    dir = std::string(h) + "/.cache";
  } else {
    dir = "/tmp";
  }
  std::string id(uuid.empty() ? device_name : uuid);
  for (char& c : id) {
    const bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
    if (!ok) c = '_';
  }
  if (id.empty()) id = "unknown";
  return dir + "/flopline/peaks-" + id + ".json";
}

void apply_calibration(trace::DeviceProperties& device, const CalibratedPeaks& peaks) {
  for (const auto& [precision, flops] : peaks.peak_flops) {
    bool replaced = false;
    for (auto& [name, value] : device.peak_flops) {
      if (name == precision) {
        value = flops;
        replaced = true;
      }
    }
    if (!replaced) device.peak_flops.emplace_back(precision, flops);
  }
  if (peaks.peak_bytes_per_s > 0) device.peak_bytes_per_s = peaks.peak_bytes_per_s;
  device.peak_source = "calibrated";
}

}  // namespace flopline::capture
