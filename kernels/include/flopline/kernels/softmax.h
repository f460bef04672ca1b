// softmax(A x B) over rows (dim -1) or over columns (dim 0), fused with the matmul, and a
// standalone softmax (the unfused baseline). softmax_plan.h names the schemes and the
// launch sequences behind them; docs/KERNELS.md says which shapes take which.
// Inputs tf32 (fp32 storage), bf16 or fp16; output fp32 or the input's 16-bit type.
#pragma once

#include <cuda_runtime_api.h>

#include "flopline/kernels/checks.h"
#include "flopline/kernels/softmax_plan.h"

namespace flopline::kernels {

struct MatmulSoftmaxOptions {
  SoftmaxDim dim = SoftmaxDim::rows;
  MatmulPath path = MatmulPath::automatic;  // the matmul path of the sweeps and unfused schemes
  SoftmaxScheme scheme =
      SoftmaxScheme::automatic;  // a scheme the problem cannot take throws KernelError
  cudaStream_t stream = nullptr;
  bool range = true;
};

// Checks the arguments and the scheme (KernelError), then launches the plan
// asynchronously on the stream; its range's name ends in the plan's name.
void matmul_softmax(const MatmulProblem& p, const MatmulSoftmaxOptions& options = {});

// The plan matmul_softmax would run for this problem on the current device, launching
// nothing (KernelError where matmul_softmax would throw one).
MatmulSoftmaxPlan matmul_softmax_plan(const MatmulProblem& p,
                                      const MatmulSoftmaxOptions& options = {});

// out = softmax(x) over rows or columns of an m x n row-major matrix (fp32 math);
// SoftmaxProblem and its checks are in checks.h. Checks the arguments (KernelError),
// then launches asynchronously on the stream; launch failures throw CudaError. Rows: a
// row of up to 16384 elements is read once into registers (one pass over memory);
// longer rows are read twice. Columns: per-column running max and sum over row chunks,
// then a second read that writes the output (softmax_cols.cu).
void softmax(const SoftmaxProblem& p, SoftmaxDim dim, cudaStream_t stream = nullptr,
             bool range = true);

}  // namespace flopline::kernels
