// Device properties from the CUDA driver, for the trace's deviceProperties and its peaks.
// The driver is reached through dlsym on the libcuda.so.1 already loaded in the process
// (a capture only runs where CUDA runs), so nothing here links libcuda: test programs
// and the library load on machines without a driver.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "flopline/capture/records.h"

namespace flopline::cupti {

// The properties of device `ordinal`; nothing when the driver is not loaded or refuses.
std::optional<capture::DeviceInfo> query_device(std::uint32_t ordinal);

// "GPU-xxxxxxxx-xxxx-..." as nvidia-smi prints it; "" when unknown.
std::string device_uuid(std::uint32_t ordinal);

}  // namespace flopline::cupti
