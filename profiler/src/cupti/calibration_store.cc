#include "calibration_store.h"

#include <cstdlib>
#include <fstream>
#include <iterator>

#include "device_info.h"
#include "flopline/capture/calibration.h"

namespace flopline::cupti {

void apply_calibrated_peaks(std::vector<trace::DeviceProperties>& devices) {
  const capture::GetEnv env = [](const char* name) { return std::getenv(name); };
  for (trace::DeviceProperties& d : devices) {
    const std::string path =
        capture::calibration_path(device_uuid(static_cast<std::uint32_t>(d.id)), d.name, env);
    std::ifstream in(path, std::ios::binary);
    if (!in) continue;
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto peaks = capture::parse_calibration(text);
    // A file named by FLOPLINE_PEAKS_FILE may describe another GPU: use it only for its own.
    if (peaks && peaks->device == d.name) capture::apply_calibration(d, *peaks);
  }
}

}  // namespace flopline::cupti
