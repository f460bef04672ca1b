// The flopline range around one kernel launch: the operator a trace shows, with the
// FLOPs, bytes and precision of cost.h, and where an operator has several launch
// sequences, the one that ran (the range's "plan" arg, through the message suffix
// "[... plan=swapped_rows_scores_beside_pass]"). Without the flopline API (a build without
// CUPTI) it does nothing.
#pragma once

#include <memory>

#include "flopline/kernels/cost.h"

namespace flopline::kernels::detail {

class OpRange {
 public:
  OpRange(const OpCost& cost, bool enabled, const char* plan = nullptr);
  ~OpRange();
  OpRange(const OpRange&) = delete;
  OpRange& operator=(const OpRange&) = delete;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace flopline::kernels::detail
