// Softmax over each column of an m x n row-major matrix (dim 0).
//
// A block owns 32 adjacent columns (a warp reads 128 contiguous bytes of fp32 per row:
// coalesced) and 8 row slices (threadIdx.y). Each thread keeps running (max, sum)
// statistics of its column over its rows, the 8 slices merge in shared memory, and a
// second read of the rows writes exp(x - max) / sum.
//
// A matrix with few column strips would leave most SMs idle (4096 columns are 128
// strips for 132 SMs), so tall matrices also split the rows into chunks: a first kernel
// writes per-(chunk, column) statistics to a stream-ordered workspace, a second merges a
// column's chunks and writes its chunk of the output. Enough chunks to fill the GPU in
// one wave; at least 64 rows each. Each thread loads 8 rows before using them and folds
// them into its statistics with one max and 8 independent exps (add_values), so loads,
// not a chain of dependent exps, set the pace.
//
// Traffic: two reads and one write of the matrix. The cost model counts one read, so the
// GB/s a trace shows is 2/3 of what the memory moves: on an H200, 4096x4096 fp32 runs at
// ~58% of copy bandwidth by the model's bytes, ~85% by the bytes moved.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "device_facts.h"
#include "scratch.h"
#include "softmax_common.cuh"
#include "softmax_launch.h"

