// Theoretical occupancy of a kernel launch, computed from the launch shape and the
// device's per-SM limits the way NVIDIA's occupancy calculator does (cuda_occupancy.h),
// so a trace records it without calling CUDA. The formula:
//
//   warps/block           W = ceil(threads per block / warp size)
//   limit by warps          = floor(max warps per SM / W)
//   limit by blocks         = max blocks per SM
//   limit by registers:     registers are allocated per warp, in units of 256:
//                           R = roundup(registers per thread * warp size, 256);
//                           the register file is split into 4 sub-partitions, each
//                           holding floor((registers per SM / 4) / R) warps, so
//                           limit = floor(4 * that / W); 0 when R * roundup(W, 4)
//                           exceeds registers per block (the hardware's per-block
//                           check); no limit when the kernel uses no registers.
//   limit by shared memory: per block S = roundup(static + dynamic + reserved per
//                           block, G) with G = 128 bytes from compute capability 8.0
//                           on, 256 before; limit = floor(shared memory per SM / S),
//                           using the largest carveout (the driver's default picks the
//                           carveout that fits); no limit when S is 0.
//   active blocks per SM    = min of the four limits
//   theoretical occupancy   = active blocks * W / max warps per SM
//
// Kineto's "est. achieved occupancy %" caps the active blocks by the blocks each SM
// actually gets (grid blocks / SMs): a grid smaller than the GPU cannot fill it.
// flopline does the same (see estimated_achieved_occupancy), counting warps rather
// than threads, so a 100-thread block counts as the 4 warps it occupies.
#pragma once

#include <cstdint>
#include <optional>

#include "flopline/capture/records.h"

namespace flopline::capture {

enum class OccupancyLimiter : std::uint8_t { kWarps, kBlocks, kRegisters, kSharedMemory };

struct Occupancy {
  std::int32_t warps_per_block = 0;
  std::int32_t limit_by_warps = 0;                      // blocks per SM
  std::int32_t limit_by_blocks = 0;                     // blocks per SM
  std::int32_t limit_by_registers = 0;                  // blocks per SM
  std::int32_t limit_by_shared_memory = 0;              // blocks per SM
  std::int32_t active_blocks_per_sm = 0;                // min of the limits
  OccupancyLimiter limiter = OccupancyLimiter::kWarps;  // the first limit that binds
  double theoretical = 0;                               // active warps / max warps per SM, 0..1
};

// Nothing when the device lacks a figure the calculation needs (SM limits of 0) or the
// block is empty. Shared memory sizes are bytes per block.
std::optional<Occupancy> theoretical_occupancy(const DeviceInfo& device,
                                               std::int64_t threads_per_block,
                                               std::int32_t registers_per_thread,
                                               std::int64_t static_shared_memory,
                                               std::int64_t dynamic_shared_memory);

// Kineto's three kernel args, computed with the calculator above.
struct KernelOccupancyArgs {
  double blocks_per_sm = 0;  // grid blocks / SMs
  double warps_per_sm = 0;   // blocks_per_sm * threads per block / warp size
  // round(100 * min(active blocks, blocks_per_sm) * W / max warps per SM); nothing when
  // the occupancy cannot be computed.
  std::optional<std::int32_t> est_achieved_occupancy_pct;
};

// Nothing when the device has no SM count.
std::optional<KernelOccupancyArgs> kernel_occupancy_args(const DeviceInfo& device,
                                                         const KernelRecord& kernel);

}  // namespace flopline::capture
