// A recorded device as a trace describes it: its properties with the peaks of the table
// (flopline/trace/device_peaks.h, docs/PEAKS.md) and Kineto's keys the model does not
// hold.
#pragma once

#include <string>

#include "flopline/capture/records.h"
#include "flopline/trace/model.h"

namespace flopline::capture {

// Kineto's deviceProperties keys the model does not hold (maxThreadsPerBlock,
// maxThreadsPerMultiprocessor, regsPerBlock, warpSize, sharedMemPerBlock,
// regsPerMultiprocessor, sharedMemPerBlockOptin, sharedMemPerMultiprocessor), as one
// JSON object; keys whose value the device did not give are left out.
std::string kineto_device_keys(const DeviceInfo& device);

// The device with its peaks filled (peak_source "table"; no peaks and an empty source
// when the architecture is not in the table), and Kineto's keys in raw_json.
trace::DeviceProperties fill_peaks(const DeviceInfo& device);

}  // namespace flopline::capture
