// The visible time window of the timeline and the maths between time and pixels.
//
// Times are absolute int64 nanoseconds (the model's clock); pixels are floats in the
// window's coordinates (x0_px is where the timeline area starts). All conversions go
// through double, which holds ns exactly up to 2^53 (104 days).
#pragma once

#include <climits>
#include <cstdint>
#include <string>
#include <vector>

namespace flopline::viewer {

struct Viewport {
  // Visible time range [t0_ns, t1_ns), absolute ns; always t1_ns - t0_ns >= kMinSpanNs.
  std::int64_t t0_ns = 0;
  std::int64_t t1_ns = 1000;
  float x0_px = 0;       // left edge of the timeline area, px
  float width_px = 100;  // width of the timeline area, px (> 0)
  // The trace extent the clamps refer to (set by fit() / set_extent()).
  std::int64_t extent_begin_ns = 0;
  std::int64_t extent_end_ns = 1000;

  // Never zoom in below this span, nor out beyond kMaxExtentFactor x the extent.
  static constexpr std::int64_t kMinSpanNs = 1;
  static constexpr double kMaxExtentFactor = 10.0;
  // What the view can hold at all: times within +-kTimeLimitNs (146 years around the
  // clock's zero) and spans up to kMaxSpanNs (126 years), so that no difference of two
  // view times overflows int64. Traces beyond are shown in part (fit() says so).
  static constexpr std::int64_t kTimeLimitNs = INT64_MAX / 2;
  static constexpr std::int64_t kMaxSpanNs = 4000000000000000000;
  // fit() leaves this share of the span empty on each side.
  static constexpr double kFitMargin = 0.02;

  std::int64_t span_ns() const { return t1_ns - t0_ns; }
  double ns_per_px() const;
  double px_per_ns() const;
  // Time -> x in window px (may lie outside the area), and back (rounded to nearest ns).
  double time_to_x(std::int64_t t_ns) const;
  std::int64_t x_to_time(double x_px) const;
  // A duration in ns as a width in px.
  double ns_to_px(double dur_ns) const { return dur_ns * px_per_ns(); }
  // A width in px as whole ns, rounded up and at least 1, so a distance of a few pixels
  // never rounds to 0 ns when zoomed far in (LOD merging and columns).
  std::int64_t px_to_ns_at_least_1(double px) const;
  // time_to_x clamped to the drawing area with a 2 px margin: where LOD items are cut.
  float clamped_x(std::int64_t t_ns) const;

  // Records the trace extent used by the clamps (no change of the view). False when it
  // had to be cut to +-kTimeLimitNs.
  bool set_extent(std::int64_t begin_ns, std::int64_t end_ns);
  // factor > 1 zooms in, < 1 zooms out. The time under cursor_x (window px) stays
  // under the cursor (to within 1 ns). Clamped: span in [kMinSpanNs, 10 x extent].
  void zoom_around(double factor, float cursor_x);
  // Drag by dx px: dx > 0 moves the content right, i.e. shows earlier times.
  void pan_pixels(float dx);
  void pan_ns(std::int64_t dt_ns);
  // Shows [begin, end) with kFitMargin on each side (the selection, or the whole
  // trace). The extent is not changed: call set_extent() once after loading. Returns
  // false when [begin, end) is wider than kMaxSpanNs or reaches past +-kTimeLimitNs:
  // the view then shows as much of it as it can hold, from `begin` on.
  bool fit(std::int64_t begin_ns, std::int64_t end_ns);
  // Applies the span clamps and keeps the view from drifting entirely away from the
  // extent (at least part of [extent_begin, extent_end] stays reachable).
  void clamp();
};

struct RulerTick {
  double x_px = 0;        // window px
  std::int64_t t_ns = 0;  // absolute ns
  bool major = false;
  std::string label;  // majors only: time relative to the origin, e.g. "1.25 ms"
};

struct RulerTicks {
  std::vector<RulerTick> ticks;  // in increasing time, majors and minors mixed
  std::int64_t major_step_ns = 0;
  std::int64_t minor_step_ns = 0;
  std::string unit;  // "ns", "us", "ms" or "s": the unit of the labels
};

// Ticks for the visible range: the major step is the smallest 1-2-5 x 10^k ns step
// whose spacing is at least min_major_spacing_px; minors split it in 5 (or 4 for a
// step of 2). Labels are relative to origin_ns (the trace start), in the largest unit
// in which the step is at least 0.1 (at most one decimal).
RulerTicks ruler_ticks(const Viewport& vp, std::int64_t origin_ns,
                       float min_major_spacing_px = 90.0f);

// A duration for people, 3 significant digits in an adaptive unit: "850 ns",
// "12.3 us", "1.50 ms", "2.00 s".
std::string format_duration(std::int64_t ns);

}  // namespace flopline::viewer
