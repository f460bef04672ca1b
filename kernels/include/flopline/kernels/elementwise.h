// Elementwise kernels: out = op(x[, y]) over n elements of fp32, bf16 or fp16 (math in
// fp32, one rounding to the storage type). 16-byte vector accesses where the pointers
// allow it, any n and any element offset (elementwise_plan.h). Each call is a flopline
// range carrying its FLOPs and bytes (cost.h).
//
//   flopline::kernels::add(dx, dy, dout, n, DType::bf16);              // out = x + y
//   flopline::kernels::axpy(2.0f, dx, dy, dout, n, DType::f32, {.stream = s});
//
// out may be x or y itself (in place); partial overlaps are not supported. n == 0 does
// nothing (no range, no launch). Bad arguments throw KernelError before anything is
// launched; a failed launch throws CudaError. For your own __device__ functor, see
// elementwise_functor.cuh.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "flopline/kernels/checks.h"

namespace flopline::kernels {

struct ElementwiseOptions {
  cudaStream_t stream = nullptr;
  bool range = true;  // wrap the launch in a flopline range with its cost
};

void add(const void* x, const void* y, void* out, std::int64_t n, DType t,
         const ElementwiseOptions& options = {});
void mul(const void* x, const void* y, void* out, std::int64_t n, DType t,
         const ElementwiseOptions& options = {});
// out = a * x + y (one fused multiply-add in fp32).
void axpy(float a, const void* x, const void* y, void* out, std::int64_t n, DType t,
          const ElementwiseOptions& options = {});
// out = x < 0 ? 0 : x (NaN stays NaN, as in PyTorch).
void relu(const void* x, void* out, std::int64_t n, DType t,
          const ElementwiseOptions& options = {});
// out = x * 0.5 * (1 + erf(x / sqrt(2))): the exact form, PyTorch's default gelu.
void gelu(const void* x, void* out, std::int64_t n, DType t,
          const ElementwiseOptions& options = {});

namespace detail {

// Launches one elementwise kernel for a problem that passed check_elementwise; `functor`
// points at the op's functor object (type-erased so one non-template function owns the
// sequence below for the built-in ops and for user functors alike).
using ElementwiseLauncher = void (*)(const ElementwiseProblem& p, cudaStream_t stream,
                                     const void* functor);

// What a user functor adds to elementwise_cost: its name in traces, FLOPs per element,
// inputs (1 or 2).
struct CustomElementwiseCost {
  const char* name = "custom";
  double flops_per_element = 0;
  int inputs = 1;
};

// check_elementwise -> flopline range with elementwise_cost -> launch -> CudaError if the
// launch failed. custom: only for ElementwiseOp::custom.
void run_elementwise(const ElementwiseProblem& p, ElementwiseOp op,
                     const ElementwiseOptions& options, ElementwiseLauncher launch,
                     const void* functor, const CustomElementwiseCost* custom = nullptr);

}  // namespace detail
}  // namespace flopline::kernels
