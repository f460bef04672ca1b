#include "core/selection.h"

#include <algorithm>
#include <cmath>

namespace flopline::viewer {

void Selection::select(const SliceHandle& s, const FlowIndex& flows_index) {
  slice = s;
  flows = s.valid() ? flows_index.links_of(s) : std::vector<FlowLink>{};
  flow_cursor = 0;
}

void Selection::clear_slice() {
  slice = SliceHandle{};
  flows.clear();
  flow_cursor = 0;
}

void Selection::clear_all() {
  clear_slice();
  range.reset();
  highlighted_name.reset();
}

std::optional<SliceHandle> Selection::next_flow_target() {
  if (!slice.valid() || flows.empty()) return std::nullopt;
  const FlowLink& f = flows[flow_cursor % flows.size()];
  flow_cursor = (flow_cursor + 1) % flows.size();
  return f.from == slice ? f.to : f.from;
}

TimeRange range_from_drag(double t_a_ns, double t_b_ns) {
  const double lo = std::min(t_a_ns, t_b_ns);
  const double hi = std::max(t_a_ns, t_b_ns);
  return TimeRange{static_cast<std::int64_t>(std::floor(lo)),
                   static_cast<std::int64_t>(std::ceil(hi))};
}

}  // namespace flopline::viewer
