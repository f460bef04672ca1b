// Counter track titles, units, value text and scale. See counter_format.h.
#include "core/counter_format.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "core/si_format.h"

namespace flopline::viewer {

std::string counter_track_name(std::string_view name, std::string_view key) {
  if (key.empty() || key == name || key == "value") return std::string(name);
  if (name.empty()) return std::string(key);
  return std::string(name) + ": " + std::string(key);
}

std::string counter_unit(std::string_view title) {
  static constexpr std::array<std::string_view, 20> kUnits = {
      "%",      "B/s",     "kB/s",    "KB/s", "MB/s", "GB/s", "TB/s", "KiB/s", "MiB/s", "GiB/s",
      "FLOP/s", "GFLOP/s", "TFLOP/s", "B",    "kB",   "KB",   "MB",   "GB",    "bytes", "W"};
  // The last word, without brackets around it: "read (GB/s)" -> "GB/s".
  while (!title.empty() && (title.back() == ' ' || title.back() == ')' || title.back() == ']'))
    title.remove_suffix(1);
  const std::size_t space = title.find_last_of(" ([");
  std::string_view last = space == std::string_view::npos ? title : title.substr(space + 1);
  // "SM active%": a percent sign ends a word too.
  if (last.size() > 1 && last.back() == '%') return "%";
  if (last == title && last != "%") return "";  // a one-word title names a thing, not a unit
  for (std::string_view u : kUnits) {
    if (last == u) return std::string(u);
  }
  return "";
}

std::string format_counter_value(double v, std::string_view unit) {
  if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
  char buf[64];
  if (unit.empty()) return format_si(v);
  // Three significant digits without exponents ("3010", "87.3", "0.0123").
  const double a = std::fabs(v);
  std::snprintf(buf, sizeof buf, a >= 1000 ? "%.0f" : (a >= 1e-3 || a == 0 ? "%.3g" : "%.2e"), v);
  return std::string(buf) + " " + std::string(unit);
}

std::string counter_source(std::string_view cat) {
  if (cat == "gpu_metrics") {
    return "CUPTI PM sampling (flopline run --gpu-metrics): device-wide, each value over one "
           "sampling interval from its time";
  }
  return "the trace's counter events (\"ph\":\"C\"), each value holding until the next";
}

float CounterScale::y_of(double v, float top, float height) const {
  const double f = hi > lo ? (v - lo) / (hi - lo) : 0.0;
  return top + height - static_cast<float>(std::clamp(f, 0.0, 1.0)) * height;
}

CounterScale counter_scale(const ValueRange& shown, std::string_view unit) {
  CounterScale s;
  if (shown.empty) {
    s.hi = unit == "%" ? 100 : 1;
    return s;
  }
  s.lo = std::min(0.0, shown.min);
  s.hi = std::max(shown.max, unit == "%" ? 100.0 : 0.0);
  if (s.hi <= s.lo) s.hi = s.lo + 1;  // all values equal (to 0, or negative)
  return s;
}

}  // namespace flopline::viewer
