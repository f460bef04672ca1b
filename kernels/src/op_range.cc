#include "op_range.h"

#ifdef FLOPLINE_KERNELS_HAVE_RANGES
#include "flopline/session.h"
#endif

namespace flopline::kernels::detail {

#ifdef FLOPLINE_KERNELS_HAVE_RANGES
struct OpRange::Impl {
  explicit Impl(const OpCost& c) : range(c.name, c.flops, c.bytes, c.precision) {}
  Range range;
};
OpRange::OpRange(const OpCost& cost, bool enabled) {
  if (enabled) impl_ = std::make_unique<Impl>(cost);
}
#else
struct OpRange::Impl {};
OpRange::OpRange(const OpCost&, bool) {}
#endif

OpRange::~OpRange() = default;

}  // namespace flopline::kernels::detail
