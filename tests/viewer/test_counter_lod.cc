// Counter series: the min/max index against brute force, the per-pixel-column level of
// detail (every point in view accounted for, cost bounded by pixels), and the words of
// a counter track (units, value text, scale).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "core/counter_format.h"
#include "core/counter_index.h"
#include "core/counter_lod.h"

namespace flopline::viewer {
namespace {

using trace::CounterPoint;

std::vector<CounterPoint> random_walk(std::size_t n, std::uint32_t seed,
                                      std::int64_t spacing = 10) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> gap(1, static_cast<int>(2 * spacing));
  std::normal_distribution<double> step(0.0, 5.0);
  std::vector<CounterPoint> p(n);
  std::int64_t t = 1000;
  double v = 50;
  for (std::size_t i = 0; i < n; ++i) {
    p[i] = {t, v};
    t += gap(rng);
    v += step(rng);
  }
  return p;
}

ValueRange brute(const std::vector<CounterPoint>& p, std::size_t first, std::size_t last) {
  ValueRange r;
  for (std::size_t i = first; i < last && i < p.size(); ++i) r.take(p[i].value);
  return r;
}

Viewport view(std::int64_t t0, std::int64_t t1, float width = 1000) {
  Viewport vp;
  vp.set_extent(t0, t1);
  vp.t0_ns = t0;
  vp.t1_ns = t1;
  vp.x0_px = 0;
  vp.width_px = width;
  return vp;
}

TEST(CounterIndex, RangesMatchBruteForceAcrossBlockEdges) {
  for (std::size_t n : {0u, 1u, 15u, 16u, 17u, 33u, 100u, 1000u, 4097u}) {
    const auto p = random_walk(n, static_cast<std::uint32_t>(n) + 7);
    const CounterIndex index(p);
    std::mt19937 rng(static_cast<std::uint32_t>(n));
    for (int q = 0; q < 400; ++q) {
      std::size_t a = n == 0 ? 0 : rng() % (n + 1);
      std::size_t b = n == 0 ? 0 : rng() % (n + 1);
      if (a > b) std::swap(a, b);
      const ValueRange want = brute(p, a, b);
      const ValueRange got = index.range(a, b);
      ASSERT_EQ(got.empty, want.empty) << n << " [" << a << "," << b << ")";
      if (!want.empty) {
        ASSERT_EQ(got.min, want.min) << n << " [" << a << "," << b << ")";
        ASSERT_EQ(got.max, want.max) << n << " [" << a << "," << b << ")";
      }
    }
    // The whole series, and indices past the end clamped.
    const ValueRange all = index.range(0, n + 5);
    EXPECT_EQ(all.empty, n == 0);
    if (n > 0) {
      EXPECT_EQ(all.max, brute(p, 0, n).max);
    }
  }
}

TEST(CounterIndex, HoldsAboutTwoBytesPerPoint) {
  const auto p = random_walk(1 << 16, 3);
  const CounterIndex index(p);
  EXPECT_LE(index.resident_bytes(), 3 * p.size());
  EXPECT_GT(index.resident_bytes(), 0u);
}

TEST(CounterIndex, LeavesOutNanAndInf) {
  std::vector<CounterPoint> p = {
      {0, 5}, {10, std::nan("")}, {20, -3}, {30, std::numeric_limits<double>::infinity()}};
  const CounterIndex index(p);
  const ValueRange r = index.range(0, 4);
  EXPECT_FALSE(r.empty);
  EXPECT_EQ(r.min, -3);
  EXPECT_EQ(r.max, 5);
  EXPECT_TRUE(index.range(1, 2).empty);
}

TEST(CounterLod, VisiblePointsStartAtThePointInEffect) {
  const std::vector<CounterPoint> p = {{100, 1}, {200, 2}, {300, 3}};
  // [150, 250]: the point of 100 is still in effect at 150, 200 starts inside.
  EXPECT_EQ(visible_points(p, 150, 250, 1000), (std::pair<std::size_t, std::size_t>{0, 2}));
  // Before the first point: from the first.
  EXPECT_EQ(visible_points(p, 0, 50, 1000), (std::pair<std::size_t, std::size_t>{0, 0}));
  EXPECT_EQ(visible_points(p, 0, 99, 1000), (std::pair<std::size_t, std::size_t>{0, 0}));
  EXPECT_EQ(visible_points(p, 0, 100, 1000), (std::pair<std::size_t, std::size_t>{0, 1}));
  // The last step holds until the end of the traces, not after.
  EXPECT_EQ(visible_points(p, 900, 950, 1000), (std::pair<std::size_t, std::size_t>{2, 3}));
  EXPECT_EQ(visible_points(p, 1001, 1100, 1000), (std::pair<std::size_t, std::size_t>{0, 0}));
  EXPECT_EQ(point_at(p, 99, 1000), 3u);
  EXPECT_EQ(point_at(p, 100, 1000), 0u);
  EXPECT_EQ(point_at(p, 299, 1000), 1u);
  EXPECT_EQ(point_at(p, 1000, 1000), 2u);
  EXPECT_EQ(point_at(p, 1001, 1000), 3u);
}

// Every item's values are those of its points, items follow each other without gaps,
// and together they cover exactly the points in view.
void expect_items_account_for_view(const std::vector<CounterPoint>& p, const CounterIndex& index,
                                   std::int64_t end_ns, const Viewport& vp) {
  std::vector<CounterItem> items;
  visible_counter_items(p, index, end_ns, vp, items);
  const auto [first, last] = visible_points(p, vp.t0_ns, vp.t1_ns, end_ns);
  ASSERT_FALSE(items.empty());
  EXPECT_EQ(items.front().first, first);
  const CounterItem& tail = items.back();
  EXPECT_EQ(tail.first + tail.count, last);
  for (std::size_t i = 0; i < items.size(); ++i) {
    const CounterItem& it = items[i];
    const ValueRange want = brute(p, it.first, it.first + it.count);
    ASSERT_EQ(it.values.empty, want.empty) << i;
    ASSERT_EQ(it.values.min, want.min) << i;
    ASSERT_EQ(it.values.max, want.max) << i;
    ASSERT_EQ(it.last, p[it.first + it.count - 1].value) << i;
    ASSERT_GE(it.x1 - it.x0, 1.0f) << i;
    if (i == 0) continue;
    const CounterItem& prev = items[i - 1];
    // A column's last point may still be in effect when the next item starts.
    const std::uint32_t prev_end = prev.first + prev.count;
    ASSERT_TRUE(it.first == prev_end || (prev.column() && it.first == prev_end - 1)) << i;
    ASSERT_GE(it.x0, prev.x0) << i;
    ASSERT_LE(it.x0, prev.x1 + 0.01f) << i;  // adjacent: no gap
    ASSERT_GE(it.x1, prev.x1) << i;
  }
}

TEST(CounterLod, ZoomedInEachStepIsOneItemWithItsValue) {
  const std::vector<CounterPoint> p = {{100, 10}, {200, 20}, {300, 5}, {400, 40}};
  const CounterIndex index(p);
  std::vector<CounterItem> items;
  const Viewport vp = view(0, 1000);  // 1 px per ns
  visible_counter_items(p, index, 600, vp, items);
  ASSERT_EQ(items.size(), 4u);
  const double want[] = {10, 20, 5, 40};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_FALSE(items[i].column());
    EXPECT_EQ(items[i].values.max, want[i]);
    EXPECT_FLOAT_EQ(items[i].x0, static_cast<float>(p[i].ts));
  }
  // The last step runs to the end of the traces (600), not to the view's end.
  EXPECT_FLOAT_EQ(items.back().x1, 600.0f);
  expect_items_account_for_view(p, index, 600, vp);
}

