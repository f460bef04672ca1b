// softmax(): checks, the range with softmax_cost, then the rows or columns scheme.
#include "flopline/kernels/softmax.h"

#include "flopline/kernels/matmul.h"  // current_arch()
#include "matmul_launch.h"            // throw_if_launch_failed()
#include "op_range.h"
#include "softmax_launch.h"

namespace flopline::kernels {

void softmax(const SoftmaxProblem& p, SoftmaxDim dim, cudaStream_t stream, bool range) {
  check_softmax(p, current_arch());
  if (p.m == 0 || p.n == 0) return;  // an empty matrix: no range, no launch
  detail::OpRange op_range(softmax_cost(p.m, p.n, dim, p.in, p.out_type), range);
  if (dim == SoftmaxDim::rows) {
    detail::launch_softmax_rows(p, stream);
    detail::throw_if_launch_failed("softmax rows");
  } else {
    detail::launch_softmax_cols(p, stream);
    detail::throw_if_launch_failed("softmax cols");
  }
}

}  // namespace flopline::kernels
