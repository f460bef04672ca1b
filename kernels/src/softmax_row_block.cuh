// Row softmax on a consumer's 64x256 block of scores in registers, for the one-sweep
// schemes (cluster rows, group rows): the block's per-row max and sum of exp, computed
// in place, and the block times each row's final factor written to the output.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "fast_exp.cuh"
#include "sm90_epilogue_store.cuh"
#include "softmax_epilogue.cuh"

namespace flopline::kernels::sm90 {

// exp(s - max) in place for rows r (half 0) and r + 8 (half 1) of the thread, with each
// row's block max and sum of exp over the columns < n (kCheckCols: the block reaches
// past n). The max is finite when the block has a column < n.
template <bool kCheckCols>
__device__ __forceinline__ void row_block_exp_stats(float (&d)[kAccum], int col0, int lane, int n,
                                                    float (&mx)[2], float (&sum)[2]) {
  using fast::kLog2e;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const float x = block_row_max<kCheckCols>(d, half, col0, lane, n);
    mx[half] = x;
    const float mx_log2e = x * kLog2e;
    float sum4[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int i = 2 * half, j = 0; i < kAccum; i += 4, ++j) {
      if (!kCheckCols || col0 + accum_col(i, lane) < n) {
        d[i] = exp_shifted(d[i], mx_log2e);
        d[i + 1] = exp_shifted(d[i + 1], mx_log2e);
        sum4[j & 3] += d[i] + d[i + 1];
      }
    }
    float s = (sum4[0] + sum4[1]) + (sum4[2] + sum4[3]);
    s += __shfl_xor_sync(0xffffffffu, s, 1);
    s += __shfl_xor_sync(0xffffffffu, s, 2);
    sum[half] = s;
  }
}

// The block d times factor[half] into the m x n output at (row0, col0): rows < m and
// columns < n only (kCheckCols: the block reaches past n).
template <bool kCheckCols, class OutT>
__device__ __forceinline__ void store_row_block(OutT* out, int m, int n, const float (&d)[kAccum],
                                                int row0, int col0, int warp, int lane,
                                                const float (&factor)[2]) {
  const int local_row = warp * 16 + (lane >> 2);
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int row = row0 + local_row + 8 * half;
    const bool row_in = row < m;
    OutT* out_row = out + static_cast<std::int64_t>(row_in ? row : 0) * n;
    const float f = factor[half];
    if constexpr (sizeof(OutT) == 2) {
      // 16-bit: two 8-column blocks per store instruction (store_two_blocks16).
#pragma unroll
      for (int i = 2 * half; i < kAccum; i += 8) {
        const int block_col = col0 + (i >> 2) * 8;  // the first block's column 0
        const std::uint32_t a = pack_pair(out, d[i] * f, d[i + 1] * f);
        const std::uint32_t b = pack_pair(out, d[i + 4] * f, d[i + 5] * f);
        store_two_blocks16(out_row + block_col, a, b, lane, row_in,
                           kCheckCols ? n - block_col : kBlockN);
      }
    } else {
      if (!row_in) continue;
#pragma unroll
      for (int i = 2 * half; i < kAccum; i += 4) {
        const int col = col0 + accum_col(i, lane);
        if (!kCheckCols || col < n) store_pair(out_row + col, d[i] * f, d[i + 1] * f);
      }
    }
  }
}

}  // namespace flopline::kernels::sm90