TEST(CounterLod, ZoomedOutColumnsCarryMinAndMaxOfTheirSamples) {
  // A sample every 10 ns and 100 ns per px: 10 samples per column.
  std::vector<CounterPoint> p;
  for (int i = 0; i < 1000; ++i) p.push_back({i * 10, i % 10 == 3 ? 100.0 : 1.0});
  const CounterIndex index(p);
  std::vector<CounterItem> items;
  const Viewport vp = view(0, 10'000, 100);
  visible_counter_items(p, index, 10'000, vp, items);
  ASSERT_GE(items.size(), 90u);
  ASSERT_LE(items.size(), 2 * 100u + 2);
  // A spike of one sample in each column is never lost, whatever the zoom.
  for (const CounterItem& it : items) {
    ASSERT_TRUE(it.column());
    EXPECT_EQ(it.values.max, 100.0);
    EXPECT_EQ(it.values.min, 1.0);
  }
  expect_items_account_for_view(p, index, 10'000, vp);
}

TEST(CounterLod, RandomViewsAccountForEveryPoint) {
  const auto p = random_walk(20'000, 11);
  const CounterIndex index(p);
  std::mt19937_64 rng(5);
  for (int q = 0; q < 200; ++q) {
    // Half the views with the last step ending where it starts (a sample at the very end).
    const std::int64_t end = p.back().ts + (q % 2 == 0 ? 500 : 0);
    std::int64_t a =
        static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(end + 2000)) - 1000;
    std::int64_t span = 1000 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(end));
    const Viewport vp = view(a, a + span, static_cast<float>(200 + rng() % 1500));
    const auto [first, last] = visible_points(p, vp.t0_ns, vp.t1_ns, end);
    if (first >= last) continue;
    SCOPED_TRACE(q);
    expect_items_account_for_view(p, index, end, vp);
  }
}

TEST(CounterLod, CostFollowsPixelsNotPoints) {
  CounterLodWork small_work, big_work;
  std::vector<CounterItem> small_items, big_items;
  const auto small = random_walk(20'000, 1, 500);
  const auto big = random_walk(2'000'000, 2, 5);  // the same time span, 100x the points
  const CounterIndex small_index(small), big_index(big);
  const Viewport vp_small = view(small.front().ts, small.back().ts, 1000);
  const Viewport vp_big = view(big.front().ts, big.back().ts, 1000);
  visible_counter_items(small, small_index, small.back().ts, vp_small, small_items, {},
                        &small_work);
  visible_counter_items(big, big_index, big.back().ts, vp_big, big_items, {}, &big_work);
  EXPECT_LE(big_items.size(), 2 * 1000u + 2);
  EXPECT_LE(big_work.steps, 2 * 1000u + 2);
  // O(log n) per item: three searches at most, each over 21 levels for 2M points.
  EXPECT_LE(big_work.searches, 3 * big_work.steps + 1);
  EXPECT_LE(big_work.steps, small_work.steps + 1000);
  expect_items_account_for_view(big, big_index, big.back().ts, vp_big);
}

TEST(CounterLod, LastZeroLengthStepStillShows) {
  const std::vector<CounterPoint> p = {{100, 7}};
  const CounterIndex index(p);
  std::vector<CounterItem> items;
  visible_counter_items(p, index, 100, view(0, 200), items);
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].values.max, 7.0);
  EXPECT_GE(items[0].x1 - items[0].x0, 1.0f);
  const std::vector<CounterPoint> q = {{0, 1}, {50, 2}, {100, 9}};
  const CounterIndex qi(q);
  items.clear();
  visible_counter_items(q, qi, 100, view(0, 200), items);
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[2].values.max, 9.0);
  EXPECT_FLOAT_EQ(items[2].x0, 500.0f);  // 1000 px over 200 ns
  // A view ending exactly on a sample (a fitted view) still shows that sample.
  items.clear();
  visible_counter_items(q, qi, 100, view(0, 100), items);
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[2].values.max, 9.0);
  EXPECT_GE(items[2].x1 - items[2].x0, 1.0f);
}

