// Hit testing through the same LOD pass the drawing uses.
#include "core/hit_test.h"

#include <algorithm>
#include <vector>

namespace flopline::viewer {

std::optional<Hit> hit_test(TraceList traces, const TimelineLayout& layout, const Viewport& vp,
                            float x, float y, const LodParams& params) {
  if (x < vp.x0_px || x > vp.x0_px + vp.width_px) return std::nullopt;
  const std::uint32_t r = layout.row_at_y(y);
  if (r == trace::kNone) return std::nullopt;
  const LayoutRow& lr = layout.rows()[r];
  if (lr.trace >= traces.size()) return std::nullopt;
  const trace::Track& track = traces[lr.trace]->tracks[lr.track];
  const std::vector<trace::Slice>& row = track.rows[lr.row];
  std::vector<DrawItem> items;
  visible_items(row, vp, items, params);
  // Items are in increasing x0; a widened item may reach a little into the next one,
  // and the later one is drawn on top: take the last item starting at or before x
  // that still covers it (widening is under a pixel, so a few steps back suffice).
  auto after = std::partition_point(items.begin(), items.end(),
                                    [&](const DrawItem& d) { return d.x0 <= x; });
  const DrawItem* found = nullptr;
  for (int back = 0; back < 3 && after != items.begin(); ++back) {
    --after;
    if (x <= after->x1) {
      found = &*after;
      break;
    }
  }
  if (found == nullptr) return std::nullopt;
  const auto* it = found;
  Hit hit;
  hit.layout_row = r;
  hit.item = *it;
  std::uint32_t index = it->first;
  if (it->count > 1) {
    // The slice of the block nearest to x: the last starting at or before the time
    // under x, or the first after it when that is closer.
    const std::int64_t t = vp.x_to_time(x);
    const auto b = row.begin() + it->first;
    const auto e = b + it->count;
    auto u = std::partition_point(b, e, [&](const trace::Slice& s) { return s.start <= t; });
    if (u == b) {
      index = it->first;
    } else {
      auto before = std::prev(u);
      index = static_cast<std::uint32_t>(before - row.begin());
      if (before->end() < t && u != e && u->start - t < t - before->end()) {
        index = static_cast<std::uint32_t>(u - row.begin());
      }
    }
  }
  hit.slice.trace = lr.trace;
  hit.slice.ref = trace::SliceRef{lr.track, lr.row, index};
  return hit;
}

}  // namespace flopline::viewer
