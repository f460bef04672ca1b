#include "flopline/capture/calibration.h"

#include <cctype>
#include <cmath>

#include <nlohmann/json.hpp>

namespace flopline::capture {
namespace {

// Members keep the order they were written in, so peak_flops reads back in its order.
using Json = nlohmann::ordered_json;

// A measured rate: a finite number, above zero (or at least zero where `zero_ok`).
std::optional<double> rate_of(const Json& v, bool zero_ok) {
  if (!v.is_number()) return std::nullopt;
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < 0 || (d == 0 && !zero_ok)) return std::nullopt;
  return d;
}

}  // namespace

std::string_view calibrate_usage() {
  return "usage: flopline calibrate [--device N] [--size N] [--reps N] [-o PATH]\n"
         "\n"
         "Measures the achievable matrix-product rate per precision (cuBLAS, N x N x N,\n"
         "default 8192) and the device-to-device copy bandwidth (2 GiB, counted as read\n"
         "plus write), best of --reps (default 10), and stores them for later traces'\n"
         "\"% of peak\" (peak source \"calibrated\"). Default file:\n"
         "$FLOPLINE_PEAKS_FILE, else ~/.cache/flopline/peaks-<GPU uuid>.json.\n";
}

std::string format_calibration(const CalibratedPeaks& p) {
  Json flops = Json::object();
  for (const auto& [precision, rate] : p.peak_flops) flops[precision] = rate;
  const Json doc = {{"device", p.device},
                    {"uuid", p.uuid},
                    {"date", p.date},
                    {"peak_flops", std::move(flops)},
                    {"peak_bytes_per_s", p.peak_bytes_per_s}};
  return doc.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::optional<CalibratedPeaks> parse_calibration(std::string_view json) {
  const Json doc = Json::parse(json.begin(), json.end(), nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return std::nullopt;  // also what a parse error gives
  CalibratedPeaks p;
  for (const auto& [key, value] : doc.items()) {
    if (key == "device" || key == "uuid" || key == "date") {
      if (!value.is_string()) return std::nullopt;
      (key == "device" ? p.device : key == "uuid" ? p.uuid : p.date) = value.get<std::string>();
    } else if (key == "peak_flops") {
      if (!value.is_object()) return std::nullopt;
      for (const auto& [precision, rate] : value.items()) {
        const auto r = rate_of(rate, false);
        if (!r) return std::nullopt;
        p.peak_flops.emplace_back(precision, *r);
      }
    } else if (key == "peak_bytes_per_s") {
      const auto r = rate_of(value, true);
      if (!r) return std::nullopt;
      p.peak_bytes_per_s = *r;
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