TEST(CounterLod, ItemAtX) {
  std::vector<CounterItem> items(3);
  items[0].x0 = 0, items[0].x1 = 10;
  items[1].x0 = 10, items[1].x1 = 11;
  items[2].x0 = 11, items[2].x1 = 30;
  EXPECT_EQ(counter_item_at(items, 0), 0u);
  EXPECT_EQ(counter_item_at(items, 9.9f), 0u);
  EXPECT_EQ(counter_item_at(items, 10.5f), 1u);
  EXPECT_EQ(counter_item_at(items, 30), 2u);
  EXPECT_EQ(counter_item_at(items, 31), 3u);
  EXPECT_EQ(counter_item_at(items, -1), 3u);
}

TEST(CounterFormat, UnitsFromTheLastWordOfTheName) {
  EXPECT_EQ(counter_unit("GPU metrics: SM active %"), "%");
  EXPECT_EQ(counter_unit("GPU metrics: tensor pipe active %"), "%");
  EXPECT_EQ(counter_unit("GPU metrics: DRAM read GB/s"), "GB/s");
  EXPECT_EQ(counter_unit("link bandwidth (GB/s)"), "GB/s");
  EXPECT_EQ(counter_unit("occupancy%"), "%");
  EXPECT_EQ(counter_unit("Memory: Total Allocated MB"), "MB");
  EXPECT_EQ(counter_unit("Memory: Total Allocated"), "");
  EXPECT_EQ(counter_unit("Bytes in use"), "");
  EXPECT_EQ(counter_unit("GB/s"), "");  // one word names the counter, not a unit of it
  EXPECT_EQ(counter_unit(""), "");
}

