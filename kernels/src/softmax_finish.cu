#include "softmax_finish.cuh"

#include <cuda_bf16.h>
#include <cuda/atomic>

#include <cmath>
#include <string>
#include <utility>

#include "matmul_launch.h"
#include "softmax_common.cuh"
#include "softmax_merge.cuh"
#include "softmax_quad.cuh"

namespace flopline::kernels::detail {
namespace {

// The combines' (max, sum) merge, with __expf.
struct ExpfShifted {
  __device__ float operator()(float x, float mx) const { return __expf(x - mx); }
};
__device__ __forceinline__ float2 merge(float2 a, float2 b) {
  return merge_stats<EmptySide::zero_when_all_empty>(a, b, ExpfShifted{});
}

// The merge of a warp's 32 pairs, in every lane.
__device__ __forceinline__ float2 warp_merge(float2 acc) {
  for (int o = 16; o > 0; o >>= 1) {
    acc = merge(acc, make_float2(__shfl_xor_sync(0xffffffffu, acc.x, o),
                                 __shfl_xor_sync(0xffffffffu, acc.y, o)));
  }
  return acc;
}

// One warp per row: the row's blocks are contiguous.
__global__ void combine_rows_kernel(const float2* __restrict__ partial,
                                    float2* __restrict__ final_stats, long m, int blocks) {
  const long row = (static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  if (row >= m) return;
  float2 acc = make_float2(-INFINITY, 0.0f);
  for (int b = lane; b < blocks; b += 32) acc = merge(acc, partial[row * blocks + b]);
  acc = warp_merge(acc);
  if (lane == 0) final_stats[row] = make_float2(acc.x, 1.0f / acc.y);
}

// A 32x32 thread block per 32 columns: 32 threads down the blocks of each column (so a
// tall matrix's thousands of blocks are read in parallel), then a reduction through
// shared memory. With `scales`, each block's factor exp(block max - max) / sum goes
// there too, [blocks][n]: the rescale pass then reads one float per value instead of
// the block's and the column's (max, sum) pairs and an exp (which left it well behind
// the row rescale).
__global__ void combine_cols_kernel(const float2* __restrict__ partial,
                                    float2* __restrict__ final_stats, float* __restrict__ scales,
                                    long n, int blocks) {
  __shared__ float2 part[32][33];
  const long col = static_cast<long>(blockIdx.x) * 32 + threadIdx.x;
  float2 acc = make_float2(-INFINITY, 0.0f);
  if (col < n) {
    for (int b = static_cast<int>(threadIdx.y); b < blocks; b += 32)
      acc = merge(acc, partial[static_cast<long>(b) * n + col]);
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

// One block per row, one scale per column from the row's 2^block_log2-row block (the
// factors combine_cols_kernel made). Blocks take the rows from the last up: the sweep
// before wrote the bottom rows last, so those are the likeliest still in L2 (top-down
// measured the same within noise; this is the order with the better odds).
template <class OutT>
__global__ void rescale_cols_kernel(OutT* __restrict__ out, const float* __restrict__ col_scales,
                                    long n, int block_log2) {
  const long i = static_cast<long>(gridDim.x) - 1 - blockIdx.x;
  OutT* row = out + i * n;
  for (long j = 4 * static_cast<long>(threadIdx.x); j < n; j += 4L * blockDim.x) {
    Quad q = load4(row + j);
    const float4 s = *reinterpret_cast<const float4*>(col_scales + (i >> block_log2) * n + j);
    q.v[0] *= s.x;
    q.v[1] *= s.y;
    q.v[2] *= s.z;
    q.v[3] *= s.w;
    store4(row + j, q);
  }
}

// The row this block of a row pass takes: from the last up after the sweep (its last
// rows are the likeliest still in L2), or, beside the sweep (written.counts), from the
// top, waiting until the row's block is in memory: one thread waits (acquire, GPU scope:
// the sweep's counts are releases after its stores and statistics) and the barrier
// orders the block's reads after it.
__device__ long row_of_pass(const WrittenRows& written) {
  if (written.counts == nullptr) return static_cast<long>(gridDim.x) - 1 - blockIdx.x;
  const long i = blockIdx.x;
  if (threadIdx.x == 0) {
    // (atomic_ref takes no const object; this one is only loaded.)
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> count(
        const_cast<unsigned&>(written.counts[i >> written.rows_log2]));
    while (count.load(cuda::memory_order_acquire) < written.all) __nanosleep(256);
  }
  __syncthreads();
  return i;
}

// Launches a row pass, beside the sweep before it where written.counts is set (the
// sweep lets it start early: programmatic stream serialization).
template <class... KernelArgs, class... Args>
void launch_row_pass(void (*kernel)(KernelArgs...), std::int64_t m, const WrittenRows& written,
                     cudaStream_t stream, const char* what, Args&&... args) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(m));
  config.blockDim = dim3(256);
  config.stream = stream;
  cudaLaunchAttribute early{};
  if (written.counts != nullptr) {
    early.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    early.val.programmaticStreamSerializationAllowed = 1;
    config.attrs = &early;
    config.numAttrs = 1;
  }
  const cudaError_t e = cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();  // not left for the next launch's check
    throw CudaError(std::string(what) + ": launch failed: " + cudaGetErrorString(e));
  }
}

// Rows, the combine and the rescale in one launch: one block per row; warp 0 merges the
// row's `blocks` partials into (max, 1/sum) while every thread's first loads of the row
// are already in flight (kQuads quads each, all issued before any store: a loop of
// load, scale, store keeps one load in flight per thread, since a store to the row may
// alias the next load). Rows from the last up, as rescale_cols_kernel, unless the pass
// runs beside the sweep (`written`, see combine_rescale_rows): then from the top, the
// order in which the sweep completes row blocks, each row waiting for its block.
template <class OutT, int kQuads>
__global__ void __launch_bounds__(256)
    combine_rescale_rows_kernel(OutT* __restrict__ out, const float2* __restrict__ partial, long n,
                                int blocks, int block_log2, WrittenRows written) {
  __shared__ float2 row_stats;
  const long i = row_of_pass(written);
  OutT* row = out + i * n;
  const float2* pairs = partial + i * blocks;
  const long chunk = 4L * kQuads * blockDim.x;
  for (long base = 0; base < n; base += chunk) {
    Quad q[kQuads];
#pragma unroll
    for (int u = 0; u < kQuads; ++u) {
      const long j = base + 4 * (threadIdx.x + static_cast<long>(u) * blockDim.x);
      if (j < n) q[u] = load4(row + j);
    }
    if (base == 0) {
      if (threadIdx.x < 32) {
        float2 acc = make_float2(-INFINITY, 0.0f);
        for (int b = static_cast<int>(threadIdx.x); b < blocks; b += 32) acc = merge(acc, pairs[b]);
        acc = warp_merge(acc);
        if (threadIdx.x == 0) row_stats = make_float2(acc.x, 1.0f / acc.y);
      }
      __syncthreads();
    }
    const float2 f = row_stats;
#pragma unroll
    for (int u = 0; u < kQuads; ++u) {
      const long j = base + 4 * (threadIdx.x + static_cast<long>(u) * blockDim.x);
      if (j < n) {
        const float2 b = pairs[j >> block_log2];  // the 4 values share a block
        scale4(q[u], __expf(b.x - f.x) * f.y);
        store4(row + j, q[u]);
      }
    }
  }
}

// The end of a row's softmax held in registers (kQuads quads per thread of a 256-thread
// block, quads past n left alone), given the row's max: exp(s - max) in place, the
// block's sum, and the stores times 1/sum into row_out.
template <int kQuads, class OutT>
__device__ __forceinline__ void exp_normalize_store(Quad (&q)[kQuads], float mx, long n,
                                                    OutT* row_out, float* scratch) {
  float sum = 0.0f;
#pragma unroll
  for (int u = 0; u < kQuads; ++u) {
    const long j = 4 * (threadIdx.x + static_cast<long>(u) * blockDim.x);
    if (j < n) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        q[u].v[e] = __expf(q[u].v[e] - mx);
        sum += q[u].v[e];
      }
    }
  }
  const float inv = 1.0f / softmax_parts::group_reduce(sum, softmax_parts::SumOp{}, scratch, 256);
#pragma unroll
  for (int u = 0; u < kQuads; ++u) {
    const long j = 4 * (threadIdx.x + static_cast<long>(u) * blockDim.x);
    if (j < n) {
      scale4(q[u], inv);
      store4(row_out + j, q[u]);
    }
  }
}

