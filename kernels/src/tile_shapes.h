// The tile shapes and capacity limits of the kernels behind matmul_softmax, in plain C++:
// the kernels are built on these numbers and the plan (matmul_softmax_plan.cc) reasons
// with them without a GPU. A kernel header that derives one of them from its own layout
// checks it against this one with a static_assert.
#pragma once

#include <cstdint>

#include "flopline/kernels/types.h"

namespace flopline::kernels::shapes {

// The sm90 core (sm90_gemm.cuh): 128x256 tiles of C, k tiles of one 128-byte swizzle row.
constexpr int kCoreBlockM = 128;
constexpr int kCoreBlockN = 256;
constexpr int core_block_k(DType in) {
  return in == DType::tf32 ? 32 : 64;
}
// B-resident runs keep all of B's k tiles for one column tile in shared memory: at most
// this many (the four pipeline stages less four 64-row A tiles, in 32 KB B tiles).
constexpr int kCoreMaxResidentKTiles = 5;

// Whether the sm90 core runs B-resident (small k: B's column tile kept in shared memory,
// 64-row tiles ping-ponged between the consumers); block_k: core_block_k of the inputs.
constexpr bool core_b_resident(std::int64_t m, std::int64_t n, std::int64_t k, int block_k,
                               int sms) {
  const std::int64_t tiles_m = (m + kCoreBlockM - 1) / kCoreBlockM;
  const std::int64_t tiles_n = (n + kCoreBlockN - 1) / kCoreBlockN;
  const std::int64_t k_tiles = (k + block_k - 1) / block_k;
  return k_tiles <= kCoreMaxResidentKTiles && tiles_n <= sms && tiles_m > 1;
}

// The swapped core (sm90_gemm_swapped.cuh, C^T = B^T A^T): 256x128 tiles of C.
constexpr int kSwappedBlockM = 256;
constexpr int kSwappedBlockN = 128;
constexpr int swapped_block_k(DType in) {
  return in == DType::tf32 ? 32 : 64;
}

// The k tiles of every split but the last when k_tiles are cut into k_splits ranges:
// ceil(k_tiles / k_splits) (the host picks k_splits so that none is empty).
constexpr int split_k_tiles(int k_tiles, int k_splits) {
  return (k_tiles + k_splits - 1) / k_splits;
}

// Cluster rows (softmax_cluster_rows.cuh): one cluster holds a row of 256-column tiles;
// 8 CTAs is the portable cluster size, 16 where the device allows it.
constexpr int kClusterRowsMaxSize = 16;

// The in-launch rescale (softmax_rescale_in_launch.cuh) merges two rows' statistics
// (8 bytes per column tile) in this much shared memory, what the kernel has left.
constexpr int kRescaleInLaunchStatsBytes = 16384;
constexpr bool rescale_in_launch_fits(std::int64_t tiles_n) {
  return 2 * 8 * tiles_n <= kRescaleInLaunchStatsBytes;
}

// The row passes after a sweep (softmax_finish.cu) hold a row in registers up to this
// many columns.
constexpr std::int64_t kRowPassMaxCols = 16384;

// The one-launch scheme (softmax_one_launch.cu): one CTA per 64x64 tile of the scores.
constexpr int kOneLaunchTile = 64;
constexpr std::int64_t one_launch_tiles(std::int64_t m, std::int64_t n) {
  return ((m + kOneLaunchTile - 1) / kOneLaunchTile) * ((n + kOneLaunchTile - 1) / kOneLaunchTile);
}
// Bytes of its per-tile (max, sum) statistics: rows [m][ceil(n/64)], columns
// [ceil(m/64)][n] pairs of floats.
constexpr std::int64_t one_launch_stats_bytes(std::int64_t m, std::int64_t n, bool rows) {
  const std::int64_t blocks = ((rows ? n : m) + kOneLaunchTile - 1) / kOneLaunchTile;
  return (rows ? m : n) * blocks * 8;
}

}  // namespace flopline::kernels::shapes
