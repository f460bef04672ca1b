// relu, gelu: one input, one output.
#include "elementwise_ops.cuh"

namespace flopline::kernels {

void relu(const void* x, void* out, std::int64_t n, DType t, const ElementwiseOptions& options) {
  const detail::ReluOp op{};
  detail::run_elementwise(detail::elementwise_problem(x, nullptr, out, n, t), ElementwiseOp::relu,
                          options, detail::builtin_launcher<1, detail::ReluOp>(t), &op);
}

void gelu(const void* x, void* out, std::int64_t n, DType t, const ElementwiseOptions& options) {
  const detail::GeluOp op{};
  detail::run_elementwise(detail::elementwise_problem(x, nullptr, out, n, t), ElementwiseOp::gelu,
                          options, detail::builtin_launcher<1, detail::GeluOp>(t), &op);
}

}  // namespace flopline::kernels
