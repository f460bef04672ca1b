// B (k x n, fp32) -> B^T (n x k) rounded to tf32, for the sm90 tf32 matmul: wgmma has no
// transpose for tf32, so both operands must be K-major in shared memory.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace flopline::kernels::detail {

// Launches on `stream`; out must hold n*k floats.
void transpose_to_tf32(const float* in, float* out, std::int64_t rows, std::int64_t cols,
                       cudaStream_t stream);

}  // namespace flopline::kernels::detail
