// The fused matmul+softmax epilogue of the sm90 core: with the 64x256 block of scores
// still in registers it computes softmax statistics (per row over the block's 256
// columns, or per column over each warp's 16 rows), and either stores exp(s - block max)
// for a later rescale, or, when the final per-row/column statistics are known (second
// sweep), the normalized softmax itself. The score matrix is never written as such.
#pragma once

#include <cuda_bf16.h>

#include <cmath>

#include "sm90_gemm.cuh"

namespace flopline::kernels::sm90 {

enum class SoftmaxPass : int {
  stats,            // write block statistics only
  stats_store_exp,  // write block statistics and exp(s - block max)
  normalize,        // write exp(s - M) / S with the final statistics
};

template <class OutT>
struct SoftmaxEpilogue {
  OutT* out;
  int m, n;
  bool rows;           // softmax over each row (dim -1) or over each column (dim 0)
  SoftmaxPass pass;
  float2* partial;     // rows: [m][tiles_n]; cols: [ceil(m/16)][n]: (block max, sum of exp)
  const float2* final_stats;  // rows: [m]; cols: [n]: (max, 1/sum), for normalize
  int tiles_n;

  __device__ void operator()(const float (&d)[kAccum], int row0, int col0, int warp, int lane) const {
    if (rows) {
      by_rows(d, row0, col0, warp, lane);
    } else {
      by_cols(d, row0, col0, warp, lane);
    }
  }

  __device__ void write(int row, int col, float a, float b) const {
    store_pair(out + static_cast<std::int64_t>(row) * n + col, a, b);
  }

  // Each thread holds rows r and r+8 at 64 columns; the 4 threads of a quad share rows.
  __device__ void by_rows(const float (&d)[kAccum], int row0, int col0, int warp, int lane) const {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = row0 + warp * 16 + (lane >> 2) + 8 * half;
      if (pass == SoftmaxPass::normalize) {
        const float2 fs = row < m ? final_stats[row] : make_float2(0.0f, 0.0f);
#pragma unroll
        for (int i = 2 * half; i < kAccum; i += 4) {
          const int col = col0 + accum_col(i, lane);
          if (row < m && col < n) write(row, col, __expf(d[i] - fs.x) * fs.y, __expf(d[i + 1] - fs.x) * fs.y);
        }
        continue;
      }
      float mx = -INFINITY;
#pragma unroll
      for (int i = 2 * half; i < kAccum; i += 4) {
        if (col0 + accum_col(i, lane) < n) mx = fmaxf(mx, fmaxf(d[i], d[i + 1]));
      }
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      float sum = 0.0f;
#pragma unroll
      for (int i = 2 * half; i < kAccum; i += 4) {
        const int col = col0 + accum_col(i, lane);
        if (col < n) {
          const float x0 = __expf(d[i] - mx), x1 = __expf(d[i + 1] - mx);
          sum += x0 + x1;
          if (pass == SoftmaxPass::stats_store_exp && row < m) write(row, col, x0, x1);
        }
      }
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      if ((lane & 3) == 0 && row < m) {
        partial[static_cast<std::int64_t>(row) * tiles_n + col0 / kBlockN] = make_float2(mx, sum);
      }
    }
  }

  // Per column over the warp's 16 rows: each thread has rows r and r+8; the 8 threads
  // with the same lane%4 share columns.
  __device__ void by_cols(const float (&d)[kAccum], int row0, int col0, int warp, int lane) const {
    const int r = row0 + warp * 16 + (lane >> 2);
    const bool in0 = r < m, in1 = r + 8 < m;
    const int block16 = (row0 + warp * 16) / 16;
#pragma unroll
    for (int i = 0; i < kAccum; i += 4) {
      const int col = col0 + accum_col(i, lane);  // and col + 1; rows r (d[i], d[i+1]), r+8 (d[i+2], d[i+3])
      if (pass == SoftmaxPass::normalize) {
        if (col < n) {
          const float2 f0 = final_stats[col], f1 = final_stats[col + 1];
          if (in0) write(r, col, __expf(d[i] - f0.x) * f0.y, __expf(d[i + 1] - f1.x) * f1.y);
          if (in1) write(r + 8, col, __expf(d[i + 2] - f0.x) * f0.y, __expf(d[i + 3] - f1.x) * f1.y);
        }
        continue;
      }
      float x[4];
      float2 st[2];
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const float v0 = d[i + e], v1 = d[i + 2 + e];
        float mx = fmaxf(in0 ? v0 : -INFINITY, in1 ? v1 : -INFINITY);
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 4));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 8));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 16));
        x[e] = in0 ? __expf(v0 - mx) : 0.0f;
        x[2 + e] = in1 ? __expf(v1 - mx) : 0.0f;
        float sum = x[e] + x[2 + e];
        sum += __shfl_xor_sync(0xffffffffu, sum, 4);
        sum += __shfl_xor_sync(0xffffffffu, sum, 8);
        sum += __shfl_xor_sync(0xffffffffu, sum, 16);
        st[e] = make_float2(mx, sum);
      }
      if (col < n) {
        if (pass == SoftmaxPass::stats_store_exp) {
          if (in0) write(r, col, x[0], x[1]);
          if (in1) write(r + 8, col, x[2], x[3]);
        }
        if (lane < 4) {
          float2* dst = partial + static_cast<std::int64_t>(block16) * n + col;
          dst[0] = st[0];
          dst[1] = st[1];
        }
      }
    }
  }
};

}  // namespace flopline::kernels::sm90
