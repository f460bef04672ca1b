// How the sm90 epilogues write their output: directly, two columns per store, or for
// 16-bit outputs on streaming runs staged in shared memory and stored by TMA
// (StagedOutput), and the plain store epilogue of the matmul (StoreEpilogue).
//
// Why staging: direct stores are issued by both consumers with the tensor cores idle
// (under ncu a measurable share of the bf16 matmul). Staged, each consumer writes its
// 64x256 block into shared memory and one thread hands it to TMA; the consumers go on to
// the next tile while the stores drain.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "sm90_gemm.cuh"

namespace flopline::kernels::sm90 {

// Two adjacent columns of C at once: on this path n is a multiple of 4 (fp32) or 8
// (16-bit) and columns come in even pairs, so a pair is inside and aligned.
__device__ __forceinline__ void store_pair(float* p, float a, float b) {
  *reinterpret_cast<float2*>(p) = make_float2(a, b);
}
__device__ __forceinline__ void store_pair(__nv_bfloat16* p, float a, float b) {
  *reinterpret_cast<__nv_bfloat162*>(p) = __floats2bfloat162_rn(a, b);
}
__device__ __forceinline__ void store_pair(__half* p, float a, float b) {
  *reinterpret_cast<__half2*>(p) = __floats2half2_rn(a, b);
}

__device__ __forceinline__ std::uint32_t pack_pair(__nv_bfloat16*, float a, float b) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(a, b);
  return *reinterpret_cast<const std::uint32_t*>(&v);
}
__device__ __forceinline__ std::uint32_t pack_pair(__half*, float a, float b) {
  const __half2 v = __floats2half2_rn(a, b);
  return *reinterpret_cast<const std::uint32_t*>(&v);
}

// Two adjacent 8-column blocks of one row of a 16-bit output, from the quad of lanes
// that holds the row: `a` is the lane's pair in the first block, `b` in the second. The
// lanes swap pairs so that each stores 4 columns (8 bytes): even lanes of the first
// block, odd lanes of the second. A warp's store then writes a whole 32-byte sector per
// row, where storing the pairs as they are wrote half sectors (and made cluster rows with
// bf16 output slower than with fp32 output).
// Every lane must call it (a shuffle). `block` points at the first block's column 0 of
// the row; `row_in`: the row is inside the matrix; `cols_inside`: how many columns from
// `block` on are (n is a multiple of 4, so a lane's 4 columns are wholly in or out).
template <class OutT>
__device__ __forceinline__ void store_two_blocks16(OutT* block, std::uint32_t a, std::uint32_t b,
                                                   int lane, bool row_in, int cols_inside) {
  const bool odd = (lane & 1) != 0;
  const std::uint32_t got = __shfl_xor_sync(0xffffffffu, odd ? a : b, 1);
  const int col = odd ? 8 + ((lane & 3) - 1) * 2 : (lane & 3) * 2;
  if (row_in && col < cols_inside) {
    *reinterpret_cast<uint2*>(block + col) = odd ? make_uint2(got, b) : make_uint2(a, got);
  }
}

