// The launchers behind matmul(): each runs one implementation for a problem that
// check_matmul_path() accepted, asynchronously on the stream, and throws CudaError when
// the launch fails. No range and no checks here (matmul.cu does both).
#pragma once

#include <cuda_runtime_api.h>

#include "flopline/kernels/checks.h"

namespace flopline::kernels::detail {

void launch_matmul_simt(const MatmulProblem& p, cudaStream_t stream);  // matmul_simt.cu
void launch_matmul_sm80(const MatmulProblem& p, cudaStream_t stream);  // matmul_sm80.cu
void launch_matmul_sm90(const MatmulProblem& p, cudaStream_t stream);  // matmul_sm90.cu

// Throws CudaError naming `what` when the last launch failed.
void throw_if_launch_failed(const char* what);

}  // namespace flopline::kernels::detail
