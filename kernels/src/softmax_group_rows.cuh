// Row softmax in one sweep of the sm90 core without thread-block clusters: the persistent
// grid is cut into groups of tiles_n CTAs, a group holds a whole row of tiles (column-
// stationary walk), and its CTAs share each row's statistics through global memory.
// Each consumer computes, per row of its 64-row block, the max of its 256 scores and the
// sum of exp(s - max), keeping the exps in the accumulator registers; it writes the pair
// to partial[row][column tile] and counts itself in arrived[block]; once all tiles_n
// CTAs have arrived it combines the row's pairs into (M, S) and writes
// exp(s - max) * exp(max - M) / S (staged for TMA stores on streaming runs). As in
// cluster rows, the matmul runs once and only the output is written; a group is any
// tiles_n CTAs (so 8 groups of 16 on 132 SMs, where clusters, which must fit in a GPC,
// may number fewer), at
// the price of an L2 round trip per exchange instead of distributed shared memory.
//
// A consumer waits for the other CTAs of its group, so all of them must be resident:
// the launch is cooperative (it fails rather than deadlock if the grid does not fit).
// Each CTA walks its row tiles in the same order as its group, one exchange per 64-row
// block, so the wait always ends.
#pragma once

#include <cmath>
#include <cstdint>

#include "fast_exp.cuh"
#include "softmax_row_block.cuh"

namespace flopline::kernels::sm90 {

template <class OutT>
struct GroupRowsEpilogue {
  static constexpr bool kGrouped = true;
  // Streaming runs stage the output for TMA stores (sm90_epilogue_store.cuh), as the
  // matmul does; B-resident runs (ctx.smem null) store from registers.
  static constexpr int kBoxCols = StagedOutput<OutT>::kBoxCols;
  static constexpr int kStagingBytes = StagedOutput<OutT>::kBytes;

  OutT* out;
  int m, n;
  float2* partial;    // [m][tiles_n]: each block's (max, sum of exp) per row
  unsigned* arrived;  // [ceil(m / 64)], zero at the start: consumers done with a 64-row block
  int tiles_n;

#ifdef FLOPLINE_SM90A
  __device__ void operator()(float (&d)[kAccum], int row0, int col0, int warp, int lane,
                             const EpilogueContext& ctx) const {
    // Template arguments, not runtime tests in one body: ptxas spilled 76 bytes with the
    // staged and the direct store in one function.
    const bool inside = col0 + kBlockN <= n;
    if (ctx.smem != nullptr) {
      if (inside) {
        run<false, true>(d, row0, col0, warp, lane, ctx);
      } else {
        run<true, true>(d, row0, col0, warp, lane, ctx);
      }
    } else if (inside) {
      run<false, false>(d, row0, col0, warp, lane, ctx);
    } else {
      run<true, false>(d, row0, col0, warp, lane, ctx);
    }
  }

  // kCheckCols: the block reaches past n (the group's last CTA): columns >= n take no
  // part in the statistics and are not stored. Rows >= m get no statistics and are not
  // stored. row0 is a multiple of 64. kStaged: through the staging (TMA clips the rows
  // and columns past the matrix), else straight from registers.
  template <bool kCheckCols, bool kStaged>
  __device__ void run(float (&d)[kAccum], int row0, int col0, int warp, int lane,
                      const EpilogueContext& ctx) const {
    using fast::kLog2e;
    const int tid = warp * 32 + lane;
    const int barrier = kBarrierRowExchange + ctx.consumer;
    float mx[2], sum[2];  // the max is finite: every CTA's tile has at least one column < n
    row_block_exp_stats<kCheckCols>(d, col0, lane, n, mx, sum);
    const int row = row0 + warp * 16 + (lane >> 2);  // and row + 8
    const int tn = col0 / kBlockN;
    if ((lane & 3) == 0) {
      if (row < m)
        partial[static_cast<std::int64_t>(row) * tiles_n + tn] = make_float2(mx[0], sum[0]);
      if (row + 8 < m)
        partial[static_cast<std::int64_t>(row + 8) * tiles_n + tn] = make_float2(mx[1], sum[1]);
    }
    // The consumer's pairs are written (bar.sync orders them before thread 0's release),
    // then it counts itself; thread 0 waits for the group, and the barrier passes its
    // acquire on to every thread.
    unsigned* count = arrived + row0 / 64;
    named_barrier_sync(barrier, 128);
    if (tid == 0) {
      red_add_release_gpu(count, 1u);
      while (ld_acquire_gpu(count) < static_cast<unsigned>(tiles_n)) __nanosleep(64);
    }
    named_barrier_sync(barrier, 128);
    float factor[2];
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int r = row + 8 * half;
      // L2 loads (.cg): this SM's L1 may hold the line from this CTA's own store.
      const float2* pairs = partial + static_cast<std::int64_t>(r < m ? r : 0) * tiles_n;
      float big = -INFINITY;
      for (int t = 0; t < tiles_n; ++t) big = fmaxf(big, __ldcg(pairs + t).x);
      const float big_log2e = big * kLog2e;
      float total = 0.0f;
      for (int t = 0; t < tiles_n; ++t) {
        const float2 p = __ldcg(pairs + t);
        total += p.y * exp_shifted(p.x, big_log2e);
      }
      factor[half] = exp_shifted(mx[half], big_log2e) / total;
    }
    if constexpr (kStaged) {
      StagedOutput<OutT>::stage_block(ctx, d, row0, col0, warp, lane, factor);
    } else {
      store_row_block<kCheckCols>(out, m, n, d, row0, col0, warp, lane, factor);
    }
  }
#else
  __device__ void operator()(float (&)[kAccum], int, int, int, int, const EpilogueContext&) const {}
#endif
};

}  // namespace flopline::kernels::sm90