// A consumer's 64x256 block of the output staged in shared memory in boxes of 64 rows x
// 128 bytes (64 columns of 16-bit, 32 of fp32) in the 128-byte swizzle (the 8 rows a
// warp writes at once land in 8 different bank groups), then stored by one thread with
// TMA. A 16-bit block goes in one round of four boxes (32 KB per consumer); an fp32
// block in eight rounds of one box (32 columns, accumulator registers 16r to 16r+15),
// alternating between two 8 KB buffers (16 KB per consumer), so that a round waits only
// for the stores of the round before the last to have read its buffer. The fp32
// staging's 32 KB leave the pipeline its fourth stage (sm90_gemm.cuh). With one buffer,
// or with rounds too big to leave that stage, a round waited for the last one's stores
// with the tensor cores idle. An epilogue that uses it declares `kStagingBytes =
// StagedOutput<OutT>::kBytes` and `kBoxCols` (sm90_gemm.cuh), and per round, between
// begin() and finish(), every thread put()s its pairs.
template <class OutT>
struct StagedOutput {
  static constexpr int kBoxCols = 128 / static_cast<int>(sizeof(OutT)), kBoxBytes = 64 * 128;
  static constexpr int kBuffers = sizeof(OutT) == 4 ? 2 : 1;  // halves of a consumer's staging
  static constexpr int kBoxesPerRound = sizeof(OutT) == 4 ? 1 : 4;
  static constexpr int kBufferBytes = kBoxesPerRound * kBoxBytes;
  static constexpr int kColsPerRound = kBoxesPerRound * kBoxCols;
  static constexpr int kRounds = kBlockN / kColsPerRound;
  static constexpr int kPerConsumer = kBuffers * kBufferBytes;
  static constexpr int kBytes = 2 * kPerConsumer;

#ifdef FLOPLINE_SM90A
  // Waits until the buffer of round `round` is free (the consumer's stores before the
  // last kBuffers - 1 rounds have read it; rounds go out in order); returns its shared
  // address. tid: the thread in its warpgroup.
  __device__ static std::uint32_t begin(const EpilogueContext& ctx, int tid, int round) {
    if (tid == 0) bulk_wait_read<kBuffers - 1>();
    named_barrier_sync(kBarrierStaging + ctx.consumer, 128);
    return smem_addr(ctx.smem + ctx.consumer * kPerConsumer + (round % kBuffers) * kBufferBytes);
  }
  // Columns c, c+1 (c even, counted from the block's first column, in the round being
  // staged) of row r.
  __device__ static void put(std::uint32_t base, int r, int c, float a, float b) {
    const int box = (c / kBoxCols) % kBoxesPerRound;
    const int byte = (c % kBoxCols) * static_cast<int>(sizeof(OutT));  // within the box's row
    const std::uint32_t at =
        base + box * kBoxBytes + r * 128 + (((byte >> 4) ^ (r & 7)) << 4) + (byte & 15);
    if constexpr (sizeof(OutT) == 4) {
      asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(at), "f"(a), "f"(b) : "memory");
    } else {
      st_shared_u32(at, pack_pair(static_cast<OutT*>(nullptr), a, b));
    }
  }
  // Round `round` of the block at (row0, col0) is complete in shared memory: one thread
  // stores it (TMA clips at the matrix edges).
  __device__ static void finish(const EpilogueContext& ctx, int tid, int row0, int col0,
                                int round) {
    fence_proxy_async_shared();
    named_barrier_sync(kBarrierStaging + ctx.consumer, 128);
    if (tid == 0) {
      unsigned char* buf =
          ctx.smem + ctx.consumer * kPerConsumer + (round % kBuffers) * kBufferBytes;
      const int first = col0 + round * kColsPerRound;
#pragma unroll
      for (int b = 0; b < kBoxesPerRound; ++b)
        tma_store_2d(ctx.map_c, buf + b * kBoxBytes, first + b * kBoxCols, row0);
      bulk_commit();
    }
  }
  // Between two rounds of a block: round `done` goes out, and the next round's buffer
  // is taken.
  __device__ static std::uint32_t next_round(const EpilogueContext& ctx, int tid, int row0,
                                             int col0, int done) {
    finish(ctx, tid, row0, col0, done);
    return begin(ctx, tid, done + 1);
  }
  // Every round of a block whose values are in the accumulator registers v (pairs v[i],
  // v[i+1] at accum_row/accum_col(i)), times scale[0] in the thread's first row and
  // scale[1] in its second (row + 8).
  __device__ static void stage_block(const EpilogueContext& ctx, const float (&v)[kAccum], int row0,
                                     int col0, int warp, int lane,
                                     const float (&scale)[2] = {1.0f, 1.0f}) {
    const int tid = warp * 32 + lane;
#pragma unroll
    for (int round = 0; round < kRounds; ++round) {
      const std::uint32_t base = begin(ctx, tid, round);
      constexpr int kPerRound = kAccum / kRounds;
#pragma unroll
      for (int i = round * kPerRound; i < (round + 1) * kPerRound; i += 2) {
        const float f = scale[(i >> 1) & 1];
        put(base, accum_row(i, warp, lane), accum_col(i, lane), v[i] * f, v[i + 1] * f);
      }
      finish(ctx, tid, row0, col0, round);
    }
  }
#endif
};

// Plain store of the accumulator as OutT (float, __nv_bfloat16 or __half), staged on
// streaming runs.
template <class OutT>
struct StoreEpilogue {
  OutT* c;
  int m, n;

  static constexpr int kBoxCols = StagedOutput<OutT>::kBoxCols;
  static constexpr int kStagingBytes = StagedOutput<OutT>::kBytes;

  __device__ void operator()(const float (&d)[kAccum], int row0, int col0, int warp,
                             int lane) const {
#pragma unroll
    for (int i = 0; i < kAccum; i += 2) {
      const int row = row0 + accum_row(i, warp, lane);
      const int col = col0 + accum_col(i, lane);
      if (row < m && col < n)
        store_pair(c + static_cast<std::int64_t>(row) * n + col, d[i], d[i + 1]);
    }
  }

  __device__ void operator()(const float (&d)[kAccum], int row0, int col0, int warp, int lane,
                             const EpilogueContext& ctx) const {
    if (ctx.smem == nullptr) {
      (*this)(d, row0, col0, warp, lane);
      return;
    }
#ifdef FLOPLINE_SM90A
    StagedOutput<OutT>::stage_block(ctx, d, row0, col0, warp, lane);
#endif
  }
};

}  // namespace flopline::kernels::sm90
