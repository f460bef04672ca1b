// The min/max pyramid of a counter series. See counter_index.h.
#include "core/counter_index.h"

#include <algorithm>
#include <cmath>

namespace flopline::viewer {

void ValueRange::take(double v) {
  if (!std::isfinite(v)) return;  // nan or inf (readers keep them) would poison the scale
  if (empty) {
    min = max = v;
    empty = false;
    return;
  }
  min = std::min(min, v);
  max = std::max(max, v);
}

void ValueRange::take(const ValueRange& r) {
  if (r.empty) return;
  take(r.min);
  take(r.max);
}

CounterIndex::CounterIndex(std::span<const trace::CounterPoint> points) : points_(points) {
  const std::size_t blocks = points.size() / kBlock;  // whole blocks only; the tail is scanned
  if (blocks == 0) return;
  std::vector<ValueRange> level(blocks);
  for (std::size_t b = 0; b < blocks; ++b) level[b] = scan(b * kBlock, (b + 1) * kBlock);
  levels_.push_back(std::move(level));
  while (levels_.back().size() > 1) {
    const std::vector<ValueRange>& below = levels_.back();
    std::vector<ValueRange> up((below.size() + 1) / 2);
    for (std::size_t i = 0; i < up.size(); ++i) {
      up[i] = below[2 * i];
      if (2 * i + 1 < below.size()) up[i].take(below[2 * i + 1]);
    }
    levels_.push_back(std::move(up));
  }
}

ValueRange CounterIndex::scan(std::size_t first, std::size_t last) const {
  ValueRange r;
  for (std::size_t i = first; i < last; ++i) r.take(points_[i].value);
  return r;
}

ValueRange CounterIndex::range(std::size_t first, std::size_t last) const {
  last = std::min(last, points_.size());
  if (first >= last) return {};
  // Whole blocks [lo, hi) lie between the two ends; without any, scan it all.
  std::size_t lo = (first + kBlock - 1) / kBlock;
  std::size_t hi = last / kBlock;
  if (levels_.empty() || lo >= hi) return scan(first, last);
  ValueRange r = scan(first, lo * kBlock);
  r.take(scan(hi * kBlock, last));
  // Bottom-up over the levels: an odd lo or hi takes its entry alone, then both move up
  // a level, where entry i stands for entries 2i and 2i+1 below.
  for (std::size_t k = 0; lo < hi && k < levels_.size(); ++k) {
    const std::vector<ValueRange>& level = levels_[k];
    if (lo & 1) r.take(level[lo++]);
    if (hi & 1) r.take(level[--hi]);
    lo >>= 1;
    hi >>= 1;
  }
  return r;
}

std::size_t CounterIndex::resident_bytes() const {
  std::size_t n = 0;
  for (const auto& level : levels_) n += level.capacity() * sizeof(ValueRange);
  return n;
}

}  // namespace flopline::viewer
