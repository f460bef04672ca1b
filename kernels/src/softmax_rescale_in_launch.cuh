// Row softmax at large k in one launch of the transposing sm90 core: the rescale scheme
// (the sweep writes exp(s - tile max) and per-tile row statistics, and the output is
// then scaled in place by exp(tile max - M) / S), with the scaling done inside the same
// launch by the producer warpgroup's three idle warps while the consumers' tensor cores
// run the next tiles.
//
// Why: as separate passes (combine, rescale) the scheme is one matmul plus a pass over
// the output with the traffic of a standalone softmax, so at best it ties cuBLAS + a
// softmax. In the launch, the rescale's reads and writes run under a matmul that is
// bound by its tensor cores. That holds while a tile's k loop outlasts the scaling of a
// tile (merging the row statistics, then reading, scaling and writing 128 KB of fp32):
// at smaller k the scaling falls further behind with every tile and the launch loses to
// the passes, so the plan takes it from tuning::kRescaleInLaunchMinK and for fp32
// output only (bf16 output halves the passes' traffic, and they stay ahead).
//
// Protocol, per 128-row block tm of the output (written[tm], zero at the start):
//  - each consumer counts its 64x256 half of a tile once it is in memory: its row
//    statistics were stored before the staging's last barrier, and its thread 0 waits
//    for the tile's TMA stores to complete, then adds 1 with release semantics. That
//    wait happens a few k tiles into the consumer's next tile (kCountAtKTile, in
//    sm90_gemm.cuh), when the stores have drained, not with the tensor cores idle.
//  - the rescaling warps walk the CTA's tiles in the consumers' order. For each, they
//    wait until written[tm] reaches 2 x tiles_n (both halves of every tile of the row
//    block), combine each row's tiles_n statistics into the tile's factor, and scale
//    the tile in place.
// The consumers never wait for the rescaling warps, so every CTA finishes and counts all
// of its tiles; the rescaling warps wait for other CTAs' tiles, so all CTAs must be
// resident at once: the launch is cooperative.
#pragma once

#include <cmath>
#include <cstdint>

#include "fast_exp.cuh"
#include "matmul_common.cuh"
#include "softmax_epilogue.cuh"
#include "softmax_merge.cuh"
#include "softmax_quad.cuh"
#include "tile_shapes.h"

namespace flopline::kernels::sm90 {

// Two (max, sum of exp(x - max)) pairs merged (both empty: the first) with the
// epilogue's one-instruction exp (exp_shifted, ex2.approx.ftz), not the standalone
// softmax's exp2f: the merge is a chain of dependent exps per row, and the slower exp
// showed in the launch's time.
struct EpilogueExpShifted {
  __device__ float operator()(float x, float mx) const { return exp_shifted(x, mx * fast::kLog2e); }
};
__device__ __forceinline__ float2 merge_row_stats(float2 a, float2 b) {
  return detail::merge_stats<detail::EmptySide::first_when_all_empty>(a, b, EpilogueExpShifted{});
}

template <class OutT>
struct RescaleInLaunchEpilogue : SoftmaxEpilogue<OutT> {
  static constexpr bool kRescalesInLaunch = true;
  // The producer warpgroup's warps 1-3 (warp 0 issues the TMA loads).
  static constexpr int kRescaleThreads = 96;
  // Row statistics being merged, then the tile's 128 row factors: what shared memory
  // the kernel leaves (227 KB less 3 pipeline stages, the staging and alignment slack).
  static constexpr int kStatsBytes = shapes::kRescaleInLaunchStatsBytes;
  static constexpr int kRescaleSmemBytes = kStatsBytes + kBlockM * static_cast<int>(sizeof(float));

  unsigned* written;  // [tiles_m]: consumer halves of tiles in memory, per 128-row block

#ifdef FLOPLINE_SM90A
  // A consumer's thread 0, once its half of a tile in row block tm is in memory (its TMA
  // stores waited for with bulk_wait<0>).
  __device__ void tile_written(int tm) const {
    fence_proxy_async_global();
    red_add_release_gpu(written + tm, 1u);
  }

