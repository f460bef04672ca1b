// The small passes after the fused sm90 sweep: combining the per-block (max, sum) pairs
// into each row's or column's final (max, 1/sum), and rescaling exp(s - block max) in
// place into the softmax.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "flopline/kernels/types.h"

namespace flopline::kernels::detail {

// rows: partial [m][blocks] -> final [m]; cols: partial [blocks][n] -> final [n], and
// where col_scales is not null, each block's factor exp(block max - final max) / final
// sum into col_scales [blocks][n] (for rescale_softmax).
void combine_softmax_stats(const float2* partial, float2* final_stats, float* col_scales, std::int64_t m,
                           std::int64_t n, bool rows, int blocks, cudaStream_t stream);

// out[i][j] *= exp(block max - final max) / final sum, with the block of (i, j): rows:
// column block j >> block_log2 (from partial and final_stats); cols: row block
// i >> block_log2 (the factors col_scales that combine_softmax_stats wrote). out is fp32
// or bf16.
void rescale_softmax(void* out, DType out_type, const float2* partial, const float2* final_stats,
                     const float* col_scales, std::int64_t m, std::int64_t n, bool rows, int blocks, int block_log2,
                     cudaStream_t stream);

}  // namespace flopline::kernels::detail
