// Measured peaks (`flopline calibrate`): achievable matmul FLOP/s per precision and
// device-to-device copy bandwidth, stored per GPU so later traces use them for "% of
// peak" instead of the datasheet table (peak_source "calibrated").
//
// File: one JSON object, written and read by the functions here:
//   {"device":"NVIDIA H200","uuid":"GPU-...","date":"<UTC time, ISO 8601>",
//    "peak_flops":{"fp32":5.1e13,"tf32":4.2e14,"bf16":7.9e14},"peak_bytes_per_s":4.3e12}
// Location: FLOPLINE_PEAKS_FILE when set, else
// $XDG_CACHE_HOME/flopline/peaks-<uuid or name>.json (XDG_CACHE_HOME defaults to
// ~/.cache).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flopline/capture/capture_config.h"
#include "flopline/trace/model.h"

namespace flopline::capture {

struct CalibratedPeaks {
  std::string device;                                      // driver's device name
  std::string uuid;                                        // "GPU-...", may be empty
  std::string date;                                        // ISO 8601, UTC
  std::vector<std::pair<std::string, double>> peak_flops;  // precision -> FLOP/s
  double peak_bytes_per_s = 0;                             // copy: bytes read + written per s
};

// `flopline calibrate --help`: printed by the flopline command, which answers it even
// where the measuring program (built only with CUDA) is absent, and by that program.
std::string_view calibrate_usage();

std::string format_calibration(const CalibratedPeaks& peaks);
// Nothing when the text is not a calibration this version wrote.
std::optional<CalibratedPeaks> parse_calibration(std::string_view json);

// Where the calibration of a device lives (see the file comment). Characters other than
// letters, digits, '-', '_' and '.' in the name become '_'.
std::string calibration_path(std::string_view uuid, std::string_view device_name,
                             const GetEnv& getenv);

// Replaces the peaks the calibration measured (others stay from the table) and sets
// peak_source "calibrated".
void apply_calibration(trace::DeviceProperties& device, const CalibratedPeaks& peaks);

}  // namespace flopline::capture
