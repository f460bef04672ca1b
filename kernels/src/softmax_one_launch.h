// The one-launch fused matmul+softmax for small problems (softmax_one_launch.cu): one
// cooperative launch, one resident CTA per 64x64 tile of the scores, sm_80 and newer.
#pragma once

#include <cuda_runtime_api.h>

#include "flopline/kernels/checks.h"

namespace flopline::kernels::detail {

// How many CTAs the device keeps resident at once for the problem's types (0: no
// cooperative launch or unsupported types). The scheme applies when its 64x64 tiles
// (shapes::one_launch_tiles) are no more.
long one_launch_capacity(const MatmulProblem& p);

// tf32 -> fp32, bf16 -> fp32 or bf16. `partial` holds shapes::one_launch_stats_bytes; it may lie
// in the output buffer itself (partial_in_out), which costs one more grid barrier.
void launch_matmul_softmax_one_launch(const MatmulProblem& p, bool rows, float2* partial,
                                      bool partial_in_out, cudaStream_t stream);

}  // namespace flopline::kernels::detail
