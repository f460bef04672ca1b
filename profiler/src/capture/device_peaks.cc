#include "flopline/capture/device_peaks.h"

#include "flopline/capture/peaks.h"

namespace flopline::capture {

void fill_missing_peaks(trace::Trace& trace) {
  for (trace::DeviceProperties& d : trace.devices) {
    if (d.peak_bytes_per_s > 0 || !d.peak_flops.empty()) continue;
    capture::DeviceInfo info;
    info.ordinal = d.id >= 0 ? static_cast<std::uint32_t>(d.id) : 0;
    info.name = d.name;
    info.sm_count = d.num_sms;
    info.compute_major = d.compute_major;
    info.compute_minor = d.compute_minor;
    info.clock_khz = d.clock_khz;
    info.memory_clock_khz = d.memory_clock_khz;
    info.memory_bus_width = d.memory_bus_width;
    info.total_memory = d.total_global_mem;
    const trace::DeviceProperties filled = capture::fill_peaks(info);
    d.peak_flops = filled.peak_flops;
    d.peak_bytes_per_s = filled.peak_bytes_per_s;
    d.peak_source = filled.peak_source;
  }
}

}  // namespace flopline::capture
