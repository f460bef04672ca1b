#include "softmax_finish.cuh"

#include <cuda_bf16.h>

#include <cmath>

#include "matmul_launch.h"
#include "softmax_quad.cuh"

namespace flopline::kernels::detail {
namespace {

__device__ __forceinline__ float2 merge(float2 a, float2 b) {
  const float mx = fmaxf(a.x, b.x);
  if (mx == -INFINITY) return make_float2(mx, 0.0f);
  return make_float2(mx, a.y * __expf(a.x - mx) + b.y * __expf(b.x - mx));
}

// One warp per row: the row's blocks are contiguous.
__global__ void combine_rows_kernel(const float2* __restrict__ partial, float2* __restrict__ final_stats, long m,
                                    int blocks) {
  const long row = (static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  if (row >= m) return;
  float2 acc = make_float2(-INFINITY, 0.0f);
  for (int b = lane; b < blocks; b += 32) acc = merge(acc, partial[row * blocks + b]);
  for (int o = 16; o > 0; o >>= 1) {
    const float2 other = make_float2(__shfl_xor_sync(0xffffffffu, acc.x, o), __shfl_xor_sync(0xffffffffu, acc.y, o));
    acc = merge(acc, other);
  }
  if (lane == 0) final_stats[row] = make_float2(acc.x, 1.0f / acc.y);
}

// A 32x32 thread block per 32 columns: 32 threads down the blocks of each column (so a
// tall matrix's thousands of blocks are read in parallel), then a reduction through
// shared memory. With `scales`, each block's factor exp(block max - max) / sum goes
// there too, [blocks][n]: the rescale pass then reads one float per value instead of
// the block's and the column's (max, sum) pairs and an exp (it ran at 60% of the row
// rescale's speed that way).
__global__ void combine_cols_kernel(const float2* __restrict__ partial, float2* __restrict__ final_stats,
                                    float* __restrict__ scales, long n, int blocks) {
  __shared__ float2 part[32][33];
  const long col = static_cast<long>(blockIdx.x) * 32 + threadIdx.x;
  float2 acc = make_float2(-INFINITY, 0.0f);
  if (col < n) {
    for (int b = static_cast<int>(threadIdx.y); b < blocks; b += 32) acc = merge(acc, partial[static_cast<long>(b) * n + col]);
  }
  part[threadIdx.y][threadIdx.x] = acc;
  __syncthreads();
  if (threadIdx.y == 0 && col < n) {
    for (int y = 1; y < 32; ++y) acc = merge(acc, part[y][threadIdx.x]);
    const float2 f = make_float2(acc.x, 1.0f / acc.y);
    final_stats[col] = f;
    part[0][threadIdx.x] = f;
  }
  if (scales == nullptr) return;
  __syncthreads();
  if (col < n) {
    const float2 f = part[0][threadIdx.x];
    for (int b = static_cast<int>(threadIdx.y); b < blocks; b += 32) {
      const long at = static_cast<long>(b) * n + col;
      scales[at] = __expf(partial[at].x - f.x) * f.y;
    }
  }
}

// One block per row; rows: one scale per 2^block_log2-column block of the row; cols: one
// scale per column from the row's 2^block_log2-row block, made by combine_cols_kernel.
// Blocks take the rows from the last up: the sweep before wrote the bottom rows last, so
// those are the ones most likely still in L2 (against top-down: the same to 1% on an H100,
// docs/KERNELS.md; kept as the order with the better odds).
template <class OutT, bool Rows>
__global__ void rescale_kernel(OutT* __restrict__ out, const float2* __restrict__ partial,
                               const float2* __restrict__ final_stats, const float* __restrict__ col_scales, long n,
                               int blocks, int block_log2) {
  const long i = static_cast<long>(gridDim.x) - 1 - blockIdx.x;
  OutT* row = out + i * n;
  const float2 fr = Rows ? final_stats[i] : make_float2(0.0f, 0.0f);
  for (long j = 4 * static_cast<long>(threadIdx.x); j < n; j += 4L * blockDim.x) {
    Quad q = load4(row + j);
    if (Rows) {
      const float2 b = partial[i * blocks + (j >> block_log2)];  // the 4 values share a block
      scale4(q, __expf(b.x - fr.x) * fr.y);
    } else {
      const float4 s = *reinterpret_cast<const float4*>(col_scales + (i >> block_log2) * n + j);
      q.v[0] *= s.x;
      q.v[1] *= s.y;
      q.v[2] *= s.z;
      q.v[3] *= s.w;
    }
    store4(row + j, q);
  }
}

}  // namespace

void combine_softmax_stats(const float2* partial, float2* final_stats, float* col_scales, std::int64_t m,
                           std::int64_t n, bool rows, int blocks, cudaStream_t stream) {
  if (rows) {
    combine_rows_kernel<<<static_cast<unsigned>((m * 32 + 255) / 256), 256, 0, stream>>>(partial, final_stats, m,
                                                                                          blocks);
  } else {
    combine_cols_kernel<<<static_cast<unsigned>((n + 31) / 32), dim3(32, 32), 0, stream>>>(partial, final_stats,
                                                                                          col_scales, n, blocks);
  }
  throw_if_launch_failed("softmax statistics");
}

void rescale_softmax(void* out, DType out_type, const float2* partial, const float2* final_stats,
                     const float* col_scales, std::int64_t m, std::int64_t n, bool rows, int blocks, int block_log2,
                     cudaStream_t stream) {
  const unsigned grid = static_cast<unsigned>(m);
  if (out_type == DType::bf16) {
    auto* o = static_cast<__nv_bfloat16*>(out);
    if (rows) rescale_kernel<__nv_bfloat16, true><<<grid, 256, 0, stream>>>(o, partial, final_stats, col_scales, n, blocks, block_log2);
    else rescale_kernel<__nv_bfloat16, false><<<grid, 256, 0, stream>>>(o, partial, final_stats, col_scales, n, blocks, block_log2);
  } else {
    auto* o = static_cast<float*>(out);
    if (rows) rescale_kernel<float, true><<<grid, 256, 0, stream>>>(o, partial, final_stats, col_scales, n, blocks, block_log2);
    else rescale_kernel<float, false><<<grid, 256, 0, stream>>>(o, partial, final_stats, col_scales, n, blocks, block_log2);
  }
  throw_if_launch_failed("softmax rescale");
}

}  // namespace flopline::kernels::detail
