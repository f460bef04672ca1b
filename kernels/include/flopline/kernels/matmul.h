// C = A x B on the GPU, row-major, any m, n, k. fp32 on CUDA cores (FFMA); tf32, bf16
// and fp16 on tensor cores with fp32 accumulation: wgmma + TMA on Hopper (sm_90), mma.sync
// elsewhere (sm_80 and newer). Each call is a flopline range carrying its FLOPs and bytes
// (cost.h), so a trace shows it as an operator with TFLOP/s and GB/s.
//
//   flopline::kernels::MatmulProblem p{.a = dA, .b = dB, .c = dC, .m = 4096, .n = 4096,
//                                      .k = 4096, .in = DType::bf16, .out = DType::bf16};
//   flopline::kernels::matmul(p);          // throws KernelError on bad arguments
#pragma once

#include <cuda_runtime_api.h>

#include "flopline/kernels/checks.h"

namespace flopline::kernels {

struct MatmulOptions {
  MatmulPath path = MatmulPath::automatic;
  cudaStream_t stream = nullptr;
  bool range = true;  // wrap the launch in a flopline range with its cost
};

// Checks the arguments (KernelError), then launches asynchronously on the stream.
// Launch failures throw CudaError.
void matmul(const MatmulProblem& p, const MatmulOptions& options = {});

// Compute capability of the current device as 10*major+minor (cached per device).
int current_arch();

}  // namespace flopline::kernels