TEST(CounterFormat, TrackNamesAndValues) {
  EXPECT_EQ(counter_track_name("GPU metrics", "SM active %"), "GPU metrics: SM active %");
  EXPECT_EQ(counter_track_name("queue depth", "value"), "queue depth");
  EXPECT_EQ(counter_track_name("ctr", "ctr"), "ctr");
  EXPECT_EQ(counter_track_name("", "x"), "x");
  EXPECT_EQ(format_counter_value(87.345, "%"), "87.3 %");
  EXPECT_EQ(format_counter_value(3010.4, "GB/s"), "3010 GB/s");
  EXPECT_EQ(format_counter_value(0, "GB/s"), "0 GB/s");
  EXPECT_EQ(format_counter_value(1.25e6, ""), "1.25 M");
  EXPECT_EQ(format_counter_value(std::nan(""), "%"), "nan");
  EXPECT_NE(counter_source("gpu_metrics").find("--gpu-metrics"), std::string::npos);
  EXPECT_NE(counter_source("").find("\"ph\":\"C\""), std::string::npos);
}

TEST(CounterFormat, ScaleFromZeroToTheHighestShown) {
  ValueRange r;
  r.take(20);
  r.take(40);
  CounterScale pct = counter_scale(r, "%");
  EXPECT_EQ(pct.lo, 0);
  EXPECT_EQ(pct.hi, 100);  // 40% reads as 40% of the height
  EXPECT_FLOAT_EQ(pct.y_of(40, 0, 100), 60.0f);
  CounterScale rate = counter_scale(r, "GB/s");
  EXPECT_EQ(rate.hi, 40);
  EXPECT_FLOAT_EQ(rate.y_of(40, 10, 50), 10.0f);
  EXPECT_FLOAT_EQ(rate.y_of(0, 10, 50), 60.0f);
  ValueRange neg;
  neg.take(-5);
  neg.take(-1);
  const CounterScale n = counter_scale(neg, "");
  EXPECT_EQ(n.lo, -5);
  EXPECT_EQ(n.hi, 0);
  ValueRange zero;
  zero.take(0);
  EXPECT_GT(counter_scale(zero, "").hi, 0);
  EXPECT_EQ(counter_scale(ValueRange{}, "%").hi, 100);
}

}  // namespace
}  // namespace flopline::viewer
