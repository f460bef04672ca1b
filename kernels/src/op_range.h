// The flopline range around one kernel launch: the operator a trace shows, with the
// FLOPs, bytes and precision of cost.h, and where an operator has several launch
// sequences, the one that ran ("matmul_softmax_rows tf32 4096x4096x4096 plan=..."). Without
// the flopline API (a build without CUPTI) it does nothing.
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