// Rows of raw fp32 scores (the sweep's store_scores pass wrote them, with each block's
// row max in partial[].x) into the softmax, in place: one block of 256 threads per row,
// the whole row in registers (n <= 4 * kQuads * 256). Warp 0 takes the row max M from
// the partials while the row's loads are in flight; each thread computes exp(s - M) of
// its values in place, the block sums them, and the row is stored times 1/sum. The
// exps run here, under the loads of a pass bound by memory, instead of in the sweep's
// epilogue with the tensor cores idle; the pass reads and writes as much as the
// rescale pass would. Rows from the last up, or beside the sweep (row_of_pass).
// Blocks per SM: 5 with 4 quads (6 spilled), 4 with 8 (without the bound ptxas took 78 registers
// for 8 quads once the pass could wait for the sweep, and 3 blocks fit), 2 with 16.
template <int kQuads>
__global__ void __launch_bounds__(256, kQuads <= 4 ? 5 : (kQuads <= 8 ? 4 : 2))
    softmax_rows_after_max_kernel(float* __restrict__ out, const float2* __restrict__ partial,
                                  long n, int blocks, WrittenRows written) {
  __shared__ float scratch[8];  // a float per warp, for the block sum
  __shared__ float row_max;
  const long i = row_of_pass(written);
  float* row = out + i * n;
  Quad q[kQuads];
#pragma unroll
  for (int u = 0; u < kQuads; ++u) {
    const long j = 4 * (threadIdx.x + static_cast<long>(u) * blockDim.x);
    if (j < n) q[u] = load4(row + j);
  }
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  if (warp == 0) {
    const float2* pairs = partial + i * blocks;
    float mx = -INFINITY;
    for (int b = lane; b < blocks; b += 32) mx = fmaxf(mx, pairs[b].x);
    mx = softmax_parts::warp_reduce(mx, softmax_parts::MaxOp{});
    if (lane == 0) row_max = mx;
  }
  __syncthreads();
  exp_normalize_store(q, row_max, n, row, scratch);
}

