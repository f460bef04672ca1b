// Argument checks of the host API, in plain C++ so they are tested without a GPU. Each
// throws KernelError with a message that names the argument and the reason; nothing is
// launched when one fails.
#pragma once

#include <cstdint>

#include "flopline/kernels/cost.h"
#include "flopline/kernels/types.h"

namespace flopline::kernels {

struct MatmulProblem {
  const void* a = nullptr;  // m x k, row-major
  const void* b = nullptr;  // k x n, row-major
  void* c = nullptr;        // m x n, row-major
  std::int64_t m = 0, n = 0, k = 0;
  DType in = DType::f32;   // type of A and B (tf32: fp32 storage)
  DType out = DType::f32;  // type of C
};

// arch: compute capability as 10*major+minor (80, 90, ...). Checks sizes (>= 1, and
// elements addressable with 32-bit row/column indices), pointers, dtype pairs
// (f32->f32, tf32->f32, bf16->bf16|f32, f16->f16|f32) and arch (>= 80).
void check_matmul(const MatmulProblem& p, int arch);

// Also that the path can run the problem on arch (sm90: arch 90 and 16-byte row strides
// and aligned base pointers; simt: f32 only; sm80: tensor-core dtypes).
void check_matmul_path(const MatmulProblem& p, MatmulPath path, int arch);

// The path automatic picks for this problem and arch.
MatmulPath choose_matmul_path(const MatmulProblem& p, int arch);

struct ElementwiseProblem {
  const void* x = nullptr;
  const void* y = nullptr;  // second input (add, mul, axpy); must be null for unary ops
  void* out = nullptr;
  std::int64_t n = 0;
  DType t = DType::f32;
};

// n >= 0 (n == 0 is a no-op: nothing else is checked), dtype fp32/bf16/fp16, arch >= 80,
// x and out (and y for two-input ops) non-null, y null for one-input ops, and every
// pointer aligned to its element size. custom_inputs: 1 or 2, the inputs of a custom op.
void check_elementwise(const ElementwiseProblem& p, ElementwiseOp op, int arch,
                       int custom_inputs = 1);

// out = softmax(x) over the rows or the columns of an m x n row-major matrix.
struct SoftmaxProblem {
  const void* x = nullptr;
  void* out = nullptr;  // may be x itself (in place) when out_type == in
  std::int64_t m = 0, n = 0;
  DType in = DType::f32;
  DType out_type = DType::f32;
};

// m, n >= 0 and <= 2^31-1 (an empty matrix is a no-op: nothing else is checked), arch
// >= 80, input fp32/bf16/fp16, output fp32, the input type, or bf16/fp16 from fp32
// (matmul_softmax's unfused fallback writes fp32 scores to a 16-bit output), non-null
// pointers aligned to their element size.
void check_softmax(const SoftmaxProblem& p, int arch);

}  // namespace flopline::kernels
