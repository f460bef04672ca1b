// flopline-calibrate: measures achievable matmul FLOP/s per precision and the
// device-to-device copy bandwidth of one GPU, and stores them where captures look for
// them (flopline/capture/calibration.h). Run through `flopline calibrate`.
#include <sys/stat.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>
#include <string_view>

#include "calibrate_gpu.h"
#include "flopline/capture/calibration.h"

namespace {

int usage(int rc) {
  const std::string_view text = flopline::capture::calibrate_usage();
  std::fwrite(text.data(), 1, text.size(), rc == 0 ? stdout : stderr);
  return rc;
}

bool parse_int(std::string_view s, int& v, int min) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && end == s.data() + s.size() && v >= min;
}

void make_parents(const std::string& path) {
  for (std::size_t i = 1; i < path.size(); ++i) {
    if (path[i] == '/') mkdir(path.substr(0, i).c_str(), 0755);
  }
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  int device = 0, size = 8192, reps = 10;
  std::string output;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "-h" || a == "--help") return usage(0);
    if (a == "--device" && has_value && parse_int(argv[i + 1], device, 0)) {
      ++i;
    } else if (a == "--size" && has_value && parse_int(argv[i + 1], size, 256)) {
      ++i;
    } else if (a == "--reps" && has_value && parse_int(argv[i + 1], reps, 1)) {
      ++i;
    } else if ((a == "-o" || a == "--output") && has_value) {
      output = argv[++i];
    } else {
      std::fprintf(stderr, "flopline calibrate: bad argument '%s'\n", argv[i]);
      return usage(2);
    }
  }
  const auto r = flopline::calibrate::measure(device, size, std::size_t{2} << 30, reps);
  if (!r.ok) {
    std::fprintf(stderr, "flopline calibrate: %s\n", r.error.c_str());
    return 1;
  }
  flopline::capture::CalibratedPeaks peaks;
  peaks.device = r.device.name;
  peaks.uuid = r.device.uuid;
  peaks.date = utc_now();
  std::printf("%s (%s), %d^3 matrix products, best of %d:\n", r.device.name.c_str(),
              r.device.uuid.c_str(), size, reps);
  for (const auto& m : r.matmul) {
    std::printf("  %-5s %8.1f TFLOP/s  (%.3f ms)\n", m.precision.c_str(), m.flops_per_s / 1e12,
                m.ms);
    peaks.peak_flops.emplace_back(m.precision, m.flops_per_s);
  }
  std::printf("  copy  %8.2f TB/s (device to device, read + write; %.3f ms for 2 GiB)\n",
              r.copy_bytes_per_s / 1e12, r.copy_ms);
  peaks.peak_bytes_per_s = r.copy_bytes_per_s;
  if (output.empty()) {
    output = flopline::capture::calibration_path(peaks.uuid, peaks.device,
                                                 [](const char* n) { return std::getenv(n); });
  }
  make_parents(output);
  std::ofstream out(output, std::ios::binary);
  out << flopline::capture::format_calibration(peaks);
  if (!out.flush()) {
    std::fprintf(stderr, "flopline calibrate: cannot write %s\n", output.c_str());
    return 1;
  }
  std::printf("stored in %s\n", output.c_str());
  return 0;
}