  // The rescaling warps (tid 0-95), for the CTA's tiles in order; smem: the
  // kRescaleSmemBytes after the staging.
  __device__ void rescale_tile(int tm, int tn, unsigned char* smem, int tid) const {
    using fast::kLog2e;
    const int tiles = this->tiles_n, m = this->m, n = this->n;
    float* factors = reinterpret_cast<float*>(smem + kStatsBytes);
    // One thread polls and acquires; the named barrier then orders the other threads'
    // loads after its acquire, and keeps the shared memory from being refilled before
    // every warp is done with the previous tile.
    if (tid == 0) {
      const unsigned* count = written + tm;
      const unsigned all = 2u * static_cast<unsigned>(tiles);
      while (ld_acquire_gpu(count) < all) __nanosleep(512);
    }
    named_barrier_sync(kBarrierRescale, kRescaleThreads);
    const int row0 = tm * kBlockM, col0 = tn * kBlockN;
    const int rows = min(kBlockM, m - row0);

    // Each row's (M, S) from its tiles' (max, sum) pairs. The pairs of consecutive rows
    // are contiguous: chunks of rows are copied to shared memory with cp.async, all of a
    // chunk's copies in flight at once, then a thread per row merges its pairs. (Loaded
    // into registers, a thread per row looping over 32 tiles or a warp per row, the
    // loads' latency set the pace and the launch fell behind the two passes.)
    // A chunk holds an even number of rows, so every chunk starts 16-byte aligned.
    const int chunk_rows = min(rows, (kStatsBytes / (8 * tiles)) & ~1);
    const std::uint32_t stats = detail::smem_u32(smem);
    for (int c0 = 0; c0 < rows; c0 += chunk_rows) {
      const int chunk = min(chunk_rows, rows - c0);
      const auto* src = reinterpret_cast<const unsigned char*>(
          this->partial + static_cast<std::int64_t>(row0 + c0) * tiles);
      const int bytes = 8 * chunk * tiles;  // a multiple of 8: the last copy may be half
      for (int i = 16 * tid; i < bytes; i += 16 * kRescaleThreads) {
        detail::cp_async_16_partial(stats + i, src + i, min(16, bytes - i));
      }
      detail::cp_async_commit();
      detail::cp_async_wait<0>();
      named_barrier_sync(kBarrierRescale, kRescaleThreads);
      const float2* pairs = reinterpret_cast<const float2*>(smem);
      for (int r = tid; r < chunk; r += kRescaleThreads) {
        // Row r starts at tile r % tiles: neighbouring threads then read different banks
        // (a row is 8 x tiles bytes: at tiles = 16 or 32, all would start on one bank).
        float2 acc = make_float2(-INFINITY, 0.0f);
        for (int i = 0, t = r % tiles; i < tiles; ++i, t = t + 1 == tiles ? 0 : t + 1) {
          acc = merge_row_stats(acc, pairs[r * tiles + t]);
        }
        factors[c0 + r] = exp_shifted(pairs[r * tiles + tn].x, acc.x * kLog2e) / acc.y;
      }
      named_barrier_sync(kBarrierRescale, kRescaleThreads);
    }

    // The tile, a row (64 quads) per warp at a time, lanes on quads lane and lane + 32;
    // kRowsInFlight rows' loads issued before their stores: 96 threads x 8 quads (12 KB
    // of fp32) in flight. That needs the producer warpgroup at 80 registers per thread
    // (at 72, 4 rows spilled; ptxas -v). Adding 15 KB more in flight through shared
    // memory (cp.async) did not make it faster.
    constexpr int kWarps = kRescaleThreads / 32, kRowsInFlight = 4;
    const int warp = tid / 32, lane = tid % 32;
    const int quads = min(kBlockN, n - col0) / 4;  // n is a multiple of 4
    const bool in0 = lane < quads, in1 = lane + 32 < quads;
    const std::int64_t row_step = static_cast<std::int64_t>(kWarps) * n;
    OutT* p = this->out + static_cast<std::int64_t>(row0 + warp) * n + col0 + 4 * lane;
    for (int r = warp; r < rows; r += kWarps * kRowsInFlight, p += kRowsInFlight * row_step) {
      detail::Quad lo[kRowsInFlight], hi[kRowsInFlight];
#pragma unroll
      for (int j = 0; j < kRowsInFlight; ++j) {
        const bool row_in = r + j * kWarps < rows;
        if (row_in && in0) lo[j] = detail::load4(p + j * row_step);
        if (row_in && in1) hi[j] = detail::load4(p + j * row_step + 128);
      }
#pragma unroll
      for (int j = 0; j < kRowsInFlight; ++j) {
        if (r + j * kWarps >= rows) break;
        const float f = factors[r + j * kWarps];
        if (in0) {
          detail::scale4(lo[j], f);
          detail::store4(p + j * row_step, lo[j]);
        }
        if (in1) {
          detail::scale4(hi[j], f);
          detail::store4(p + j * row_step + 128, hi[j]);
        }
      }
    }
  }
#endif
};

}  // namespace flopline::kernels::sm90
