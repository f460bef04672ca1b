// The small passes after the fused sm90 sweep: combining the per-block (max, sum) pairs
// into each row's or column's final (max, 1/sum), rescaling exp(s - block max) in place
// into the softmax, or (rows, fp32) turning the raw scores into the softmax.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "flopline/kernels/types.h"
#include "tile_shapes.h"

namespace flopline::kernels::detail {

// rows: partial [m][blocks] -> final [m]; cols: partial [blocks][n] -> final [n], and
// where col_scales is not null, each block's factor exp(block max - final max) / final
// sum into col_scales [blocks][n] (for rescale_softmax_cols).
void combine_softmax_stats(const float2* partial, float2* final_stats, float* col_scales,
                           std::int64_t m, std::int64_t n, bool rows, int blocks,
                           cudaStream_t stream);

// Columns: out[i][j] *= col_scales[i >> block_log2][j], the factors exp(block max -
// final max) / final sum that combine_softmax_stats wrote. out is fp32 or bf16.
void rescale_softmax_cols(void* out, DType out_type, const float* col_scales, std::int64_t m,
                          std::int64_t n, int block_log2, cudaStream_t stream);

// Where a sweep counts its stores per block of 2^rows_log2 rows (counts[i >> rows_log2]
// reaches `all` once row i's block is in memory), for a pass that runs beside it.
struct WrittenRows {
  const unsigned* counts = nullptr;
  int rows_log2 = 0;
  unsigned all = 0;
};

// Rows, the combine and the rescale in one launch: out[i][j] *= exp(block max - M) / S,
// with the block of column j (j >> block_log2) and the row's (M, S) merged from its
// `blocks` partials [m][blocks] by the row's own block of the launch. out is fp32 or
// bf16. With written.counts, the pass is launched to start while the sweep before it
// still runs (programmatic stream serialization; the sweep lets it start) and each row
// waits for its block's count.
void combine_rescale_rows(void* out, DType out_type, const float2* partial, std::int64_t m,
                          std::int64_t n, int blocks, int block_log2, cudaStream_t stream,
                          WrittenRows written = {});

// Rows of raw fp32 scores in out, with each block's row max in partial [m][blocks].x
// (SoftmaxPass::store_scores, or the swapped core's scores-only rows epilogue), into the
// softmax in place; n <= kAfterMaxMaxCols (a row stays in registers). written.counts:
// beside the sweep, as combine_rescale_rows.
constexpr std::int64_t kAfterMaxMaxCols = shapes::kRowPassMaxCols;
void softmax_rows_after_max(void* out, const float2* partial, std::int64_t m, std::int64_t n,
                            int blocks, cudaStream_t stream, WrittenRows written = {});

// Rows of a matmul with split k: `partial` holds k_splits slabs of slab_rows x n fp32
// partial scores (slab s: the sums over split s's k range), and one block per row adds
// the row's slabs and writes its softmax into out (fp32 or bf16); n <= kAfterMaxMaxCols.
void softmax_rows_of_split_sums(void* out, DType out_type, const float* partial, int k_splits,
                                std::int64_t slab_rows, std::int64_t m, std::int64_t n,
                                cudaStream_t stream);

}  // namespace flopline::kernels::detail
