// Column softmax epilogue of the swapped core (sm90_gemm_swapped.cuh), for the two sweep
// schemes of matmul_softmax.cu: rescale (one sweep writes exp(s - block max) and the
// blocks' (max, sum of exp); combine_softmax_stats and rescale_softmax_cols finish) and
// recompute (sweep 1 writes only the blocks' statistics, the combine makes each column's
// (max, 1/sum), sweep 2 recomputes the scores and writes the softmax).
//
// The swapped core hands each consumer thread two columns of C (Ops::column) at 64 rows
// each, and the quad of lanes sharing lane / 4 holds the same two
// columns at all 256 rows of the tile. Column statistics over a tile are therefore
// in-thread work plus two shuffles, where the core of sm90_gemm.cuh spreads a column
// over 8 lanes and 8 warps and keeps statistics per 16 rows.
#pragma once

#include <cmath>

#include "fast_exp.cuh"
#include "sm90_gemm_swapped.cuh"
#include "softmax_epilogue.cuh"

namespace flopline::kernels::sm90::swapped {

// Softmax over columns (dim 0), output OutT (float; __nv_bfloat16 with the bf16 operands,
// whose column map the 16-bit staging takes). kPass stats / stats_store_exp: per 256-row
// tile, each column's (max, sum of exp(s - max)) into partial[tile row][n], and for
// stats_store_exp exp(s - max) into C. normalize: exp(s - M) / S into C with each
// column's final (M, 1/S). The pass is a template argument: with the three in one
// function ptxas spilled 76-92 bytes.
template <class Ops, class OutT, SoftmaxPass kPass>
struct SwappedColsEpilogue {
  int m, n;
  float2* partial;            // [ceil(m / 256)][n]
  const float2* final_stats;  // [n], for normalize

  __device__ void operator()(const float (&d)[kAccum], int row0, int col0, int warp, int lane,
                             const SwappedContext& ctx) const {
    if constexpr (kPass == SoftmaxPass::normalize) {
      normalize(d, row0, col0, warp, lane, ctx);
      return;
    }
    // Only the last row of tiles reaches past m: the others skip the per-row checks.
    if (row0 + kBlockM <= m) {
      run<false>(d, row0, col0, warp, lane, ctx);
    } else {
      run<true>(d, row0, col0, warp, lane, ctx);
    }
  }

  template <bool kCheckRows>
  __device__ void run(const float (&d)[kAccum], int row0, int col0, int warp, int lane,
                      const SwappedContext& ctx) const {
    using fast::exp2_ftz;
    using fast::kLog2e;
    auto inside = [&](int i) { return !kCheckRows || row0 + accum_m(i, lane) < m; };
    // Four independent chains per column (a single chain of 64 dependent fmaxf would
    // leave the warps waiting on latency), then the quad.
    float mx4[2][4];
#pragma unroll
    for (int c = 0; c < 2; ++c) {
#pragma unroll
      for (int j = 0; j < 4; ++j) mx4[c][j] = -INFINITY;
    }
#pragma unroll
    for (int i = 0; i < kAccum; ++i) {
      if (inside(i))
        mx4[accum_second_col(i)][(i >> 2) & 3] =
            fmaxf(mx4[accum_second_col(i)][(i >> 2) & 3], d[i]);
    }
    float mx_log2e[2], mx[2];
#pragma unroll
    for (int c = 0; c < 2; ++c) {
      float v = fmaxf(fmaxf(mx4[c][0], mx4[c][1]), fmaxf(mx4[c][2], mx4[c][3]));
      v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 1));
      mx[c] = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, 2));
      // Every tile has a row inside m, so mx is finite for the columns that matter.
      mx_log2e[c] = mx[c] * kLog2e;
    }
    float sum4[2][4] = {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
    auto exp_and_sum = [&](int i) {
      const int c = accum_second_col(i);
      const float x = exp2_ftz(fmaf(d[i], kLog2e, -mx_log2e[c]));
      if (inside(i)) sum4[c][(i >> 2) & 3] += x;
      return x;
    };
    if constexpr (kPass == SoftmaxPass::stats_store_exp) {
      stage_block<Ops, OutT>(ctx, row0, col0, warp, lane, exp_and_sum);
    } else {
#pragma unroll
      for (int i = 0; i < kAccum; ++i) exp_and_sum(i);
    }
#pragma unroll
    for (int c = 0; c < 2; ++c) {
      float sum = (sum4[c][0] + sum4[c][1]) + (sum4[c][2] + sum4[c][3]);
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      const int col = col0 + Ops::column(warp, lane, c);
      if ((lane & 3) == 0 && col < n) {
        partial[static_cast<std::int64_t>(row0 / kBlockM) * n + col] = make_float2(mx[c], sum);
      }
    }
  }

  // The second sweep of the recompute scheme: a thread needs the final statistics of its
  // two columns only. Rows and columns past the matrix are clipped by the TMA stores.
  __device__ void normalize(const float (&d)[kAccum], int row0, int col0, int warp, int lane,
                            const SwappedContext& ctx) const {
    using fast::exp2_ftz;
    using fast::kLog2e;
    float mx_log2e[2], inv_sum[2];
#pragma unroll
    for (int c = 0; c < 2; ++c) {
      const int col = col0 + Ops::column(warp, lane, c);
      const float2 f = col < n ? final_stats[col] : make_float2(0.0f, 0.0f);
      mx_log2e[c] = f.x * kLog2e;
      inv_sum[c] = f.y;
    }
    stage_block<Ops, OutT>(ctx, row0, col0, warp, lane, [&](int i) {
      const int c = accum_second_col(i);
      return exp2_ftz(fmaf(d[i], kLog2e, -mx_log2e[c])) * inv_sum[c];
    });
  }
};

}  // namespace flopline::kernels::sm90::swapped
