// Level of detail for one row. See lod.h for the invariant it relies on (ends sorted)
// and the cost bound.
#include "core/lod.h"

#include <algorithm>
#include <cmath>

namespace flopline::viewer {

using trace::Slice;

std::size_t first_ending_at_or_after(std::span<const Slice> row, std::int64_t t_ns) {
  const auto it =
      std::partition_point(row.begin(), row.end(), [&](const Slice& s) { return s.end() < t_ns; });
  return static_cast<std::size_t>(it - row.begin());
}

void visible_items(std::span<const Slice> row, const Viewport& vp, std::vector<DrawItem>& out,
                   const LodParams& params, LodWork* work) {
  LodWork local;
  LodWork& w = work != nullptr ? *work : local;
  if (row.empty()) return;
  const double px_per_ns = vp.px_per_ns();
  const double merge_px = std::max(static_cast<double>(params.merge_px), 0.0);
  const std::int64_t merge_ns = vp.px_to_ns_at_least_1(merge_px);
  const float min_item_px = std::max(params.min_item_px, 0.0f);
  auto to_x = [&](std::int64_t t) { return vp.clamped_x(t); };
  auto emit = [&](std::size_t first, std::size_t count, std::int64_t t_begin, std::int64_t t_end) {
    DrawItem item;
    item.x0 = to_x(t_begin);
    item.x1 = std::max(to_x(t_end), item.x0 + min_item_px);
    item.first = static_cast<std::uint32_t>(first);
    item.count = static_cast<std::uint32_t>(count);
    item.color_key = row[first].name;
    out.push_back(item);
  };
  auto narrow = [&](const Slice& s) { return static_cast<double>(s.dur) * px_per_ns < merge_px; };

  // The visible slices are [first ending at or after t0, first starting after t1).
  w.searches += 2;
  std::size_t i = first_ending_at_or_after(row, vp.t0_ns);
  const std::size_t n = static_cast<std::size_t>(
      std::partition_point(row.begin() + static_cast<std::ptrdiff_t>(i), row.end(),
                           [&](const Slice& s) { return s.start <= vp.t1_ns; }) -
      row.begin());
  while (i < n) {
    ++w.steps;
    const Slice& s = row[i];
    if (!narrow(s)) {
      emit(i, 1, s.start, s.end());
      ++i;
      continue;
    }
    // A run of narrow slices: jump ahead merge_px at a time. Slices that end within
    // merge_px of the block's end start at or after it (rows never overlap), so they
    // are narrow and close: all are taken with one binary search.
    std::size_t j = i + 1;
    std::int64_t block_end = s.end();
    while (j < n) {
      ++w.steps;
      const std::int64_t target =
          block_end > INT64_MAX - merge_ns ? INT64_MAX : block_end + merge_ns;
      ++w.searches;
      const auto k = static_cast<std::size_t>(
          std::partition_point(row.begin() + static_cast<std::ptrdiff_t>(j),
                               row.begin() + static_cast<std::ptrdiff_t>(n),
                               [&](const Slice& x) { return x.end() < target; }) -
          row.begin());
      if (k > j) {
        block_end = std::max(block_end, row[k - 1].end());
        j = k;
      }
      if (j >= n) break;
      const Slice& next = row[j];
      // The next slice ends at or after target: taken only when it is narrow too and
      // the gap before it is under merge_px; its end is then >= target, so every
      // round moves the block end by merge_px or stops.
      if (!narrow(next) || next.start - block_end >= merge_ns) break;
      block_end = std::max(block_end, next.end());
      ++j;
    }
    emit(i, j - i, s.start, block_end);
    i = j;
  }
}

std::string merged_block_label(std::uint32_t count) {
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) on "literal" + string.
  std::string label(1, 'x');
  label += std::to_string(count);
  return label;
}

}  // namespace flopline::viewer
