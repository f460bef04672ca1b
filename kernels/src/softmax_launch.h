// The launchers behind softmax(): each runs one scheme for a problem that check_softmax()
// accepted (m, n >= 1), asynchronously on the stream. No range and no checks here
// (softmax.cc does both).
#pragma once

#include <cuda_runtime_api.h>

#include "flopline/kernels/checks.h"

namespace flopline::kernels::detail {

void launch_softmax_rows(const SoftmaxProblem& p, cudaStream_t stream);  // softmax_rows.cu
void launch_softmax_cols(const SoftmaxProblem& p, cudaStream_t stream);  // softmax_cols.cu

}  // namespace flopline::kernels::detail
