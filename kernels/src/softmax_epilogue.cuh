// The fused row-softmax epilogue of the sm90 core's sweeps: with the 64x256 block of
// scores still in registers it computes softmax statistics per row over the block's 256
// columns, and either stores exp(s - block max) for a later rescale, or, when the final
// per-row statistics are known (second sweep), the normalized softmax itself. The score
// matrix is never written as such. (Column softmax runs on the swapped core,
// softmax_swapped.cuh, where a column's statistics stay in a quad of lanes; this core
// spread a column over 8 lanes and 8 warps.)
#pragma once

#include <cuda_bf16.h>

#include <cmath>

#include "fast_exp.cuh"
#include "sm90_epilogue_store.cuh"

namespace flopline::kernels::sm90 {

enum class SoftmaxPass : int {
  stats,            // write block statistics only
  stats_store_exp,  // write block statistics and exp(s - block max)
  normalize,        // write exp(s - M) / S with the final statistics
  store_scores,     // write the scores as they are and each block's row max (fp32 output)
};

// exp(x - mx) as one FFMA and one MUFU.EX2 (fast_exp.cuh): ex2.approx.ftz of
// x*log2(e) - mx*log2(e). At 128 scores per thread per tile the exp's instruction count
// decides the small-k sweeps. Error: about 2^-22 relative from ex2.approx plus the
// rounding of mx*log2(e) (1e-7 of |mx|, far below tf32's 1e-3); results below 2^-126
// (probabilities under 1e-38) flush to zero.
using fast::exp2_ftz;
using fast::kLog2e;
// exp(x - mx) given mx_log2e = mx * log2(e).
__device__ __forceinline__ float exp_shifted(float x, float mx_log2e) {
  return exp2_ftz(fmaf(x, kLog2e, -mx_log2e));
}

// The max of row r (half 0) or r + 8 (half 1) of a consumer's 64x256 block over its
// columns (< n when kCheckCols), reduced over the quad of threads sharing the row:
// -inf when no column is inside. Four independent chains: one chain of 64 dependent
// operations would leave the two consumer warps per scheduler waiting on latency.
template <bool kCheckCols>
__device__ __forceinline__ float block_row_max(const float (&d)[kAccum], int half, int col0,
                                               int lane, int n) {
  float mx4[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
#pragma unroll
  for (int i = 2 * half, j = 0; i < kAccum; i += 4, ++j) {
    if (!kCheckCols || col0 + accum_col(i, lane) < n)
      mx4[j & 3] = fmaxf(mx4[j & 3], fmaxf(d[i], d[i + 1]));
  }
  float mx = fmaxf(fmaxf(mx4[0], mx4[1]), fmaxf(mx4[2], mx4[3]));
  mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
  return fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
}

template <class OutT>
struct SoftmaxEpilogue {
  OutT* out;
  int m, n;
  SoftmaxPass pass;
  float2* partial;            // [m][tiles_n]: (block max, sum of exp)
  const float2* final_stats;  // [m]: (max, 1/sum), for normalize; null: combine the row's
                              // tiles_n partials here instead
  int tiles_n;

  // The output is staged for TMA stores on streaming runs (sm90_epilogue_store.cuh): a
  // 16-bit block in one round, an fp32 block in eight rounds of 32 columns (accumulator
  // registers 0-15, 16-31, ...), so every loop that writes output walks the registers
  // in ascending order when staging fp32, and next_round() sends a round out when it
  // reaches the next one's first register. (Computing the fp32 output into the accumulator
  // registers and staging it afterwards spilled 272-292 bytes in the column loop this
  // epilogue had: all 128 registers stayed live through it.)
  using Staged = StagedOutput<OutT>;
  static constexpr int kBoxCols = Staged::kBoxCols;
  static constexpr int kStagingBytes = Staged::kBytes;
  static constexpr int kRegsPerRound = kAccum / Staged::kRounds;

  // Where write<kToStage>() puts a pair: the staged round at shared address `staged` (the
  // block's row 0 and column 0 at row0, col0; ctx and tid for next_round), or the output
  // in global memory. A template argument, not a runtime test: with both kinds of store
  // in one loop ptxas spilled 132 bytes.
  struct Sink {
    std::uint32_t staged;
    int row0, col0;
    const EpilogueContext* ctx;
    int tid;
  };

  __device__ void operator()(const float (&d)[kAccum], int row0, int col0, int warp,
                             int lane) const {
    Sink sink{0u, row0, col0, nullptr, 0};
    run<false>(d, row0, col0, warp, lane, sink);
  }

  __device__ void operator()(const float (&d)[kAccum], int row0, int col0, int warp, int lane,
                             const EpilogueContext& ctx) const {
    // The statistics pass writes no output: nothing to stage.
    if (ctx.smem == nullptr || pass == SoftmaxPass::stats) {
      (*this)(d, row0, col0, warp, lane);
      return;
    }
#ifdef FLOPLINE_SM90A
    const int tid = warp * 32 + lane;
    Sink sink{Staged::begin(ctx, tid, 0), row0, col0, &ctx, tid};
    run<true>(d, row0, col0, warp, lane, sink);
    Staged::finish(ctx, tid, row0, col0, Staged::kRounds - 1);
#endif
  }

  // Called before writing accumulator registers i, i+1 (i a constant after unrolling,
  // visited in ascending order): at the first register of a later round, the staged
  // round goes out and the buffer is taken for the next one.
  template <bool kToStage>
  __device__ static void next_round_at(int i, Sink& sink) {
#ifdef FLOPLINE_SM90A
    if constexpr (kToStage && Staged::kRounds > 1) {
      if (i > 0 && i % kRegsPerRound == 0) {
        sink.staged =
            Staged::next_round(*sink.ctx, sink.tid, sink.row0, sink.col0, i / kRegsPerRound - 1);
      }
    }
#endif
  }

  template <bool kToStage>
  __device__ void run(const float (&d)[kAccum], int row0, int col0, int warp, int lane,
                      Sink& sink) const {
    // Most blocks lie wholly inside n: their loops run without per-pair column checks
    // (each check cost a branch around every pair of scores).
    if (col0 + kBlockN <= n) {
      by_rows<false, kToStage>(d, row0, col0, warp, lane, sink);
    } else {
      by_rows<true, kToStage>(d, row0, col0, warp, lane, sink);
    }
  }

  template <bool kToStage>
  __device__ void write(const Sink& sink, int row, int col, float a, float b) const {
#ifdef FLOPLINE_SM90A
    if constexpr (kToStage) {
      Staged::put(sink.staged, row - sink.row0, col - sink.col0, a, b);
      return;
    }
#endif
    store_pair(out + static_cast<std::int64_t>(row) * n + col, a, b);
  }

  // Writes the pair pair(i, half) for each accumulator pair i inside the matrix (rows
  // row_r + 8 * half): row r's first, then row r+8's (half-major), or, when fp32 is
  // staged in rounds, in register order, alternating rows (next_round_at).
  template <bool kCheckCols, bool kToStage, class Pair>
  __device__ void write_block(Sink& sink, int row_r, const bool (&row_in)[2], int col0, int lane,
                              Pair&& pair) const {
    constexpr bool kRegisterOrder = kToStage && Staged::kRounds > 1;
    constexpr int kHalfLoops = kRegisterOrder ? 1 : 2, kStep = kRegisterOrder ? 2 : 4;
#pragma unroll
    for (int h = 0; h < kHalfLoops; ++h) {
#pragma unroll
      for (int i = kRegisterOrder ? 0 : 2 * h; i < kAccum; i += kStep) {
        next_round_at<kToStage>(i, sink);
        const int half = (i >> 1) & 1;
        const int col = col0 + accum_col(i, lane);
        if (row_in[half] && (!kCheckCols || col < n)) {
          const float2 v = pair(i, half);
          write<kToStage>(sink, row_r + 8 * half, col, v.x, v.y);
        }
      }
    }
  }

  // Each thread holds rows r and r+8 at 64 columns; the 4 threads of a quad share rows.
  // kCheckCols: the block reaches past n, so each column pair is checked.
  template <bool kCheckCols, bool kToStage>
  __device__ void by_rows(const float (&d)[kAccum], int row0, int col0, int warp, int lane,
                          Sink& sink) const {
    constexpr bool kRegisterOrder = kToStage && Staged::kRounds > 1;
    constexpr int kHalfLoops = kRegisterOrder ? 1 : 2, kStep = kRegisterOrder ? 2 : 4;
    const int row_r = row0 + warp * 16 + (lane >> 2);
    const bool row_in[2] = {row_r < m, row_r + 8 < m};
    if (pass == SoftmaxPass::normalize) {
      float2 fs[2];
      float mx_log2e[2];
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = row_r + 8 * half;
        fs[half] = !row_in[half]            ? make_float2(0.0f, 0.0f)
                   : final_stats != nullptr ? final_stats[row]
                                            : combine_row(row);
        mx_log2e[half] = fs[half].x * kLog2e;
      }
      write_block<kCheckCols, kToStage>(sink, row_r, row_in, col0, lane, [&](int i, int half) {
        return make_float2(exp_shifted(d[i], mx_log2e[half]) * fs[half].y,
                           exp_shifted(d[i + 1], mx_log2e[half]) * fs[half].y);
      });
      return;
    }
    if (pass == SoftmaxPass::store_scores) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const float mx = block_row_max<kCheckCols>(d, half, col0, lane, n);
        if ((lane & 3) == 0 && row_in[half]) {
          partial[static_cast<std::int64_t>(row_r + 8 * half) * tiles_n + col0 / kBlockN] =
              make_float2(mx, 0.0f);
        }
      }
      write_block<kCheckCols, kToStage>(sink, row_r, row_in, col0, lane,
                                        [&](int i, int) { return make_float2(d[i], d[i + 1]); });
      return;
    }
    // Four independent max and sum chains per row (block_row_max). A row with no column
    // inside n (only when kCheckCols) has mx = -inf: its sum stays 0.
    float mx[2], mx_log2e[2];
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      mx[half] = block_row_max<kCheckCols>(d, half, col0, lane, n);
      mx_log2e[half] = mx[half] == -INFINITY ? 0.0f : mx[half] * kLog2e;
    }
    float sum4[2][4] = {{0.0f, 0.0f, 0.0f, 0.0f}, {0.0f, 0.0f, 0.0f, 0.0f}};
