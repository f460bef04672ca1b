// Level of detail for a counter series. See counter_lod.h for the step rule and the
// cost bound.
#include "core/counter_lod.h"

#include <algorithm>
#include <cmath>

namespace flopline::viewer {

using trace::CounterPoint;

namespace {

std::int64_t series_end(std::span<const CounterPoint> points, std::int64_t end_ns) {
  return std::max(end_ns, points.back().ts);
}

// The last point in [from, to) with ts <= t; `from` itself when none after it is.
std::size_t last_at_or_before(std::span<const CounterPoint> points, std::size_t from,
                              std::size_t to, std::int64_t t) {
  const auto it = std::partition_point(points.begin() + static_cast<std::ptrdiff_t>(from),
                                       points.begin() + static_cast<std::ptrdiff_t>(to),
                                       [&](const CounterPoint& p) { return p.ts <= t; });
  const auto k = static_cast<std::size_t>(it - points.begin());
  return k > from ? k - 1 : from;
}

}  // namespace

std::pair<std::size_t, std::size_t> visible_points(std::span<const CounterPoint> points,
                                                   std::int64_t t0, std::int64_t t1,
                                                   std::int64_t end_ns) {
  if (points.empty() || t1 < t0 || series_end(points, end_ns) < t0) return {0, 0};
  const std::size_t first = last_at_or_before(points, 0, points.size(), t0);
  const auto last = static_cast<std::size_t>(
      std::partition_point(points.begin(), points.end(),
                           [&](const CounterPoint& p) { return p.ts <= t1; }) -
      points.begin());
  return {first, std::max(first, last)};
}

ValueRange visible_values(std::span<const CounterPoint> points, const CounterIndex& index,
                          std::int64_t t0, std::int64_t t1, std::int64_t end_ns) {
  const auto [first, last] = visible_points(points, t0, t1, end_ns);
  return index.range(first, last);
}

std::size_t point_at(std::span<const CounterPoint> points, std::int64_t t, std::int64_t end_ns) {
  if (points.empty() || t < points.front().ts || t > series_end(points, end_ns))
    return points.size();
  return last_at_or_before(points, 0, points.size(), t);
}

void visible_counter_items(std::span<const CounterPoint> points, const CounterIndex& index,
                           std::int64_t end_ns, const Viewport& vp, std::vector<CounterItem>& out,
                           const CounterLodParams& params, CounterLodWork* work) {
  CounterLodWork local;
  CounterLodWork& w = work != nullptr ? *work : local;
  if (points.empty()) return;
  ++w.searches;
  auto [i, stop] = visible_points(points, vp.t0_ns, vp.t1_ns, end_ns);
  if (i >= stop) return;
  const std::int64_t last_end = series_end(points, end_ns);
  const std::int64_t t_stop = std::min(vp.t1_ns, last_end);
  const std::int64_t column_ns = vp.px_to_ns_at_least_1(params.column_px);
  const float min_item_px = std::max(params.min_item_px, 0.0f);
  auto to_x = [&](std::int64_t t) { return vp.clamped_x(t); };
  auto step_end = [&](std::size_t k) {
    return k + 1 < points.size() ? points[k + 1].ts : last_end;
  };
  auto emit = [&](std::int64_t t_begin, std::int64_t t_end, std::size_t first, std::size_t count,
                  const ValueRange& values) {
    CounterItem item;
    item.x0 = to_x(t_begin);
    item.x1 = std::max(to_x(t_end), item.x0 + min_item_px);
    item.values = values;
    item.last = points[first + count - 1].value;
    item.first = static_cast<std::uint32_t>(first);
    item.count = static_cast<std::uint32_t>(count);
    out.push_back(item);
  };

  std::int64_t t = std::max(vp.t0_ns, points[i].ts);
  // Every round takes at least one point; a zero-length last step still gets an item
  // (min_item_px wide).
  while (i < stop) {
    ++w.steps;
    ++w.searches;
    i = last_at_or_before(points, i, stop, t);  // the point in effect at t
    const std::int64_t end_i = step_end(i);
    if (end_i - t >= column_ns || i + 1 >= stop) {
      ValueRange v;
      v.take(points[i].value);
      emit(t, std::min(end_i, t_stop), i, 1, v);
      t = std::max(t, end_i);
      ++i;
    } else {
      // Several steps start in [t, t + column_ns): points [i, j) are in effect there.
      const std::int64_t column_end = t > INT64_MAX - column_ns ? INT64_MAX : t + column_ns;
      w.searches += 2;
      const auto j = static_cast<std::size_t>(
          std::partition_point(points.begin() + static_cast<std::ptrdiff_t>(i + 1),
                               points.begin() + static_cast<std::ptrdiff_t>(stop),
                               [&](const CounterPoint& p) { return p.ts < column_end; }) -
          points.begin());
      emit(t, std::min(column_end, t_stop), i, j - i, index.range(i, j));
      if (j >= stop && column_end >= t_stop) break;  // the column reached the view's end
      t = column_end;
      i = j - 1;
    }
  }
}

std::size_t counter_item_at(std::span<const CounterItem> items, float x) {
  const auto it = std::partition_point(items.begin(), items.end(),
                                       [&](const CounterItem& c) { return c.x1 <= x; });
  if (it != items.end())
    return it->x0 <= x ? static_cast<std::size_t>(it - items.begin()) : items.size();
  if (!items.empty() && items.back().x1 == x) return items.size() - 1;
  return items.size();
}

}  // namespace flopline::viewer
