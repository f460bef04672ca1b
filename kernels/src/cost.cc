#include "flopline/kernels/cost.h"

#include <string>

namespace flopline::kernels {
namespace {

std::string shape_text(std::int64_t m, std::int64_t n, std::int64_t k) {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

double d(std::int64_t v) {
  return static_cast<double>(v);
}

// Per-score softmax work: max compare, subtract, exp, sum, divide.
constexpr double kSoftmaxFlopsPerElement = 5;

}  // namespace

const char* softmax_dim_name(SoftmaxDim dim) {
  return dim == SoftmaxDim::rows ? "rows" : "cols";
}

const char* elementwise_op_name(ElementwiseOp op) {
  switch (op) {
    case ElementwiseOp::add:
      return "add";
    case ElementwiseOp::mul:
      return "mul";
    case ElementwiseOp::axpy:
      return "axpy";
    case ElementwiseOp::relu:
      return "relu";
    case ElementwiseOp::gelu:
      return "gelu";
    case ElementwiseOp::custom:
      return "custom";
  }
  return "?";
}

OpCost matmul_cost(std::int64_t m, std::int64_t n, std::int64_t k, DType in, DType out) {
  OpCost c;
  c.name = std::string("matmul ") + dtype_name(in) + " " + shape_text(m, n, k);
  c.flops = 2.0 * d(m) * d(n) * d(k);
  c.bytes = (d(m) * d(k) + d(k) * d(n)) * d(dtype_bytes(in)) + d(m) * d(n) * d(dtype_bytes(out));
  c.precision = dtype_name(in);
  return c;
}

OpCost matmul_softmax_cost(std::int64_t m, std::int64_t n, std::int64_t k, SoftmaxDim dim, DType in,
                           DType out) {
  OpCost c = matmul_cost(m, n, k, in, out);
  c.name = std::string("matmul_softmax_") + softmax_dim_name(dim) + " " + dtype_name(in) + " " +
           shape_text(m, n, k);
  c.flops += kSoftmaxFlopsPerElement * d(m) * d(n);
  return c;
}

OpCost softmax_cost(std::int64_t m, std::int64_t n, SoftmaxDim dim, DType in, DType out) {
  OpCost c;
  c.name = std::string("softmax_") + softmax_dim_name(dim) + " " + dtype_name(in) + " " +
           std::to_string(m) + "x" + std::to_string(n);
  c.flops = kSoftmaxFlopsPerElement * d(m) * d(n);
  c.bytes = d(m) * d(n) * d(dtype_bytes(in) + dtype_bytes(out));
  c.precision = "fp32";  // the arithmetic is fp32 whatever the storage
  return c;
}

OpCost elementwise_cost(ElementwiseOp op, std::int64_t n, DType t, double custom_flops_per_element,
                        int custom_inputs) {
  double flops_per = 1;
  int inputs = 1;
  switch (op) {
    case ElementwiseOp::add:
    case ElementwiseOp::mul:
      flops_per = 1;
      inputs = 2;
      break;
    case ElementwiseOp::axpy:
      flops_per = 2;
      inputs = 2;
      break;
    case ElementwiseOp::relu:
      flops_per = 1;
      inputs = 1;
      break;
    case ElementwiseOp::gelu:
      flops_per = 8;
      inputs = 1;
      break;
    case ElementwiseOp::custom:
      flops_per = custom_flops_per_element;
      inputs = custom_inputs;
      break;
  }
  OpCost c;
  c.name = std::string(elementwise_op_name(op)) + " " + dtype_name(t) + " n=" + std::to_string(n);
  c.flops = flops_per * d(n);
  c.bytes = d(n) * d(dtype_bytes(t)) * (inputs + 1);
  c.precision = t == DType::bf16 || t == DType::f16 ? "fp32" : dtype_name(t);  // math in fp32
  return c;
}

}  // namespace flopline::kernels