// One block of 256 threads per row (n <= 4 * kQuads * 256): the row's slabs are added
// in registers (the first slab's loads, then the others', four slabs unrolled so their
// loads are in flight together), then max, exp, sum and the scaled stores. The slabs
// were written by the launch just before and are mostly still in L2.
template <class OutT, int kQuads>
__global__ void __launch_bounds__(256)
    softmax_rows_of_split_sums_kernel(OutT* __restrict__ out, const float* __restrict__ partial,
                                      int k_splits, long slab_rows, long n) {
  __shared__ float scratch[8];  // a float per warp, for the block reductions
  const long i = blockIdx.x;
  Quad q[kQuads];
#pragma unroll
  for (int u = 0; u < kQuads; ++u) {
    const long j = 4 * (threadIdx.x + static_cast<long>(u) * blockDim.x);
    q[u] = j < n ? load4(partial + i * n + j) : Quad{{-INFINITY, -INFINITY, -INFINITY, -INFINITY}};
  }
#pragma unroll 4
  for (int s = 1; s < k_splits; ++s) {
    const float* slab_row = partial + (s * slab_rows + i) * n;
#pragma unroll
    for (int u = 0; u < kQuads; ++u) {
      const long j = 4 * (threadIdx.x + static_cast<long>(u) * blockDim.x);
      if (j < n) {
        const Quad r = load4(slab_row + j);
#pragma unroll
        for (int e = 0; e < 4; ++e) q[u].v[e] += r.v[e];
      }
    }
  }
  float mx = -INFINITY;
#pragma unroll
  for (int u = 0; u < kQuads; ++u) {
#pragma unroll
    for (int e = 0; e < 4; ++e) mx = fmaxf(mx, q[u].v[e]);
  }
  mx = softmax_parts::group_reduce(mx, softmax_parts::MaxOp{}, scratch, 256);
  exp_normalize_store(q, mx, n, out + i * n, scratch);
}

template <class OutT>
void launch_rows_of_split_sums(OutT* out, const float* partial, int k_splits, long slab_rows,
                               long m, long n, cudaStream_t stream) {
  const unsigned grid = static_cast<unsigned>(m);
  if (n <= 1024) {
    softmax_rows_of_split_sums_kernel<OutT, 1>
        <<<grid, 256, 0, stream>>>(out, partial, k_splits, slab_rows, n);
  } else if (n <= 2048) {
    softmax_rows_of_split_sums_kernel<OutT, 2>
        <<<grid, 256, 0, stream>>>(out, partial, k_splits, slab_rows, n);
  } else if (n <= 4096) {
    softmax_rows_of_split_sums_kernel<OutT, 4>
        <<<grid, 256, 0, stream>>>(out, partial, k_splits, slab_rows, n);
  } else if (n <= 8192) {
    softmax_rows_of_split_sums_kernel<OutT, 8>
        <<<grid, 256, 0, stream>>>(out, partial, k_splits, slab_rows, n);
  } else {
    softmax_rows_of_split_sums_kernel<OutT, 16>
        <<<grid, 256, 0, stream>>>(out, partial, k_splits, slab_rows, n);
  }
}

}  // namespace