namespace flopline::kernels::detail {
namespace {

using namespace softmax_parts;

constexpr int kCols = 32;              // columns per block, one per lane
constexpr int kSlices = 8;             // row slices per block (threadIdx.y)
constexpr int kBlocksPerSm = 6;        // 256-thread blocks resident per SM (launch bounds: <= 40 registers)
constexpr std::int64_t kMinRowsPerChunk = 64;
constexpr int kUnroll = 8;             // rows each thread loads before using them

// Statistics of column col over the rows r0 + threadIdx.y + k * kSlices below r1.
template <class TIn>
__device__ Stats column_stats(const TIn* x, std::int64_t n, std::int64_t col, std::int64_t r0, std::int64_t r1) {
  Stats s = empty_stats();
  std::int64_t r = r0 + threadIdx.y;
  for (; r + (kUnroll - 1) * kSlices < r1; r += kUnroll * kSlices) {
    float v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = to_float(x[(r + u * kSlices) * n + col]);
    add_values(s, v);
  }
  for (; r < r1; r += kSlices) add_value(s, to_float(x[r * n + col]));
  return s;
}

// Merges the kSlices statistics of each column; every thread of the column gets the
// result (all merge in the same order). Called by every thread of the block.
__device__ Stats merge_slices(Stats s, Stats (*shared)[kCols]) {
  shared[threadIdx.y][threadIdx.x] = s;
  __syncthreads();
  Stats r = shared[0][threadIdx.x];
#pragma unroll
  for (int i = 1; i < kSlices; ++i) r = merge(r, shared[i][threadIdx.x]);
  return r;
}

// out = exp(x - max) / sum over the same rows as column_stats, walked bottom-up: the
// statistics pass read top-down, so the rows it read last are the ones still in L2 (on
// an H200, 50 MB of a 64 MB 4096^2 fp32 matrix), and reading them first turns part of
// this second read into L2 hits. Each thread loads its rows before storing them, so out
// may be x itself.
template <class TIn, class TOut>
__device__ void column_write(const TIn* x, TOut* out, std::int64_t n, std::int64_t col, std::int64_t r0,
                             std::int64_t r1, Stats s) {
  const float inv = 1.0f / s.sum;
  const std::int64_t first = r0 + threadIdx.y;  // this slice's rows: first + k * kSlices, k <= last
  if (first >= r1) return;
  std::int64_t k = (r1 - 1 - first) / kSlices;
  for (; k >= kUnroll - 1; k -= kUnroll) {
    float v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = to_float(x[(first + (k - u) * kSlices) * n + col]);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      out[(first + (k - u) * kSlices) * n + col] = from_float<TOut>(exp_shifted(v[u], s.max) * inv);
    }
  }
  for (; k >= 0; --k) {
    const std::int64_t at = (first + k * kSlices) * n + col;
    out[at] = from_float<TOut>(exp_shifted(to_float(x[at]), s.max) * inv);
  }
}

// All rows in one block per strip: no workspace (small or wide matrices).
template <class TIn, class TOut>
__global__ void __launch_bounds__(kCols * kSlices, kBlocksPerSm)
softmax_cols_single(const TIn* x, TOut* out, std::int64_t m, std::int64_t n) {
  __shared__ Stats shared[kSlices][kCols];
  const std::int64_t col = static_cast<std::int64_t>(blockIdx.x) * kCols + threadIdx.x;
  const bool live = col < n;
  Stats s = live ? column_stats(x, n, col, 0, m) : empty_stats();
  s = merge_slices(s, shared);
  if (live) column_write(x, out, n, col, 0, m, s);
}

// Split, first kernel: statistics of each (row chunk, column), to partial[chunk * n + col].
template <class TIn>
__global__ void __launch_bounds__(kCols * kSlices, kBlocksPerSm)
softmax_cols_partial(const TIn* x, std::int64_t m, std::int64_t n, std::int64_t rows_per_chunk, Stats* partial) {
  __shared__ Stats shared[kSlices][kCols];
  const std::int64_t col = static_cast<std::int64_t>(blockIdx.x) * kCols + threadIdx.x;
  const bool live = col < n;
  const std::int64_t r0 = blockIdx.y * rows_per_chunk;
  const std::int64_t r1 = std::min(m, r0 + rows_per_chunk);
  Stats s = live ? column_stats(x, n, col, r0, r1) : empty_stats();
  s = merge_slices(s, shared);
  if (live && threadIdx.y == 0) partial[blockIdx.y * n + col] = s;
}

// Split, second kernel: merge the column's chunk statistics, write this block's chunk.
template <class TIn, class TOut>
__global__ void __launch_bounds__(kCols * kSlices, kBlocksPerSm)
softmax_cols_apply(const TIn* x, TOut* out, std::int64_t m, std::int64_t n, std::int64_t rows_per_chunk,
                   const Stats* partial) {
  __shared__ Stats shared[kSlices][kCols];
  const std::int64_t col = static_cast<std::int64_t>(blockIdx.x) * kCols + threadIdx.x;
  const bool live = col < n;
  Stats s = empty_stats();
  if (live) {
    for (unsigned c = threadIdx.y; c < gridDim.y; c += kSlices) s = merge(s, partial[c * n + col]);
  }
  s = merge_slices(s, shared);
  const std::int64_t r0 = blockIdx.y * rows_per_chunk;
  const std::int64_t r1 = std::min(m, r0 + rows_per_chunk);
  if (live) column_write(x, out, n, col, r0, r1, s);
}

template <class TIn, class TOut>
void launch_cols(const SoftmaxProblem& p, cudaStream_t stream) {
  const TIn* x = static_cast<const TIn*>(p.x);
  TOut* out = static_cast<TOut*>(p.out);
  const DeviceFacts facts = current_device_facts();
  const std::int64_t strips = (p.n + kCols - 1) / kCols;
  std::int64_t chunks = std::max<std::int64_t>(1, facts.sms * std::int64_t{kBlocksPerSm} / strips);
  chunks = std::min(chunks, std::max<std::int64_t>(1, p.m / kMinRowsPerChunk));
  if (!facts.pools) chunks = 1;
  const dim3 block(kCols, kSlices);
  if (chunks == 1) {
    softmax_cols_single<TIn, TOut><<<static_cast<unsigned>(strips), block, 0, stream>>>(x, out, p.m, p.n);
    return;
  }
  const std::int64_t rows_per_chunk = (p.m + chunks - 1) / chunks;
  chunks = (p.m + rows_per_chunk - 1) / rows_per_chunk;
  Scratch workspace(static_cast<std::size_t>(chunks * p.n) * sizeof(Stats), stream, "softmax cols statistics");
  Stats* partial = workspace.as<Stats>();
  const dim3 grid(static_cast<unsigned>(strips), static_cast<unsigned>(chunks));
  softmax_cols_partial<TIn><<<grid, block, 0, stream>>>(x, p.m, p.n, rows_per_chunk, partial);
  softmax_cols_apply<TIn, TOut><<<grid, block, 0, stream>>>(x, out, p.m, p.n, rows_per_chunk, partial);
}

}  // namespace

void launch_softmax_cols(const SoftmaxProblem& p, cudaStream_t stream) {
  softmax_parts::with_softmax_types(p.in, p.out_type, [&](auto in, auto out) {
    launch_cols<decltype(in), decltype(out)>(p, stream);
  });
}

}  // namespace flopline::kernels::detail
