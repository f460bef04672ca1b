#include "op_range.h"

#ifdef FLOPLINE_KERNELS_HAVE_RANGES
#include "flopline/session.h"
#endif

namespace flopline::kernels::detail {

#ifdef FLOPLINE_KERNELS_HAVE_RANGES
struct OpRange::Impl {
  Impl(const OpCost& c, const char* plan)
      : range(c.name, c.flops, c.bytes, c.precision, plan != nullptr ? plan : "") {}
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
