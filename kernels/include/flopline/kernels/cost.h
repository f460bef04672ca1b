// The FLOP and byte model of every built-in kernel (docs/KERNELS.md states each formula
// and why). Every launch carries its cost in a flopline range, so traces show TFLOP/s
// and GB/s; the samples and benchmarks use the same numbers.
#pragma once

#include <cstdint>
#include <string>

#include "flopline/kernels/types.h"

namespace flopline::kernels {

struct OpCost {
  std::string name;  // operator name as it appears in traces, e.g. "matmul bf16 4096x4096x4096"
  double flops = 0;  // floating-point operations the math needs (not what the kernel issues)
  double bytes = 0;  // minimum DRAM traffic: each input read once, each output written once
  std::string precision;  // dtype_name() of the math precision
};

// C[m,n] = A[m,k] x B[k,n]: 2mnk FLOPs (one multiply and one add per term);
// bytes = (mk + kn) * in + mn * out.
OpCost matmul_cost(std::int64_t m, std::int64_t n, std::int64_t k, DType in, DType out);

enum class SoftmaxDim { rows, cols };  // rows: softmax over dim -1 (each row); cols: dim 0
const char* softmax_dim_name(SoftmaxDim d);

// softmax(A x B) fused: 2mnk + 5mn FLOPs (per score: max, subtract, exp, sum, divide;
// exp counted as one operation); bytes = inputs once + output once (the score matrix
// never counted: a fused kernel does not need to store it).
OpCost matmul_softmax_cost(std::int64_t m, std::int64_t n, std::int64_t k, SoftmaxDim dim, DType in,
                           DType out);

// Standalone softmax over an m x n matrix: 5mn FLOPs, bytes = mn * (in + out).
OpCost softmax_cost(std::int64_t m, std::int64_t n, SoftmaxDim dim, DType in, DType out);

enum class ElementwiseOp { add, mul, axpy, relu, gelu, custom };
const char* elementwise_op_name(ElementwiseOp op);

// FLOPs per element: add 1, mul 1, axpy 2 (a*x + y), relu 1 (a compare), gelu 8 (the erf
// form 0.5x(1+erf(x/sqrt2)): erf counted as 5, plus 3); custom: as given by the caller.
// Bytes per element: inputs read + output written, in the storage type.
OpCost elementwise_cost(ElementwiseOp op, std::int64_t n, DType t,
                        double custom_flops_per_element = 0, int custom_inputs = 1);

}  // namespace flopline::kernels
