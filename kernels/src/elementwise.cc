// run_elementwise(): the sequence every elementwise call goes through, built-in or user
// functor: checks, then the range, then the launch and its error check.
#include "flopline/kernels/elementwise.h"

#include <cstring>
#include <string>

#include "flopline/kernels/matmul.h"  // current_arch()
#include "matmul_launch.h"            // throw_if_launch_failed()
#include "op_range.h"

namespace flopline::kernels::detail {

void run_elementwise(const ElementwiseProblem& p, ElementwiseOp op,
                     const ElementwiseOptions& options, ElementwiseLauncher launch,
                     const void* functor, const CustomElementwiseCost* custom) {
  const int inputs = custom ? custom->inputs : 1;
  check_elementwise(p, op, current_arch(), inputs);
  if (p.n == 0) return;  // a valid no-op: no range, no launch
  OpCost cost = custom ? elementwise_cost(op, p.n, p.t, custom->flops_per_element, inputs)
                       : elementwise_cost(op, p.n, p.t);
  if (custom && custom->name)
    cost.name.replace(0, std::strlen(elementwise_op_name(op)), custom->name);
  OpRange range(cost, options.range);
  launch(p, options.stream, functor);
  throw_if_launch_failed(custom && custom->name ? custom->name : elementwise_op_name(op));
}

}  // namespace flopline::kernels::detail
