// Operators by name path: an operator's row is keyed by the names of the operators
// enclosing it on its thread and its own ("train_step / forward / aten::linear"), so
// the same name in two places of a model stays two rows. `flopline diff --by path`
// matches two runs' operators this way. Time is each instance's GPU busy time, as for
// `flopline stats --by op` (operator_time.h); only operators that own GPU work count.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "flopline/trace/analysis.h"

namespace flopline::trace {

inline constexpr std::string_view kPathSeparator = " / ";

class OperatorPathRows {
 public:
  void add(const Trace& t);
  // Rows by total time, longest first: count, total, average, FLOPs, TFLOP/s over the
  // instances with FLOPs, precision ("mixed" when several), share of the total.
  std::vector<StatsRow> finish() const;

 private:
  struct Sum {
    std::uint64_t count = 0;
    TimeNs total_ns = 0;
    double flops = 0;
    TimeNs flops_ns = 0;  // time of the instances with FLOPs
    bool any_flops = false;
    std::string precision;
    bool mixed = false;
  };
  std::map<std::string, Sum> sums_;
};

}  // namespace flopline::trace
