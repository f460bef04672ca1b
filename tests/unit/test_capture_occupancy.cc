// The occupancy calculator against hand-computed cases (the arithmetic is in each
// comment), and Kineto's three kernel args.
#include <gtest/gtest.h>

#include <limits>

#include "flopline/capture/occupancy.h"

namespace flopline::capture {
namespace {

DeviceInfo h100() {  // as its driver reports it
  DeviceInfo d;
  d.sm_count = 132;
  d.compute_major = 9;
  d.max_warps_per_sm = 64;
  d.max_blocks_per_sm = 32;
  d.registers_per_sm = 65536;
  d.registers_per_block = 65536;
  d.shared_memory_per_sm = 233472;
  d.reserved_shared_memory_per_block = 1024;
  return d;
}

DeviceInfo v100() {
  DeviceInfo d;
  d.sm_count = 80;
  d.compute_major = 7;
  d.max_warps_per_sm = 64;
  d.max_blocks_per_sm = 32;
  d.registers_per_sm = 65536;
  d.registers_per_block = 65536;
  d.shared_memory_per_sm = 98304;
  d.reserved_shared_memory_per_block = 0;
  return d;
}

TEST(CaptureOccupancy, H100_256Threads64RegistersIsHalfByRegisters) {
  // 8 warps/block. Registers: 64*32 = 2048 per warp; 65536/4 = 16384 per sub-partition
  // -> 8 warps each, 32 per SM -> 4 blocks. Warps: 64/8 = 8. Shared: 1 KB reserved ->
  // 233472/1024 = 228. Active 4 blocks = 32 warps = 50%.
  const auto o = theoretical_occupancy(h100(), 256, 64, 0, 0);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->warps_per_block, 8);
  EXPECT_EQ(o->limit_by_warps, 8);
  EXPECT_EQ(o->limit_by_blocks, 32);
  EXPECT_EQ(o->limit_by_registers, 4);
  EXPECT_EQ(o->limit_by_shared_memory, 228);
  EXPECT_EQ(o->active_blocks_per_sm, 4);
  EXPECT_EQ(o->limiter, OccupancyLimiter::kRegisters);
  EXPECT_DOUBLE_EQ(o->theoretical, 0.5);
}

TEST(CaptureOccupancy, H100SharedMemoryBinds) {
  // 4 warps. Registers: 96*32 = 3072 per warp -> 16384/3072 = 5 per sub-partition -> 20
  // warps -> 5 blocks. Shared: 49152 + 1024 = 50176 (a multiple of 128) -> 233472/50176
  // = 4.65 -> 4 blocks. Active 4 * 4 warps = 16/64 = 25%.
  const auto o = theoretical_occupancy(h100(), 128, 96, 49152, 0);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->limit_by_registers, 5);
  EXPECT_EQ(o->limit_by_shared_memory, 4);
  EXPECT_EQ(o->active_blocks_per_sm, 4);
  EXPECT_EQ(o->limiter, OccupancyLimiter::kSharedMemory);
  EXPECT_DOUBLE_EQ(o->theoretical, 0.25);
}

TEST(CaptureOccupancy, RegisterGranularityAndSubPartitions) {
  // 255 registers -> 8160 per warp, rounded up to 8192. Block of 96 threads = 3 warps; the
  // hardware check: 8192 * roundup(3, 4) = 32768 <= 65536. 16384/8192 = 2 warps per
  // sub-partition -> 8 per SM -> 2 blocks -> 6 warps = 9.375%.
  const auto o = theoretical_occupancy(h100(), 96, 255, 0, 0);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->limit_by_registers, 2);
  EXPECT_DOUBLE_EQ(o->theoretical, 6.0 / 64);
  // 96 registers on 20 warps: the whole-SM count would say 65536/3072 = 21 warps; the
  // sub-partitions give 5 * 4 = 20: a 1-warp block gets 20 blocks, not 21.
  const auto p = theoretical_occupancy(h100(), 32, 96, 0, 0);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->limit_by_registers, 20);
  // 1024 threads at 128 registers: 4096 * 32 = 131072 > 65536 registers per block.
  const auto q = theoretical_occupancy(h100(), 1024, 128, 0, 0);
  ASSERT_TRUE(q);
  EXPECT_EQ(q->active_blocks_per_sm, 0);
  EXPECT_DOUBLE_EQ(q->theoretical, 0.0);
}

