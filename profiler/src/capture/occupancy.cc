// Theoretical occupancy; the formula and its sources are in occupancy.h.
#include "flopline/capture/occupancy.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace flopline::capture {
namespace {

// cuda_occupancy.h: registers go to warps in units of 256 on every architecture since
// Kepler, and the register file has 4 sub-partitions from Volta on (GP100: 2).
constexpr std::int64_t kRegisterAllocationUnit = 256;
constexpr std::int64_t kRegisterSubPartitions = 4;

std::int64_t round_up(std::int64_t v, std::int64_t unit) {
  return (v + unit - 1) / unit * unit;
}

std::int64_t shared_memory_granularity(const DeviceInfo& d) {
  return d.compute_major >= 8 ? 128 : 256;
}

constexpr std::int32_t kUnlimited = std::numeric_limits<std::int32_t>::max();

std::int32_t clamp32(std::int64_t v) {
  return static_cast<std::int32_t>(std::clamp<std::int64_t>(v, 0, kUnlimited));
}

std::int32_t register_limit(const DeviceInfo& d, std::int64_t warps_per_block,
                            std::int32_t registers_per_thread) {
  if (registers_per_thread <= 0) return kUnlimited;
  const std::int64_t per_warp = round_up(
      static_cast<std::int64_t>(registers_per_thread) * d.warp_size, kRegisterAllocationUnit);
  const std::int64_t per_block_limit =
      d.registers_per_block > 0 ? d.registers_per_block : d.registers_per_sm;
  // The hardware checks a block as if its warps were spread over every sub-partition.
  if (per_warp * round_up(warps_per_block, kRegisterSubPartitions) > per_block_limit) return 0;
  const std::int64_t warps_per_partition = (d.registers_per_sm / kRegisterSubPartitions) / per_warp;
  return clamp32(warps_per_partition * kRegisterSubPartitions / warps_per_block);
}

std::int32_t shared_memory_limit(const DeviceInfo& d, std::int64_t static_bytes,
                                 std::int64_t dynamic_bytes) {
  const std::int64_t used = static_bytes + dynamic_bytes + d.reserved_shared_memory_per_block;
  if (used <= 0) return kUnlimited;
  const std::int64_t allocated = round_up(used, shared_memory_granularity(d));
  return clamp32(d.shared_memory_per_sm / allocated);
}

}  // namespace

std::optional<Occupancy> theoretical_occupancy(const DeviceInfo& device,
                                               std::int64_t threads_per_block,
                                               std::int32_t registers_per_thread,
                                               std::int64_t static_shared_memory,
                                               std::int64_t dynamic_shared_memory) {
  if (threads_per_block <= 0 || device.warp_size <= 0 || device.max_warps_per_sm <= 0 ||
      device.max_blocks_per_sm <= 0 || device.registers_per_sm <= 0 ||
      device.shared_memory_per_sm <= 0) {
    return std::nullopt;
  }
  Occupancy o;
  const std::int64_t warps = (threads_per_block + device.warp_size - 1) / device.warp_size;
  o.warps_per_block = clamp32(warps);
  o.limit_by_warps = clamp32(device.max_warps_per_sm / warps);
  o.limit_by_blocks = device.max_blocks_per_sm;
  o.limit_by_registers = register_limit(device, warps, registers_per_thread);
  o.limit_by_shared_memory =
      shared_memory_limit(device, static_shared_memory, dynamic_shared_memory);

  o.active_blocks_per_sm = o.limit_by_warps;
  o.limiter = OccupancyLimiter::kWarps;
  auto take = [&](std::int32_t limit, OccupancyLimiter why) {
    if (limit < o.active_blocks_per_sm) {
      o.active_blocks_per_sm = limit;
      o.limiter = why;
    }
  };
  take(o.limit_by_blocks, OccupancyLimiter::kBlocks);
  take(o.limit_by_registers, OccupancyLimiter::kRegisters);
  take(o.limit_by_shared_memory, OccupancyLimiter::kSharedMemory);
  o.theoretical = static_cast<double>(o.active_blocks_per_sm) * static_cast<double>(warps) /
                  static_cast<double>(device.max_warps_per_sm);
  return o;
}

std::optional<KernelOccupancyArgs> kernel_occupancy_args(const DeviceInfo& device,
                                                         const KernelRecord& kernel) {
  if (device.sm_count <= 0 || device.warp_size <= 0) return std::nullopt;
  KernelOccupancyArgs a;
  const double threads = static_cast<double>(kernel.threads_per_block());
  a.blocks_per_sm = static_cast<double>(kernel.blocks()) / device.sm_count;
  a.warps_per_sm = a.blocks_per_sm * threads / device.warp_size;
  const auto occ =
      theoretical_occupancy(device, kernel.threads_per_block(), kernel.registers_per_thread,
                            kernel.static_shared_memory, kernel.dynamic_shared_memory);
  if (occ) {
    const double blocks = std::min<double>(occ->active_blocks_per_sm, a.blocks_per_sm);
    const double fraction = blocks * occ->warps_per_block / device.max_warps_per_sm;
    a.est_achieved_occupancy_pct = static_cast<std::int32_t>(std::floor(0.5 + fraction * 100.0));
  }
  return a;
}

}  // namespace flopline::capture
