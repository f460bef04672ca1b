#include "op_range.h"

#ifdef FLOPLINE_KERNELS_HAVE_RANGES
#include "flopline/session.h"
#endif

namespace flopline::kernels::detail {

#ifdef FLOPLINE_KERNELS_HAVE_RANGES
struct OpRange::Impl {
  Impl(const OpCost& c, const char* plan)
      : range(plan != nullptr ? c.name + " plan=" + plan : c.name, c.flops, c.bytes, c.precision) {}
  Range range;
};
OpRange::OpRange(const OpCost& cost, bool enabled, const char* plan) {
  if (enabled) impl_ = std::make_unique<Impl>(cost, plan);
}
#else
struct OpRange::Impl {};
OpRange::OpRange(const OpCost&, bool, const char*) {}
#endif

OpRange::~OpRange() = default;

}  // namespace flopline::kernels::detail
