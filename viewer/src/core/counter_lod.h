// Level of detail for one counter series: what to draw for the visible range, with cost
// that follows pixels, not points (the counterpart of lod.h for slices).
//
// A series is a step function: point k's value holds from its ts to the next point's ts,
// and the last point's until `end_ns` (the end of the traces, as Perfetto draws it). A
// step at least a column wide (column_px, 1 px by default) becomes one item with its
// value; where steps are narrower, one item per pixel column carries the min and max of
// every value in effect in that column (CounterIndex, O(log n)) and the value at its
// end. So a view costs O(width / column_px * log n) and yields at most about
// 2 * width / column_px + 2 items, whether it shows ten points or ten million.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "core/counter_index.h"
#include "core/viewport.h"

namespace flopline::viewer {

struct CounterLodParams {
  float column_px = 1.0f;    // steps narrower than this are summarised per column
  float min_item_px = 1.0f;  // every item is drawn at least this wide
};

struct CounterItem {
  float x0 = 0;  // window px, clipped to the viewport area (2 px margin)
  float x1 = 0;  // >= x0 + min_item_px
  // The values in effect somewhere in [x0, x1): one value for a step, min and max of
  // several for a column. Empty when they are all nan or inf.
  ValueRange values;
  double last = 0;          // the value in effect at the item's end
  std::uint32_t first = 0;  // index of the first point
  std::uint32_t count = 1;  // points: 1 = one step, > 1 = a column of several
  bool column() const { return count > 1; }
};

struct CounterLodWork {
  std::size_t searches = 0;  // binary searches and index queries
  std::size_t steps = 0;     // loop iterations (one per item)
};

// Indices [first, last) of the points whose steps meet [t0, t1]: from the point in
// effect at t0 (the last with ts <= t0, or the first point when all start later) to
// the last starting at or before t1 (as lod.h takes slices, so a sample at the very end
// of a fitted view shows). Empty when the series ends before t0.
std::pair<std::size_t, std::size_t> visible_points(std::span<const trace::CounterPoint> points,
                                                   std::int64_t t0, std::int64_t t1,
                                                   std::int64_t end_ns);

// Min and max of the values in effect somewhere in [t0, t1]: what the graph's scale and
// its "max" label show. O(log n) through the series' index.
ValueRange visible_values(std::span<const trace::CounterPoint> points, const CounterIndex& index,
                          std::int64_t t0, std::int64_t t1, std::int64_t end_ns);

// The index of the point in effect at t (the last with ts <= t), or points.size() when
// t lies before the first point or after the series' end.
std::size_t point_at(std::span<const trace::CounterPoint> points, std::int64_t t,
                     std::int64_t end_ns);

// Appends to `out` the items of the series visible in `vp`, in increasing x0, adjacent
// (each starts where the one before ended). `index` is the series' CounterIndex.
void visible_counter_items(std::span<const trace::CounterPoint> points, const CounterIndex& index,
                           std::int64_t end_ns, const Viewport& vp, std::vector<CounterItem>& out,
                           const CounterLodParams& params = {}, CounterLodWork* work = nullptr);

// The item under x (x0 <= x < x1; the last item also at its x1), or items.size().
std::size_t counter_item_at(std::span<const CounterItem> items, float x);

}  // namespace flopline::viewer
