// Zoom, pan, fit and clamp maths; ruler ticks and units.
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <cstdlib>

#include "core/viewport.h"

namespace flopline::viewer {
namespace {

Viewport make(std::int64_t t0, std::int64_t t1, float width = 1000, float x0 = 100) {
  Viewport v;
  v.x0_px = x0;
  v.width_px = width;
  v.set_extent(0, 1'000'000'000);
  v.t0_ns = t0;
  v.t1_ns = t1;
  return v;
}

TEST(Viewport, TimeAndPixelsRoundTrip) {
  Viewport v = make(1000, 2000);
  EXPECT_DOUBLE_EQ(v.time_to_x(1000), 100.0);
  EXPECT_DOUBLE_EQ(v.time_to_x(2000), 1100.0);
  EXPECT_DOUBLE_EQ(v.time_to_x(1500), 600.0);
  EXPECT_EQ(v.x_to_time(600.0), 1500);
  EXPECT_DOUBLE_EQ(v.ns_per_px(), 1.0);
}

TEST(Viewport, ZoomAroundCursorKeepsTheTimeUnderIt) {
  Viewport v = make(0, 1'000'000'000);
  const float cursor = 100 + 737.25f;
  const std::int64_t start = v.x_to_time(cursor);
  for (int i = 0; i < 60; ++i) {
    const std::int64_t before = v.x_to_time(cursor);
    v.zoom_around(1.25, cursor);
    // Each step: within a nanosecond (t0 and the span are whole ns).
    EXPECT_LE(std::llabs(v.x_to_time(cursor) - before), 1)
        << "step " << i << " span " << v.span_ns();
  }
  EXPECT_LT(v.span_ns(), 1'000'000'000 / 100'000);
  // Sixty steps in and out: still within a pixel of where it started.
  EXPECT_LE(static_cast<double>(std::llabs(v.x_to_time(cursor) - start)), v.ns_per_px() + 1);
  for (int i = 0; i < 60; ++i) v.zoom_around(0.8, cursor);
  EXPECT_LE(static_cast<double>(std::llabs(v.x_to_time(cursor) - start)), v.ns_per_px());
}

TEST(Viewport, ZoomInStopsAtTheMinimumSpan) {
  Viewport v = make(500, 1500);
  for (int i = 0; i < 200; ++i) v.zoom_around(2.0, 600);
  EXPECT_EQ(v.span_ns(), Viewport::kMinSpanNs);
  v.zoom_around(2.0, 600);
  EXPECT_EQ(v.span_ns(), Viewport::kMinSpanNs);
}

TEST(Viewport, ZoomOutStopsAtTenTimesTheExtent) {
  Viewport v = make(0, 1'000'000'000);
  for (int i = 0; i < 100; ++i) v.zoom_around(0.5, 600);
  EXPECT_EQ(v.span_ns(), 10'000'000'000);
}

TEST(Viewport, ZoomAtSmallSpansAlwaysMoves) {
  Viewport v = make(100, 103);  // 3 ns: 1.25 x rounds back to 3 without the guard
  v.zoom_around(1.25, 600);
  EXPECT_EQ(v.span_ns(), 2);
  v.zoom_around(0.8, 600);
  EXPECT_EQ(v.span_ns(), 3);
}

TEST(Viewport, PanFollowsTheMouse) {
  Viewport v = make(10'000, 20'000);  // 10 ns per px
  v.pan_pixels(50);                   // drag right: earlier times come into view
  EXPECT_EQ(v.t0_ns, 9'500);
  EXPECT_EQ(v.t1_ns, 19'500);
  v.pan_pixels(-100);
  EXPECT_EQ(v.t0_ns, 10'500);
  EXPECT_EQ(v.span_ns(), 10'000);
}

TEST(Viewport, PanCannotLeaveTheExtentBehind) {
  Viewport v = make(0, 1000);
  v.pan_ns(5'000'000'000);
  EXPECT_LE(v.t0_ns, v.extent_end_ns);
  v.pan_ns(-50'000'000'000);
  EXPECT_GE(v.t1_ns, v.extent_begin_ns);
}

TEST(Viewport, FitLeavesAMargin) {
  Viewport v = make(0, 10);
  v.fit(1'000'000, 2'000'000);
  EXPECT_EQ(v.t0_ns, 1'000'000 - 20'000);
  EXPECT_EQ(v.t1_ns, 2'000'000 + 20'000);
  v.fit(5000, 5000);  // zero length: a small window around it
  EXPECT_LE(v.t0_ns, 5000);
  EXPECT_GE(v.t1_ns, 5000);
  EXPECT_GE(v.span_ns(), Viewport::kMinSpanNs);
}

// Times whose span does not fit in int64 ns: the view shows what it can hold, says
// so, and no difference of view times overflows (UBSan checks that here).
TEST(Viewport, FitClampsSpansBeyondTheInt64Range) {
  Viewport v;
  v.width_px = 1000;
  const std::int64_t lo = INT64_MIN + 1, hi = INT64_MAX;
  EXPECT_FALSE(v.set_extent(lo, hi));
  EXPECT_EQ(v.extent_begin_ns, -Viewport::kTimeLimitNs);
  EXPECT_EQ(v.extent_end_ns, Viewport::kTimeLimitNs);
  EXPECT_FALSE(v.fit(lo, hi));
  EXPECT_GT(v.span_ns(), 0);
  EXPECT_LE(v.span_ns(), Viewport::kMaxSpanNs);
  EXPECT_EQ(v.t0_ns, -Viewport::kTimeLimitNs);  // from the start, as near as it can
  EXPECT_LT(v.t0_ns, v.t1_ns);
  v.zoom_around(0.5, 500);
  v.pan_ns(INT64_MAX);
  v.pan_pixels(-1e30f);
  EXPECT_EQ(v.span_ns(), Viewport::kMaxSpanNs);
  EXPECT_EQ(v.t1_ns, Viewport::kTimeLimitNs);

  // 180 years around a normal epoch time: wider than the view, not beyond its times.
  const std::int64_t now = 1'700'000'000'000'000'000;
  EXPECT_TRUE(v.set_extent(-now, 4'000'000'000'000'000'000));
  EXPECT_FALSE(v.fit(-now, 4'000'000'000'000'000'000));
  EXPECT_EQ(v.span_ns(), Viewport::kMaxSpanNs);
  // Spans that fit are fitted as before, and say so.
  EXPECT_TRUE(v.fit(now, now + 1000));
  EXPECT_EQ(v.t0_ns, now - 20);
}

TEST(Ruler, UnitsFollowTheStep) {
  struct Case {
    std::int64_t span;
    const char* unit;
  };
  // 1000 px wide, majors at least 90 px apart: step >= span * 0.09.
  for (const Case& c :
       {Case{500, "ns"}, Case{200'000, "us"}, Case{50'000'000, "ms"}, Case{30'000'000'000, "s"}}) {
    Viewport v = make(0, c.span);
    v.set_extent(0, 100'000'000'000);
    v.t1_ns = c.span;
    const RulerTicks r = ruler_ticks(v, 0);
    EXPECT_EQ(r.unit, c.unit) << c.span;
    ASSERT_FALSE(r.ticks.empty());
    // Majors are at least 90 px apart and labelled; minors split the step.
    double last_major = -1e9;
    for (const RulerTick& t : r.ticks) {
      EXPECT_GE(t.t_ns, v.t0_ns);
      EXPECT_LE(t.t_ns, v.t1_ns);
      if (!t.major) {
        EXPECT_TRUE(t.label.empty());
        continue;
      }
      EXPECT_FALSE(t.label.empty());
      EXPECT_NE(t.label.find(c.unit), std::string::npos) << t.label;
      EXPECT_GE(t.x_px - last_major, 89.0);
      last_major = t.x_px;
    }
    EXPECT_EQ(r.major_step_ns % r.minor_step_ns, 0);
  }
}

TEST(Ruler, LabelsAreRelativeToTheOriginWithEnoughDecimals) {
  Viewport v = make(1'000'000'000 + 1'250'000, 1'000'000'000 + 1'750'000);  // 500 us wide
  {
    Viewport w = make(0, 10'000'000);  // 1 ms steps: "1.5 ms" style labels never needed
    w.set_extent(0, 5'000'000'000);
    w.t1_ns = 20'000'000;  // 2 ms step
    const RulerTicks r2 = ruler_ticks(w, 0);
    EXPECT_EQ(r2.major_step_ns, 2'000'000);
    EXPECT_EQ(r2.unit, "ms");
    EXPECT_EQ(r2.ticks.front().label, "0 ms");
  }
  {
    Viewport w = make(0, 2'000'000);  // 200 us steps -> "0.2 ms"
    w.set_extent(0, 5'000'000'000);
    const RulerTicks r3 = ruler_ticks(w, 0);
    EXPECT_EQ(r3.major_step_ns, 200'000);
    EXPECT_EQ(r3.unit, "ms");
    bool saw = false;
    for (const RulerTick& t : r3.ticks) saw |= t.major && t.label == "1.4 ms";
    EXPECT_TRUE(saw);
  }
  v.set_extent(0, 5'000'000'000);
  const RulerTicks r = ruler_ticks(v, 1'000'000'000);
  EXPECT_EQ(r.major_step_ns, 50'000);  // 45 us wanted -> 50 us
  EXPECT_EQ(r.unit, "us");             // 0.05 ms would be below a tenth of the unit
  bool found = false;
  for (const RulerTick& t : r.ticks) {
    if (t.major && t.t_ns == 1'000'000'000 + 1'300'000) {
      EXPECT_EQ(t.label, "1300 us");
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

TEST(Ruler, NegativeRelativeTimesAndTinySteps) {
  Viewport v = make(-40, 40, 800);
  v.set_extent(-100, 100);
  const RulerTicks r = ruler_ticks(v, 0);
  EXPECT_EQ(r.unit, "ns");
  EXPECT_EQ(r.major_step_ns, 10);
  bool saw_negative = false;
  for (const RulerTick& t : r.ticks) saw_negative |= t.major && t.label == "-30 ns";
  EXPECT_TRUE(saw_negative);
}

TEST(FormatDuration, AdaptiveUnits) {
  EXPECT_EQ(format_duration(850), "850 ns");
  EXPECT_EQ(format_duration(12'345), "12.3 us");
  EXPECT_EQ(format_duration(1'500'000), "1.50 ms");
  EXPECT_EQ(format_duration(2'000'000'000), "2.00 s");
  EXPECT_EQ(format_duration(0), "0 ns");
}

}  // namespace
}  // namespace flopline::viewer
