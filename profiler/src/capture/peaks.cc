// A recorded device as the trace describes it, with its peaks (trace/device_peaks.h).
#include "flopline/capture/peaks.h"

#include <string>

#include "flopline/trace/args.h"
#include "flopline/trace/device_peaks.h"

namespace flopline::capture {

std::string kineto_device_keys(const DeviceInfo& device) {
  // cudaDeviceProp's names, as torch.profiler writes them; the trace writer puts the
  // keys it does not model (raw_json) next to its own. maxThreadsPerBlock and
  // sharedMemPerBlock (the static per-block limit) are the same for every compute
  // capability from 2.0 on.
  trace::ArgsBuilder k;
  k.add("maxThreadsPerBlock", 1024);
  if (device.max_warps_per_sm > 0 && device.warp_size > 0)
    k.add("maxThreadsPerMultiprocessor", device.max_warps_per_sm * device.warp_size);
  const std::int32_t regs_per_block =
      device.registers_per_block > 0 ? device.registers_per_block : device.registers_per_sm;
  if (regs_per_block > 0) k.add("regsPerBlock", regs_per_block);
  if (device.warp_size > 0) k.add("warpSize", device.warp_size);
  k.add("sharedMemPerBlock", 48 * 1024);
  if (device.registers_per_sm > 0) k.add("regsPerMultiprocessor", device.registers_per_sm);
  if (device.shared_memory_per_sm > 0) {
    k.add("sharedMemPerBlockOptin",
          device.shared_memory_per_sm - device.reserved_shared_memory_per_block);
    k.add("sharedMemPerMultiprocessor", device.shared_memory_per_sm);
  }
  return std::string(k.finish());
}

trace::DeviceProperties fill_peaks(const DeviceInfo& device) {
  trace::DeviceProperties p;
  p.id = static_cast<std::int32_t>(device.ordinal);
  p.name = device.name;
  p.num_sms = device.sm_count;
  p.compute_major = device.compute_major;
  p.compute_minor = device.compute_minor;
  p.total_global_mem = device.total_memory;
  p.clock_khz = device.clock_khz;
  p.memory_clock_khz = device.memory_clock_khz;
  p.memory_bus_width = device.memory_bus_width;
  trace::add_table_peaks(p);
  p.raw_json = kineto_device_keys(device);
  return p;
}

}  // namespace flopline::capture