#pragma unroll
    for (int h = 0; h < kHalfLoops; ++h) {
#pragma unroll
      for (int i = kRegisterOrder ? 0 : 2 * h; i < kAccum; i += kStep) {
        next_round_at<kToStage>(i, sink);
        const int half = (i >> 1) & 1, j = i >> 2;
        const int col = col0 + accum_col(i, lane);
        if (!kCheckCols || col < n) {
          const float x0 = exp_shifted(d[i], mx_log2e[half]),
                      x1 = exp_shifted(d[i + 1], mx_log2e[half]);
          sum4[half][j & 3] += x0 + x1;
          if (pass == SoftmaxPass::stats_store_exp && row_in[half])
            write<kToStage>(sink, row_r + 8 * half, col, x0, x1);
        }
      }
    }
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      float sum = (sum4[half][0] + sum4[half][1]) + (sum4[half][2] + sum4[half][3]);
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      if ((lane & 3) == 0 && row_in[half]) {
        partial[static_cast<std::int64_t>(row_r + 8 * half) * tiles_n + col0 / kBlockN] =
            make_float2(mx[half], sum);
      }
    }
  }

  // A row's final (max, 1/sum) from its tiles_n block statistics of the first sweep:
  // for narrow matrices (few column tiles) this costs a few L2 loads per thread and saves
  // the combine kernel's launch and pass.
  __device__ float2 combine_row(int row) const {
    const float2* p = partial + static_cast<std::int64_t>(row) * tiles_n;
    float mx = -INFINITY;
    for (int t = 0; t < tiles_n; ++t) mx = fmaxf(mx, p[t].x);
    float sum = 0.0f;
    for (int t = 0; t < tiles_n; ++t) sum += p[t].y * exp_shifted(p[t].x, mx * kLog2e);
    return make_float2(mx, 1.0f / sum);
  }
};

}  // namespace flopline::kernels::sm90
