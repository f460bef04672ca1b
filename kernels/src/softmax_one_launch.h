// The one-launch fused matmul+softmax for small problems (softmax_one_launch.cu): one
// cooperative launch, one resident CTA per 64x64 tile of the scores, sm_80 and newer.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "flopline/kernels/checks.h"

namespace flopline::kernels::detail {

// CTAs (64x64 tiles) the problem needs, and how many the device keeps resident at once
// for its types (0: no cooperative launch or unsupported types). The scheme applies when
// tiles <= capacity.
long one_launch_tiles(const MatmulProblem& p);
long one_launch_capacity(const MatmulProblem& p);

// Bytes of the per-tile statistics: rows [m][ceil(n/64)], cols [ceil(m/64)][n] float2.
std::size_t one_launch_partial_bytes(const MatmulProblem& p, bool rows);

// tf32 -> fp32, bf16 -> fp32 or bf16. `partial` holds one_launch_partial_bytes; it may lie
// in the output buffer itself (partial_in_out), which costs one more grid barrier.
void launch_matmul_softmax_one_launch(const MatmulProblem& p, bool rows, float2* partial, bool partial_in_out,
                                      cudaStream_t stream);

}  // namespace flopline::kernels::detail
