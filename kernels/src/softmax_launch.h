// The launchers behind softmax(): each runs one scheme for a problem that check_softmax()
// accepted (m, n >= 1), asynchronously on the stream. No range and no checks here
// (softmax.cc does both).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "flopline/kernels/checks.h"

namespace flopline::kernels::detail {

void launch_softmax_rows(const SoftmaxProblem& p, cudaStream_t stream);  // softmax_rows.cu
void launch_softmax_cols(const SoftmaxProblem& p, cudaStream_t stream);  // softmax_cols.cu

// The column softmax of a split-k matmul's scores (softmax_cols.cu): `partial` holds
// k_splits slabs of slab_rows x n fp32 partial sums, added as they are read; out is
// m x n, fp32 or bf16. For the fused split_k scheme (matmul_softmax.cu).
void softmax_cols_of_split_sums(void* out, DType out_type, const float* partial, int k_splits,
                                std::int64_t slab_rows, std::int64_t m, std::int64_t n,
                                cudaStream_t stream);

}  // namespace flopline::kernels::detail