void combine_softmax_stats(const float2* partial, float2* final_stats, float* col_scales,
                           std::int64_t m, std::int64_t n, bool rows, int blocks,
                           cudaStream_t stream) {
  if (rows) {
    combine_rows_kernel<<<static_cast<unsigned>((m * 32 + 255) / 256), 256, 0, stream>>>(
        partial, final_stats, m, blocks);
  } else {
    combine_cols_kernel<<<static_cast<unsigned>((n + 31) / 32), dim3(32, 32), 0, stream>>>(
        partial, final_stats, col_scales, n, blocks);
  }
  throw_if_launch_failed("softmax statistics");
}

void rescale_softmax_cols(void* out, DType out_type, const float* col_scales, std::int64_t m,
                          std::int64_t n, int block_log2, cudaStream_t stream) {
  const unsigned grid = static_cast<unsigned>(m);
  if (out_type == DType::bf16) {
    rescale_cols_kernel<<<grid, 256, 0, stream>>>(static_cast<__nv_bfloat16*>(out), col_scales, n,
                                                  block_log2);
  } else {
    rescale_cols_kernel<<<grid, 256, 0, stream>>>(static_cast<float*>(out), col_scales, n,
                                                  block_log2);
  }
  throw_if_launch_failed("softmax rescale");
}

void combine_rescale_rows(void* out, DType out_type, const float2* partial, std::int64_t m,
                          std::int64_t n, int blocks, int block_log2, cudaStream_t stream,
                          WrittenRows written) {
  constexpr int kQuads = 8;  // 8192 fp32 columns in one round of 256 threads
  constexpr const char* kWhat = "softmax combine and rescale";
  if (out_type == DType::bf16) {
    launch_row_pass(combine_rescale_rows_kernel<__nv_bfloat16, kQuads>, m, written, stream, kWhat,
                    static_cast<__nv_bfloat16*>(out), partial, static_cast<long>(n), blocks,
                    block_log2, written);
  } else {
    launch_row_pass(combine_rescale_rows_kernel<float, kQuads>, m, written, stream, kWhat,
                    static_cast<float*>(out), partial, static_cast<long>(n), blocks, block_log2,
                    written);
  }
}

void softmax_rows_after_max(void* out, const float2* partial, std::int64_t m, std::int64_t n,
                            int blocks, cudaStream_t stream, WrittenRows written) {
  if (n > kAfterMaxMaxCols) {
    throw KernelError("softmax rows after max: " + std::to_string(n) + " columns, more than " +
                      std::to_string(kAfterMaxMaxCols));
  }
  constexpr const char* kWhat = "softmax rows after max";
  auto* scores = static_cast<float*>(out);
  // As few quads as hold the row: registers spent on quads past n keep fewer blocks,
  // and so fewer loads, in flight on an SM (the pass beside a sweep runs on a few SMs).
  if (n <= 4096) {
    launch_row_pass(softmax_rows_after_max_kernel<4>, m, written, stream, kWhat, scores, partial,
                    static_cast<long>(n), blocks, written);
  } else if (n <= 8192) {
    launch_row_pass(softmax_rows_after_max_kernel<8>, m, written, stream, kWhat, scores, partial,
                    static_cast<long>(n), blocks, written);
  } else {
    launch_row_pass(softmax_rows_after_max_kernel<16>, m, written, stream, kWhat, scores, partial,
                    static_cast<long>(n), blocks, written);
  }
}

void softmax_rows_of_split_sums(void* out, DType out_type, const float* partial, int k_splits,
                                std::int64_t slab_rows, std::int64_t m, std::int64_t n,
                                cudaStream_t stream) {
  if (n > kAfterMaxMaxCols) {
    throw KernelError("softmax rows of split sums: " + std::to_string(n) + " columns, more than " +
                      std::to_string(kAfterMaxMaxCols));
  }
  if (out_type == DType::bf16) {
    launch_rows_of_split_sums(static_cast<__nv_bfloat16*>(out), partial, k_splits, slab_rows, m, n,
                              stream);
  } else {
    launch_rows_of_split_sums(static_cast<float*>(out), partial, k_splits, slab_rows, m, n, stream);
  }
  throw_if_launch_failed("softmax rows of split sums");
}

}  // namespace flopline::kernels::detail