TEST(CaptureOccupancy, FullOccupancyAndNoRegisters) {
  // 1024 threads, 32 registers: 32 warps; warps 64/32 = 2; registers 1024 per warp -> 16
  // per sub-partition -> 64 -> 2 blocks. 64 warps = 100%; the warp limit binds first.
  const auto o = theoretical_occupancy(h100(), 1024, 32, 0, 0);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->active_blocks_per_sm, 2);
  EXPECT_EQ(o->limiter, OccupancyLimiter::kWarps);
  EXPECT_DOUBLE_EQ(o->theoretical, 1.0);
  // A kernel with no registers and tiny blocks is held by the blocks limit: 32 * 1 warp.
  const auto t = theoretical_occupancy(h100(), 32, 0, 0, 0);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->limit_by_registers, std::numeric_limits<std::int32_t>::max());
  EXPECT_EQ(t->limiter, OccupancyLimiter::kBlocks);
  EXPECT_DOUBLE_EQ(t->theoretical, 0.5);
}

TEST(CaptureOccupancy, VoltaShares256ByteGranularityAndNoReserve) {
  // 256 threads, 32 registers: 8 blocks by warps and registers. Shared 12100 -> 12288 ->
  // 98304/12288 = 8 blocks (100%); 12300 -> 12544 -> 7 blocks = 56 warps = 87.5%.
  const auto a = theoretical_occupancy(v100(), 256, 32, 100, 12000);
  ASSERT_TRUE(a);
  EXPECT_EQ(a->limit_by_shared_memory, 8);
  EXPECT_DOUBLE_EQ(a->theoretical, 1.0);
  const auto b = theoretical_occupancy(v100(), 256, 32, 100, 12200);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->limit_by_shared_memory, 7);
  EXPECT_DOUBLE_EQ(b->theoretical, 0.875);
}

TEST(CaptureOccupancy, UnknownDeviceOrEmptyBlockGivesNothing) {
  EXPECT_FALSE(theoretical_occupancy(DeviceInfo{}, 256, 32, 0, 0));
  EXPECT_FALSE(theoretical_occupancy(h100(), 0, 32, 0, 0));
  KernelRecord k;
  EXPECT_FALSE(kernel_occupancy_args(DeviceInfo{}, k));
}

TEST(CaptureOccupancy, KernelArgsCapBlocksByTheGrid) {
  KernelRecord k;
  k.grid_x = 66;
  k.grid_y = k.grid_z = 1;
  k.block_x = 256;
  k.block_y = k.block_z = 1;
  k.registers_per_thread = 64;
  // 66 blocks on 132 SMs: 0.5 per SM, 0.5 * 256 / 32 = 4 warps per SM; min(4, 0.5) * 8
  // warps / 64 = 6.25% -> 6.
  auto a = kernel_occupancy_args(h100(), k);
  ASSERT_TRUE(a);
  EXPECT_DOUBLE_EQ(a->blocks_per_sm, 0.5);
  EXPECT_DOUBLE_EQ(a->warps_per_sm, 4.0);
  EXPECT_EQ(a->est_achieved_occupancy_pct, 6);
  // A big grid: the calculator's 4 blocks bind -> 50%.
  k.grid_x = 132 * 100;
  a = kernel_occupancy_args(h100(), k);
  EXPECT_EQ(a->est_achieved_occupancy_pct, 50);
  // 100-thread blocks occupy 4 warps: 1 block per SM -> 4/64 = 6.25% -> 6 (Kineto, counting
  // threads, would say 100/2048 = 4.9% -> 5).
  k.grid_x = 132;
  k.block_x = 100;
  a = kernel_occupancy_args(h100(), k);
  EXPECT_DOUBLE_EQ(a->warps_per_sm, 100.0 / 32);
  EXPECT_EQ(a->est_achieved_occupancy_pct, 6);
}

}  // namespace
}  // namespace flopline::capture
