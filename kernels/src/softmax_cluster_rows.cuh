// Row softmax in one sweep of the sm90 core, when a whole row of score tiles fits in one
// thread-block cluster (n <= 16 x 256). The CTAs of a cluster hold the column tiles of
// the same 64 rows (per consumer warpgroup). Each computes, per row, the max of its 256
// scores and the sum of exp(s - max), keeping the exps in the accumulator registers; it
// sends the (max, sum) pair to every CTA of the cluster (st.async into their shared
// memory, counted on their mbarrier); once its own barrier has all the pairs it combines
// them into the row's (M, S) and writes exp(s - max) * exp(max - M) / S straight from
// registers. The matmul runs once, one exp per score, and nothing but the output is
// written: no statistics in global memory, no second sweep, no rescale pass.
#pragma once

#include <cmath>
#include <cstddef>

#include "fast_exp.cuh"
#include "sm90_epilogue_store.cuh"
#include "softmax_epilogue.cuh"
#include "softmax_row_block.cuh"
#include "tile_shapes.h"

namespace flopline::kernels::sm90 {

template <class OutT>
struct ClusterRowsEpilogue {
  static constexpr bool kClustered = true;
  static constexpr int kMaxClusterSize = shapes::kClusterRowsMaxSize;
  static constexpr int kRows = 64;  // rows of one consumer's block
  // Shared memory: 4 mbarriers [consumer][tile parity], then the pairs
  // [consumer][tile parity][rank][row]. Two parities: a peer may publish tile j + 1 while
  // this CTA still reads tile j's pairs, never tile j + 2 (it needs this CTA's j + 1 first).
  static constexpr int kBarrierBytes = 4 * 8;
  __host__ __device__ static constexpr std::size_t smem_bytes(int cluster_size) {
    return kBarrierBytes + static_cast<std::size_t>(4 * cluster_size * kRows) * sizeof(float2);
  }

  OutT* out;
  int m, n;

#ifdef FLOPLINE_SM90A
  __device__ static std::uint64_t* barriers(unsigned char* smem) {
    return reinterpret_cast<std::uint64_t*>(smem);
  }
  __device__ static float2* pairs(unsigned char* smem) {
    return reinterpret_cast<float2*>(smem + kBarrierBytes);
  }

  __device__ static void init(unsigned char* smem) {
    // One local arrival per phase (with the expected bytes); the peers' st.async
    // complete the bytes.
    for (int i = 0; i < 4; ++i) mbar_init(barriers(smem) + i, 1);
  }

  __device__ void operator()(float (&d)[kAccum], int row0, int col0, int warp, int lane,
                             const EpilogueContext& ctx) const {
    if (col0 + kBlockN <= n) {
      run<false>(d, row0, col0, warp, lane, ctx);
    } else {
      run<true>(d, row0, col0, warp, lane, ctx);
    }
  }

  // kCheckCols: the block reaches past n (only the cluster's last CTA): columns >= n take
  // no part in the statistics and are not stored. Rows >= m (zero scores from TMA's
  // fill) get harmless statistics and are not stored.
  template <bool kCheckCols>
  __device__ void run(float (&d)[kAccum], int row0, int col0, int warp, int lane,
                      const EpilogueContext& ctx) const {
    using fast::kLog2e;
    const unsigned ranks = cluster_size(), me = cluster_rank();
    const int slot = ctx.consumer * 2 + (ctx.ordinal & 1);
    std::uint64_t* bar = barriers(ctx.smem) + slot;
    float2* slot_pairs = pairs(ctx.smem) + slot * static_cast<int>(ranks) * kRows;  // [rank][row]
    float mx[2], sum[2];  // the max is finite: every CTA's tile has at least one column < n
    row_block_exp_stats<kCheckCols>(d, col0, lane, n, mx, sum);
    const int local_row = warp * 16 + (lane >> 2);  // and local_row + 8
    if ((lane & 3) == 0) {
      const std::uint32_t bar_local = smem_addr(bar);
      const std::uint32_t pair_local = smem_addr(slot_pairs + me * kRows + local_row);
      for (unsigned q = 0; q < ranks; ++q) {
        const std::uint32_t remote_bar = cluster_map(bar_local, q);
        const std::uint32_t remote = cluster_map(pair_local, q);
        cluster_store_async(remote, mx[0], sum[0], remote_bar);
        cluster_store_async(remote + 8 * sizeof(float2), mx[1], sum[1], remote_bar);
      }
    }
    if (warp == 0 && lane == 0)
      mbar_expect_tx(bar, ranks * kRows * static_cast<unsigned>(sizeof(float2)));
    // The bytes the peers' st.async count on this barrier are visible once its phase
    // completes, as for a TMA load: a CTA-scope wait does (an acquire at cluster scope
    // would also invalidate L1 on every tile).
    mbar_wait(bar, (ctx.ordinal >> 1) & 1);
    float factor[2];
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const std::uint32_t row_pairs = smem_addr(slot_pairs + local_row + 8 * half);
      constexpr std::uint32_t kRankStride = kRows * sizeof(float2);
      float big = -INFINITY;
      for (unsigned q = 0; q < ranks; ++q)
        big = fmaxf(big, ld_shared_pair(row_pairs + q * kRankStride).x);
      const float big_log2e = big * kLog2e;
      float total = 0.0f;
      for (unsigned q = 0; q < ranks; ++q) {
        const float2 p = ld_shared_pair(row_pairs + q * kRankStride);
        total += p.y * exp_shifted(p.x, big_log2e);
      }
      factor[half] = exp_shifted(mx[half], big_log2e) / total;
    }
    // Every thread of this consumer has read the slot before any of its next tile's pairs
    // go out: those let the peers go on to the tile after, which reuses this slot.
    named_barrier_sync(kBarrierRowExchange + ctx.consumer, 128);
    store_row_block<kCheckCols>(out, m, n, d, row0, col0, warp, lane, factor);
  }
#else
  __device__ static void init(unsigned char*) {}
  __device__ void operator()(float (&)[kAccum], int, int, int, int, const EpilogueContext&) const {}
#endif
};

}  // namespace flopline::kernels::sm90
