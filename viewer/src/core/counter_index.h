// Range minimum and maximum over one counter series' values in O(log n), so the
// per-pixel-column pass of counter_lod.h costs O(width * log n) whatever the number of
// points in the view.
//
// A pyramid of (min, max) pairs: level 0 holds one pair per block of kBlock points,
// level k+1 one per two entries of level k. It takes about 2 bytes per point (16-byte
// pairs for n / kBlock blocks, then half as many per level), against 16 bytes for the
// points themselves. A query reads the at most 2 * (kBlock - 1) points at its two ends
// one by one and the blocks between them bottom-up, two entries per level at most.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "flopline/trace/model.h"

namespace flopline::viewer {

// Min and max of finite values; values that are nan or inf are left out.
struct ValueRange {
  double min = 0;
  double max = 0;
  bool empty = true;  // no point in the range: min and max mean nothing
  void take(double v);
  void take(const ValueRange& r);
};

class CounterIndex {
 public:
  static constexpr std::size_t kBlock = 16;

  CounterIndex() = default;
  // `points` must outlive the index and stay unchanged (a finalized trace's series).
  explicit CounterIndex(std::span<const trace::CounterPoint> points);

  std::size_t size() const { return points_.size(); }
  // Min and max of the values of points [first, last); empty when first >= last.
  // Indices past the end are clamped.
  ValueRange range(std::size_t first, std::size_t last) const;
  // Bytes held besides the points.
  std::size_t resident_bytes() const;

 private:
  ValueRange scan(std::size_t first, std::size_t last) const;
  std::span<const trace::CounterPoint> points_;
  std::vector<std::vector<ValueRange>> levels_;  // levels_[0]: per block of kBlock points
};

}  // namespace flopline::viewer
