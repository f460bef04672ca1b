// Loads the calibration `flopline calibrate` stored for each captured GPU and puts its
// peaks into the trace's device properties (see flopline/capture/calibration.h).
#pragma once

#include <vector>

#include "flopline/trace/model.h"

namespace flopline::cupti {

// For each device with a stored calibration whose device name matches: the measured
// peaks replace the table's and peak_source becomes "calibrated".
void apply_calibrated_peaks(std::vector<trace::DeviceProperties>& devices);

}  // namespace flopline::cupti
