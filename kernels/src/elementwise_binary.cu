// add, mul, axpy: two inputs, one output.
#include "elementwise_ops.cuh"

namespace flopline::kernels {

void add(const void* x, const void* y, void* out, std::int64_t n, DType t,
         const ElementwiseOptions& options) {
  const detail::AddOp op{};
  detail::run_elementwise(detail::elementwise_problem(x, y, out, n, t), ElementwiseOp::add, options,
                          detail::builtin_launcher<2, detail::AddOp>(t), &op);
}

void mul(const void* x, const void* y, void* out, std::int64_t n, DType t,
         const ElementwiseOptions& options) {
  const detail::MulOp op{};
  detail::run_elementwise(detail::elementwise_problem(x, y, out, n, t), ElementwiseOp::mul, options,
                          detail::builtin_launcher<2, detail::MulOp>(t), &op);
}

void axpy(float a, const void* x, const void* y, void* out, std::int64_t n, DType t,
          const ElementwiseOptions& options) {
  const detail::AxpyOp op{a};
  detail::run_elementwise(detail::elementwise_problem(x, y, out, n, t), ElementwiseOp::axpy,
                          options, detail::builtin_launcher<2, detail::AxpyOp>(t), &op);
}

}  // namespace flopline::kernels
