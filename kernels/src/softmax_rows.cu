// Softmax over each row of an m x n row-major matrix.
//
// Rows of up to 16384 elements: a group of G threads (G a power of two, 32..1024) owns a
// row and holds it in registers, 16 elements per thread: one read of the input, the max
// and the sum reduced in the group (shuffles, then shared memory across warps), one
// write. G is the smallest group that holds the row, so short rows share a block (8 rows
// of 512 per 256-thread block) and long rows get up to a 1024-thread block. Loads and
// stores are 16-byte vectors when every row starts 16-byte aligned (n a multiple of the
// vector and aligned base pointers), coalesced scalars otherwise.
//
// Longer rows: a 1024-thread block per row keeps running (max, sum) statistics per thread
// over one read, merges them, and a second read writes the output.
#include <algorithm>
#include <cstdint>

#include "softmax_common.cuh"
#include "softmax_launch.h"

namespace flopline::kernels::detail {
namespace {

using namespace softmax_parts;

constexpr int kPerThread = 16;        // row elements each thread holds in registers
constexpr int kMaxGroup = 1024;       // threads per row at most: rows up to 16384 in registers
constexpr int kMinBlock = 256;        // short rows: several rows per block of at least this
constexpr int kOnlineThreads = 1024;  // rows longer than kPerThread * kMaxGroup

// Stores W consecutive outputs as 16-byte packs (a bf16 input vector of 8 becomes two
// fp32 stores of 4).
template <class TOut, int W>
__device__ __forceinline__ void store_vector(TOut* dst, const float* v, float inv) {
  constexpr int kChunk =
      W < 16 / static_cast<int>(sizeof(TOut)) ? W : 16 / static_cast<int>(sizeof(TOut));
#pragma unroll
  for (int c = 0; c < W / kChunk; ++c) {
    float scaled[kChunk];
#pragma unroll
    for (int e = 0; e < kChunk; ++e) scaled[e] = v[c * kChunk + e] * inv;
    reinterpret_cast<Pack<TOut, kChunk>*>(dst)[c] = pack<TOut, kChunk>(scaled);
  }
}

// kVector: W = 16 / sizeof(TIn) elements per access (n % W == 0, aligned pointers).
// Thread `lane` of a group holds elements lane*W + j*G*W + e (vector) or lane + j*G
// (scalar), coalesced across the group either way. The whole row is read before the
// first store, so out may be x itself.
//
// 48 registers at most (no spills): 5 blocks of 256 threads per SM instead of 4 at the
// 54 the compiler picks unbounded, a quarter more loads in flight for a pass bound by
// memory. 1024-thread blocks still fit.
template <class TIn, class TOut, bool kVector>
__global__ void __maxnreg__(48)
    softmax_rows_registers(const TIn* x, TOut* out, std::int64_t m, int n, int group) {
  constexpr int W = kVector ? 16 / static_cast<int>(sizeof(TIn)) : 1;
  constexpr int kUnits = kPerThread / W;
  __shared__ float scratch[kMaxGroup / 32];
  const int lane = static_cast<int>(threadIdx.x) % group;
  const int rows_per_block = static_cast<int>(blockDim.x) / group;
  for (std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * rows_per_block; first < m;
       first += static_cast<std::int64_t>(gridDim.x) * rows_per_block) {
    const std::int64_t row = first + static_cast<int>(threadIdx.x) / group;
    const bool live = row < m;  // dead threads still join the reductions
    // Units of this thread inside the row: u < units holds unit lane + u * group.
    const int units = live ? (n / W - lane + group - 1) / group : 0;
    const Pack<TIn, W>* xr = reinterpret_cast<const Pack<TIn, W>*>(x + (live ? row : 0) * n) + lane;
    float v[kPerThread];
    float mx = -INFINITY;
#pragma unroll
    for (int u = 0; u < kUnits; ++u) {
      if (u < units) {
        unpack(xr[u * group], &v[u * W]);
      } else {
#pragma unroll
        for (int e = 0; e < W; ++e) v[u * W + e] = -INFINITY;
      }
    }
#pragma unroll
    for (int i = 0; i < kPerThread; ++i) mx = fmaxf(mx, v[i]);
    mx = group_reduce(mx, MaxOp{}, scratch, group);
    float sum = 0.0f;
#pragma unroll
    for (int u = 0; u < kUnits; ++u) {
#pragma unroll
      for (int e = 0; e < W; ++e) {
        v[u * W + e] = u < units ? exp_shifted(v[u * W + e], mx) : 0.0f;
        sum += v[u * W + e];
      }
    }
    sum = group_reduce(sum, SumOp{}, scratch, group);
    const float inv = 1.0f / sum;
    TOut* orow = out + (live ? row : 0) * n + lane * W;
#pragma unroll
    for (int u = 0; u < kUnits; ++u) {
      if (u < units) {
        if constexpr (kVector)
          store_vector<TOut, W>(orow + u * group * W, &v[u * W], inv);
        else
          orow[u * group] = from_float<TOut>(v[u] * inv);
      }
    }
  }
}

// Rows longer than the registers hold: one block per row, two reads.
template <class TIn, class TOut>
__global__ void __launch_bounds__(kOnlineThreads)
    softmax_rows_online(const TIn* x, TOut* out, std::int64_t m, int n) {
  __shared__ float scratch[kOnlineThreads / 32];
  for (std::int64_t row = blockIdx.x; row < m; row += gridDim.x) {
    const TIn* xr = x + row * n;
    Stats s = empty_stats();
#pragma unroll 4
    for (std::int64_t i = threadIdx.x; i < n; i += kOnlineThreads) add_value(s, to_float(xr[i]));
    const float mx = group_reduce(s.max, MaxOp{}, scratch, kOnlineThreads);
    const float mine = s.sum == 0.0f ? 0.0f : s.sum * exp_shifted(s.max, mx);
    const float inv = 1.0f / group_reduce(mine, SumOp{}, scratch, kOnlineThreads);
    TOut* orow = out + row * n;
    for (std::int64_t i = threadIdx.x; i < n; i += kOnlineThreads) {
      orow[i] = from_float<TOut>(exp_shifted(to_float(xr[i]), mx) * inv);
    }
  }
}

bool aligned16(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

template <class TIn, class TOut>
void launch_rows(const SoftmaxProblem& p, cudaStream_t stream) {
  const TIn* x = static_cast<const TIn*>(p.x);
  TOut* out = static_cast<TOut*>(p.out);
  const int n = static_cast<int>(p.n);
  if (p.n > static_cast<std::int64_t>(kPerThread) * kMaxGroup) {
    const unsigned grid = static_cast<unsigned>(std::min<std::int64_t>(p.m, std::int64_t{1} << 30));
    softmax_rows_online<TIn, TOut><<<grid, kOnlineThreads, 0, stream>>>(x, out, p.m, n);
    return;
  }
  int group = 32;
  while (group * kPerThread < n) group *= 2;
  const int block = std::max(group, kMinBlock);
  const std::int64_t rows_per_block = block / group;
  const unsigned grid = static_cast<unsigned>(
      std::min<std::int64_t>((p.m + rows_per_block - 1) / rows_per_block, std::int64_t{1} << 30));
  constexpr int W = 16 / static_cast<int>(sizeof(TIn));
  if (n % W == 0 && aligned16(x) && aligned16(out)) {
    softmax_rows_registers<TIn, TOut, true><<<grid, block, 0, stream>>>(x, out, p.m, n, group);
  } else {
    softmax_rows_registers<TIn, TOut, false><<<grid, block, 0, stream>>>(x, out, p.m, n, group);
  }
}

}  // namespace

void launch_softmax_rows(const SoftmaxProblem& p, cudaStream_t stream) {
  softmax_parts::with_softmax_types(p.in, p.out_type, [&](auto in, auto out) {
    launch_rows<decltype(in), decltype(out)>(p, stream);
  });
}

}  // namespace flopline::kernels::detail
