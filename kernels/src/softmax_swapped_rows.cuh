// Row softmax epilogue of the swapped core (sm90_gemm_swapped.cuh) for the rescale
// scheme of matmul_softmax.cu: one sweep writes exp(s - tile max) and each row's
// (tile max, sum of exp) per 128-column tile, and combine_rescale_rows
// (softmax_finish.cuh) finishes; or (kScoresOnly, rows of at most 16384) it writes the
// raw scores and the tile maxima, and softmax_rows_after_max finishes. It lets tf32 rows
// run without the transpose of B that the core of sm90_gemm.cuh needs (one more pass
// over B).
//
// On the swapped core a row of C is spread thin: the 8 lanes sharing lane % 4 hold the
// same 64 rows at 2 columns each, and a tile's 128 columns lie across those 8 lanes, the
// 4 warps of a consumer and both consumers. Per tile, then: each thread's per-row max over
// its 2 columns; a reduce-scatter over the 8 lanes (56 shuffles leave each lane 8 rows'
// maxima over the warp's 16 columns); a shared-memory max on order-preserving keys into a 256-entry
// array in shared memory (8 warps per row); the exp values go out through the staged
// stores with the tile maxima read back a round (8 rows) at a time; the sums go the same
// way (a reduce-scatter per output round, then integer adds in fixed point). A few hundred
// shuffles and 16 shared-memory reductions per thread and tile.
//
// The array (SwappedContext::row_scratch, 1 KB: what shared memory has left beside the
// four stages and the staging) holds the maxima and then the sums, so five barriers of
// both consumers order its uses per tile (two with kScoresOnly). It is zero between
// tiles (key 0 is below every float's key).
#pragma once

#include <cmath>
#include <cstdint>

#include "fast_exp.cuh"
#include "sm90_gemm_swapped.cuh"

