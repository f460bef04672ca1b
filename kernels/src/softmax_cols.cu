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
// GB/s a trace shows is 2/3 of what the memory moves.
//
// The kernels read their input through a source: a matrix (softmax()), or the k-range
// slabs of partial scores of a split-k matmul, added as they are read (the fused
// split_k scheme's column pass).
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "device_facts.h"
#include "matmul_launch.h"
#include "scratch.h"
#include "softmax_common.cuh"
#include "softmax_launch.h"

namespace flopline::kernels::detail {
namespace {

using namespace softmax_parts;

constexpr int kCols = 32;   // columns per block, one per lane
constexpr int kSlices = 8;  // row slices per block (threadIdx.y)
constexpr int kBlocksPerSm =
    6;  // 256-thread blocks resident per SM (launch bounds: <= 40 registers)
constexpr std::int64_t kMinRowsPerChunk = 64;
constexpr int kUnroll = 8;  // rows each thread loads before using them

// The input of softmax(): element (r, col) of an m x n row-major matrix.
template <class TIn>
struct MatrixSource {
  const TIn* x;
  std::int64_t n;
  __device__ float operator()(std::int64_t r, std::int64_t col) const {
    return to_float(x[r * n + col]);
  }
};
// The scores of a split-k matmul: k_splits slabs of slab_elems floats, each m x n
// row-major (its first rows), summed.
struct SplitSumSource {
  const float* partial;
  int k_splits;
  std::int64_t slab_elems, n;
  __device__ float operator()(std::int64_t r, std::int64_t col) const {
    const float* at = partial + r * n + col;
    float v = *at;
    for (int s = 1; s < k_splits; ++s) v += at[s * slab_elems];
    return v;
  }
};

// Statistics of column col over the rows r0 + threadIdx.y + k * kSlices below r1.
template <class Src>
__device__ Stats column_stats(const Src& x, std::int64_t col, std::int64_t r0, std::int64_t r1) {
  Stats s = empty_stats();
  std::int64_t r = r0 + threadIdx.y;
  for (; r + (kUnroll - 1) * kSlices < r1; r += kUnroll * kSlices) {
    float v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = x(r + u * kSlices, col);
    add_values(s, v);
  }
  for (; r < r1; r += kSlices) add_value(s, x(r, col));
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
// statistics pass read top-down, so the rows it read last are the ones still in L2 (most
// of a 64 MB matrix on a GPU with 50 MB of L2), and reading them first turns part of
// this second read into L2 hits. Each thread loads its rows before storing them, so out
// may be x itself.
template <class Src, class TOut>
__device__ void column_write(const Src& x, TOut* out, std::int64_t n, std::int64_t col,
                             std::int64_t r0, std::int64_t r1, Stats s) {
  const float inv = 1.0f / s.sum;
  const std::int64_t first = r0 + threadIdx.y;  // this slice's rows: first + k * kSlices, k <= last
  if (first >= r1) return;
  std::int64_t k = (r1 - 1 - first) / kSlices;
  for (; k >= kUnroll - 1; k -= kUnroll) {
    float v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = x(first + (k - u) * kSlices, col);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      out[(first + (k - u) * kSlices) * n + col] = from_float<TOut>(exp_shifted(v[u], s.max) * inv);
    }
  }
  for (; k >= 0; --k) {
    const std::int64_t r = first + k * kSlices;
    out[r * n + col] = from_float<TOut>(exp_shifted(x(r, col), s.max) * inv);
  }
}

// All rows in one block per strip: no workspace (small or wide matrices).
template <class Src, class TOut>
__global__ void __launch_bounds__(kCols* kSlices, kBlocksPerSm)
    softmax_cols_single(Src x, TOut* out, std::int64_t m, std::int64_t n) {
  __shared__ Stats shared[kSlices][kCols];
  const std::int64_t col = static_cast<std::int64_t>(blockIdx.x) * kCols + threadIdx.x;
  const bool live = col < n;
  Stats s = live ? column_stats(x, col, 0, m) : empty_stats();
  s = merge_slices(s, shared);
  if (live) column_write(x, out, n, col, 0, m, s);
}

// Split, first kernel: statistics of each (row chunk, column), to partial[chunk * n + col].
template <class Src>
__global__ void __launch_bounds__(kCols* kSlices, kBlocksPerSm)
    softmax_cols_partial(Src x, std::int64_t m, std::int64_t n, std::int64_t rows_per_chunk,
                         Stats* partial) {
  __shared__ Stats shared[kSlices][kCols];
  const std::int64_t col = static_cast<std::int64_t>(blockIdx.x) * kCols + threadIdx.x;
  const bool live = col < n;
  const std::int64_t r0 = blockIdx.y * rows_per_chunk;
  const std::int64_t r1 = std::min(m, r0 + rows_per_chunk);
  Stats s = live ? column_stats(x, col, r0, r1) : empty_stats();
  s = merge_slices(s, shared);
  if (live && threadIdx.y == 0) partial[blockIdx.y * n + col] = s;
}

// Split, second kernel: merge the column's chunk statistics, write this block's chunk.
template <class Src, class TOut>
__global__ void __launch_bounds__(kCols* kSlices, kBlocksPerSm)
    softmax_cols_apply(Src x, TOut* out, std::int64_t m, std::int64_t n,
                       std::int64_t rows_per_chunk, const Stats* partial) {
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

// The column softmax of the m x n values of x into out.
template <class Src, class TOut>
void launch_cols(const Src& x, TOut* out, std::int64_t m, std::int64_t n, cudaStream_t stream) {
  const DeviceFacts facts = current_device_facts();
  const std::int64_t strips = (n + kCols - 1) / kCols;
  std::int64_t chunks = std::max<std::int64_t>(1, facts.sms * std::int64_t{kBlocksPerSm} / strips);
  chunks = std::min(chunks, std::max<std::int64_t>(1, m / kMinRowsPerChunk));
  if (!facts.pools) chunks = 1;
  const dim3 block(kCols, kSlices);
  if (chunks == 1) {
    softmax_cols_single<Src, TOut>
        <<<static_cast<unsigned>(strips), block, 0, stream>>>(x, out, m, n);
    return;
  }
  const std::int64_t rows_per_chunk = (m + chunks - 1) / chunks;
  chunks = (m + rows_per_chunk - 1) / rows_per_chunk;
  Scratch workspace(static_cast<std::size_t>(chunks * n) * sizeof(Stats), stream,
                    "softmax cols statistics");
  Stats* partial = workspace.as<Stats>();
  const dim3 grid(static_cast<unsigned>(strips), static_cast<unsigned>(chunks));
  softmax_cols_partial<Src><<<grid, block, 0, stream>>>(x, m, n, rows_per_chunk, partial);
  softmax_cols_apply<Src, TOut><<<grid, block, 0, stream>>>(x, out, m, n, rows_per_chunk, partial);
}

}  // namespace

void launch_softmax_cols(const SoftmaxProblem& p, cudaStream_t stream) {
  softmax_parts::with_softmax_types(p.in, p.out_type, [&](auto in, auto out) {
    using TIn = decltype(in);
    launch_cols(MatrixSource<TIn>{static_cast<const TIn*>(p.x), p.n},
                static_cast<decltype(out)*>(p.out), p.m, p.n, stream);
  });
}

void softmax_cols_of_split_sums(void* out, DType out_type, const float* partial, int k_splits,
                                std::int64_t slab_rows, std::int64_t m, std::int64_t n,
                                cudaStream_t stream) {
  const SplitSumSource x{partial, k_splits, slab_rows * n, n};
  if (out_type == DType::bf16) {
    launch_cols(x, static_cast<__nv_bfloat16*>(out), m, n, stream);
  } else {
    launch_cols(x, static_cast<float*>(out), m, n, stream);
  }
  throw_if_launch_failed("softmax columns of split sums");
}

}  // namespace flopline::kernels::detail