namespace flopline::kernels::sm90::swapped {

// Order-preserving keys for floats: unsigned comparison of keys is float comparison.
__device__ __forceinline__ unsigned float_key(float x) {
  const unsigned b = __float_as_uint(x);
  return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
__device__ __forceinline__ float key_float(unsigned k) {
  return __uint_as_float((k & 0x80000000u) ? (k ^ 0x80000000u) : ~k);
}

// max that returns NaN when either input is NaN (fmaxf drops a NaN): a row with a NaN
// score gets a NaN tile max, so its softmax comes out NaN, as PyTorch's does.
__device__ __forceinline__ float max_nan(float a, float b) {
  float r;
  asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
  return r;
}

// Shared-memory reductions by address: through a generic pointer nvcc emitted generic
// atomics with a shared-or-global branch, and a float atomicAdd on shared memory is a
// compare-and-swap loop on sm_90 (ATOMS.CAST.SPIN), which 8 warps per row serialized:
// the sums are added as fixed-point integers instead (kSumScale).
__device__ __forceinline__ void red_shared_max(std::uint32_t addr, unsigned v) {
  asm volatile("red.shared.max.u32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
}
__device__ __forceinline__ void red_shared_add(std::uint32_t addr, unsigned v) {
  asm volatile("red.shared.add.u32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
}
// Each exp(s - tile max) is at most 1, so a row's sum over a tile's 128 columns is at
// most 128: 2^24 per unit keeps it below 2^31, and rounding each of the 8 warps' parts
// costs at most 8 * 2^-25 against a sum of at least 1 (the max's own term).
constexpr float kSumScale = 16777216.0f;  // 2^24

// One halving of a reduce-scatter: the lanes with `bit` set keep entries [Half, 2 Half),
// the others [0, Half), each reduced with its partner's copy, into v[0 .. Half).
template <int Half, class Op>
__device__ __forceinline__ void reduce_half(float* v, int lane, int bit, Op op) {
  const bool upper = (lane >> bit) & 1;
#pragma unroll
  for (int k = 0; k < Half; ++k) {
    const float keep = upper ? v[k + Half] : v[k];
    const float send = upper ? v[k] : v[k + Half];
    v[k] = op(keep, __shfl_xor_sync(0xffffffffu, send, 1 << bit));
  }
}

// Reduce-scatter of N values per lane over the 8 lanes that share lane % 4 (lane bits 2-4):
// afterwards v[0 .. N/8) hold the reduction of original entries k + (N/8) * (lane >> 2).
// (Each halving's trip count is a template argument: as a loop over the halvings, nvcc
// left the inner loop rolled and the array in local memory.)
template <int N, class Op>
__device__ __forceinline__ void reduce_scatter8(float (&v)[N], int lane, Op op) {
  reduce_half<N / 2>(v, lane, 4, op);
  reduce_half<N / 4>(v, lane, 3, op);
  reduce_half<N / 8>(v, lane, 2, op);
}

// Softmax over rows (dim -1), fp32 output, rescale sweep: exp(s - tile max) into C and
// partial[row][tile column] = (tile max, sum of exp) for the row's 128 columns of the tile.
// kScoresOnly: the raw scores into C and (tile max, 0) into partial, for
// softmax_rows_after_max, which does the exps and the sums as it streams the rows (two
// of the five barriers per tile, no exps and no sums here, with the tensor cores idle).
template <class Ops, bool kScoresOnly = false>
struct SwappedRowsEpilogue {
  int m, n;
  float2* partial;    // [m][ceil(n / 128)]
  unsigned* written;  // [ceil(m / 256)]: consumer halves of tiles in memory (CountsWritten)

  __device__ void operator()(const float (&d)[kAccum], int row0, int col0, int warp, int lane,
                             const SwappedContext& ctx) const {
    // Only the last column of tiles reaches past n.
    if (col0 - ctx.consumer * 64 + kBlockN <= n) {
      run<false>(d, row0, col0, warp, lane, ctx);
    } else {
      run<true>(d, row0, col0, warp, lane, ctx);
    }
  }

  template <bool kCheckCols>
  __device__ void run(const float (&d)[kAccum], int row0, int col0, int warp, int lane,
                      const SwappedContext& ctx) const {
#ifdef FLOPLINE_SM90A
    using fast::exp2_ftz;
    using fast::kLog2e;
    const unsigned* keys = ctx.row_scratch;  // tile maxima, then fixed-point sums
    const std::uint32_t keys_at = smem_addr(ctx.row_scratch);
    const int t =
        ctx.consumer * 128 + warp * 32 + lane;  // this thread's row for the array's own work
    const int q = lane & 3, g = lane >> 2;
    // Columns past n (zeros from TMA's fill) take no part in a row's statistics.
    const bool in0 = !kCheckCols || col0 + Ops::column(warp, lane, 0) < n;
    const bool in1 = !kCheckCols || col0 + Ops::column(warp, lane, 1) < n;
    // Register i = 4j + e holds row 8j + 2q + (e & 1) at the thread's column e >> 1: entry
    // k = 2j + b of a per-row array is row 8(k >> 1) + 2q + (k & 1).
    auto row_of = [&](int k) { return 8 * (k >> 1) + 2 * q + (k & 1); };

    // The previous tile's last use of the array (its sums, then the reset) is done.
    named_barrier_sync(kBarrierSwappedRows, 256);
    {
      float mx[64];
#pragma unroll
      for (int k = 0; k < 64; ++k) {
        const int i = 4 * (k >> 1) + (k & 1);
        mx[k] = max_nan(in0 ? d[i] : -INFINITY, in1 ? d[i + 2] : -INFINITY);
      }
      reduce_scatter8(mx, lane, [](float a, float b) { return max_nan(a, b); });
#pragma unroll
      for (int k = 0; k < 8; ++k) red_shared_max(keys_at + 4 * row_of(k + 8 * g), float_key(mx[k]));
    }
    named_barrier_sync(kBarrierSwappedRows, 256);
    const unsigned own_key = keys[t];  // for this thread's partial write at the end
    const int tiles_n = (n + kBlockN - 1) / kBlockN;
    float2* own_partial = partial + static_cast<std::int64_t>(row0 + t) * tiles_n + col0 / kBlockN;
    if constexpr (kScoresOnly) {
      // Nobody else reads entry t: it is reset here, before the next tile's first barrier.
      st_shared_u32(keys_at + 4 * t, 0u);
      stage_block<Ops, float>(ctx, row0, col0, warp, lane, [&](int i) { return d[i]; });
      if (row0 + t < m) *own_partial = make_float2(key_float(own_key), 0.0f);
      return;
    }

    // exp(s - tile max) out through the staging, with the tile maxima of each round's
    // kRoundEntries rows read at its start (a row pair's keys are adjacent: one 8-byte load).
    constexpr int kRoundEntries = kRegsPerRound / 2;  // rows per thread and round
    constexpr int kPairs = kRoundEntries / 2;
    constexpr int kRedPerRound = kRoundEntries / 8;  // per lane, after a round's reduce-scatter
    float sum[kRoundEntries] = {};                   // the current round's per-row sums
    float red[kOutRounds * kRedPerRound];  // rows of entries kRoundEntries r + kRedPerRound g + b
    uint2 round_keys[kPairs];
    float mx_log2e[2] = {0.0f, 0.0f};
    stage_block<Ops, float>(ctx, row0, col0, warp, lane, [&](int i) {
      const int j = i >> 2, e = i & 3;
      // The round's row pairs' keys, loaded together at its first register (the staging
      // stores' asm keeps the compiler from hoisting loads; one pair at a time measured
      // the same).
      if (i % kRegsPerRound == 0) {
#pragma unroll
        for (int u = 0; u < kPairs; ++u)
          round_keys[u] = *reinterpret_cast<const uint2*>(&keys[8 * (j + u) + 2 * q]);
      }
      if (e == 0) {
        mx_log2e[0] = key_float(round_keys[j % kPairs].x) * kLog2e;
        mx_log2e[1] = key_float(round_keys[j % kPairs].y) * kLog2e;
      }
      const float shift = mx_log2e[e & 1];
      const bool in = (e >> 1) ? in1 : in0;
      const float x = in ? exp2_ftz(fmaf(d[i], kLog2e, -shift)) : 0.0f;
      const int k = (2 * j + (e & 1)) % kRoundEntries;
      sum[k] = (e >> 1) ? sum[k] + x : x;
      if (i % kRegsPerRound == kRegsPerRound - 1) {  // the round's last register
        reduce_scatter8(sum, lane, [](float a, float b) { return a + b; });
        const int r = i / kRegsPerRound;
#pragma unroll
        for (int b = 0; b < kRedPerRound; ++b) red[kRedPerRound * r + b] = sum[b];
      }
      return x;
    });

    // Every thread has read its maxima: the array takes the sums.
    named_barrier_sync(kBarrierSwappedRows, 256);
    st_shared_u32(keys_at + 4 * t, 0u);
    named_barrier_sync(kBarrierSwappedRows, 256);
#pragma unroll
    for (int r = 0; r < kOutRounds; ++r) {
#pragma unroll
      for (int b = 0; b < kRedPerRound; ++b) {
        // A NaN part (a NaN row) adds 0: the row's NaN tile max already makes it NaN.
        red_shared_add(keys_at + 4 * row_of(kRoundEntries * r + kRedPerRound * g + b),
                       __float2uint_rn(red[kRedPerRound * r + b] * kSumScale));
      }
    }
    named_barrier_sync(kBarrierSwappedRows, 256);
    const float own_sum = static_cast<float>(keys[t]) * (1.0f / kSumScale);
    st_shared_u32(keys_at + 4 * t,
                  0u);  // the next tile's first barrier orders this before its maxima
    if (row0 + t < m) *own_partial = make_float2(key_float(own_key), own_sum);
#endif
  }
};

}  // namespace flopline::kernels::sm90::swapped
