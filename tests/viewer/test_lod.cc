// Level of detail: merged blocks conserve slices, nothing is lost, the output and the
// work are bounded by pixels, and the binary-search skipping gives exactly what a
// slice-by-slice merge gives.
#include <gtest/gtest.h>

#include <random>

#include "core/lod.h"
#include "viewer_test_util.h"

namespace flopline::viewer {
namespace {

using testing::make_row;
using trace::Slice;

Viewport view(std::int64_t t0, std::int64_t t1, float width = 1000) {
  Viewport v;
  v.x0_px = 0;
  v.width_px = width;
  v.set_extent(t0, t1);
  v.t0_ns = t0;
  v.t1_ns = t1;
  return v;
}

// The definition, slice by slice: a narrow slice (under merge_px, in whole ns as the
// LOD rounds it) starts a block; following slices join while they end within
// merge_px of the block's end, or are narrow and start within merge_px of it.
std::vector<DrawItem> reference(const std::vector<Slice>& row, const Viewport& vp, float merge_px) {
  std::vector<DrawItem> out;
  const auto merge_ns = static_cast<std::int64_t>(std::ceil(merge_px * vp.ns_per_px()));
  const std::int64_t m = std::max<std::int64_t>(merge_ns, 1);
  auto narrow = [&](const Slice& s) {
    return static_cast<double>(s.dur) * vp.px_per_ns() < merge_px;
  };
  std::size_t i = 0;
  while (i < row.size() && row[i].end() < vp.t0_ns) ++i;
  std::size_t n = i;
  while (n < row.size() && row[n].start <= vp.t1_ns) ++n;
  while (i < n) {
    if (!narrow(row[i])) {
      out.push_back(DrawItem{0, 0, static_cast<std::uint32_t>(i), 1, 0});
      ++i;
      continue;
    }
    std::int64_t end = row[i].end();
    std::size_t j = i + 1;
    while (j < n) {
      const Slice& s = row[j];
      if (s.end() < end + m) {
        end = std::max(end, s.end());
      } else if (narrow(s) && s.start - end < m) {
        end = s.end();
      } else {
        break;
      }
      ++j;
    }
    out.push_back(
        DrawItem{0, 0, static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(j - i), 0});
    i = j;
  }
  return out;
}

std::vector<Slice> random_row(std::size_t n, std::uint32_t seed, std::int64_t max_dur,
                              std::int64_t max_gap) {
  std::mt19937_64 rng(seed);
  std::vector<std::pair<std::int64_t, std::int64_t>> spans;
  std::int64_t t = 0;
  for (std::size_t i = 0; i < n; ++i) {
    // Mostly tiny slices with some long ones and some long gaps: runs of every kind.
    const std::int64_t dur = (rng() % 50 == 0) ? static_cast<std::int64_t>(rng() % (max_dur * 100))
                                               : static_cast<std::int64_t>(rng() % max_dur);
    const std::int64_t gap = (rng() % 40 == 0) ? static_cast<std::int64_t>(rng() % (max_gap * 200))
                                               : static_cast<std::int64_t>(rng() % max_gap);
    spans.emplace_back(t, dur);
    t += dur + gap;
  }
  return make_row(spans);
}

TEST(Lod, WideSlicesAreDrawnOneByOne) {
  const auto row = make_row({{0, 100}, {100, 100}, {300, 50}});
  std::vector<DrawItem> items;
  visible_items(row, view(0, 1000), items);  // 1 ns per px
  ASSERT_EQ(items.size(), 3u);
  EXPECT_FLOAT_EQ(items[0].x0, 0);
  EXPECT_FLOAT_EQ(items[0].x1, 100);
  EXPECT_EQ(items[1].first, 1u);
  EXPECT_FLOAT_EQ(items[2].x0, 300);
  EXPECT_FLOAT_EQ(items[2].x1, 350);
  for (const DrawItem& d : items) EXPECT_FALSE(d.merged());
}

TEST(Lod, NarrowNeighboursMergeIntoOneBlockWithACount) {
  // 1000 slices of 1 ns, 1 ns apart, then a wide slice: at 10 ns per px the run is
  // 200 px of sub-pixel slices.
  std::vector<std::pair<std::int64_t, std::int64_t>> spans;
  for (int i = 0; i < 1000; ++i) spans.emplace_back(2 * i, 1);
  spans.emplace_back(5000, 3000);
  const auto row = make_row(spans);
  std::vector<DrawItem> items;
  visible_items(row, view(0, 10000), items);
  ASSERT_EQ(items.size(), 2u);
  EXPECT_TRUE(items[0].merged());
  EXPECT_EQ(items[0].count, 1000u);
  EXPECT_FLOAT_EQ(items[0].x0, 0);
  EXPECT_NEAR(items[0].x1, 199.9, 1e-3);
  EXPECT_EQ(items[1].first, 1000u);
  EXPECT_EQ(items[1].count, 1u);
}

TEST(Lod, ATenthOfAPixelStillShows) {
  const auto row = make_row({{5000, 1}});  // 0.1 px at 10 ns per px
  std::vector<DrawItem> items;
  visible_items(row, view(0, 10000), items);
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].count, 1u);
  EXPECT_GE(items[0].x1 - items[0].x0, 1.0f);  // drawn at least a pixel wide
  // A zero-length slice too.
  const auto zero = make_row({{5000, 0}});
  items.clear();
  visible_items(zero, view(0, 10000), items);
  EXPECT_EQ(items.size(), 1u);
}

TEST(Lod, OnlyTheVisibleRangeIsWalked) {
  std::vector<std::pair<std::int64_t, std::int64_t>> spans;
  for (int i = 0; i < 100000; ++i) spans.emplace_back(i * 100, 90);
  const auto row = make_row(spans);
  std::vector<DrawItem> items;
  LodWork work;
  visible_items(row, view(5'000'000, 5'001'000), items, {}, &work);  // 1 ns per px: 10 slices
  ASSERT_EQ(items.size(), 11u);  // slices 50000 to 50010 (the last starts at t1)
  EXPECT_EQ(items.front().first, 50'000u);
  EXPECT_LE(work.steps, 12u);
  EXPECT_EQ(work.searches, 2u);  // where the view starts and ends
}

TEST(Lod, MatchesTheSliceBySliceDefinition) {
  for (std::uint32_t seed = 1; seed <= 20; ++seed) {
    const auto row = random_row(20000, seed, 50, 40);
    const std::int64_t end = row.back().end();
    std::mt19937_64 rng(seed * 7);
    for (int v = 0; v < 10; ++v) {
      const std::int64_t a = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(end));
      const std::int64_t span =
          1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(end));
      const Viewport vp = view(a - span / 4, a + span, 200 + static_cast<float>(rng() % 1500));
      std::vector<DrawItem> got;
      visible_items(row, vp, got);
      const std::vector<DrawItem> want = reference(row, vp, 3.0f);
      ASSERT_EQ(got.size(), want.size()) << "seed " << seed << " view " << v;
      for (std::size_t i = 0; i < got.size(); ++i) {
        ASSERT_EQ(got[i].first, want[i].first) << i;
        if (got[i].count != want[i].count) {
          const std::size_t j = got[i].first + std::min(got[i].count, want[i].count);
          ADD_FAILURE() << "item " << i << " first " << got[i].first << " got " << got[i].count
                        << " want " << want[i].count << "; npp " << vp.ns_per_px() << " t1 "
                        << vp.t1_ns << "; at " << j << ": prev end " << row[j - 1].end()
                        << " start " << row[j].start << " dur " << row[j].dur;
          return;
        }
      }
    }
  }
}

TEST(Lod, CountsConserveEverySliceInView) {
  const auto row = random_row(200000, 3, 30, 30);
  for (double zoom : {1.0, 0.5, 0.1, 0.01, 0.001}) {
    const std::int64_t end = row.back().end();
    const std::int64_t t0 = static_cast<std::int64_t>(static_cast<double>(end) * (0.5 - zoom / 2));
    const std::int64_t t1 = static_cast<std::int64_t>(static_cast<double>(end) * (0.5 + zoom / 2));
    const Viewport vp = view(t0, t1, 1600);
    std::vector<DrawItem> items;
    visible_items(row, vp, items);
    // Items tile the visible slices: contiguous indices, in order, no gap.
    std::size_t expect_first = first_ending_at_or_after(row, t0);
    std::uint64_t covered = 0;
    for (const DrawItem& d : items) {
      ASSERT_EQ(d.first, expect_first);
      expect_first += d.count;
      covered += d.count;
    }
    std::uint64_t visible = 0;
    for (const Slice& s : row) visible += (s.end() >= t0 && s.start <= t1) ? 1 : 0;
    EXPECT_EQ(covered, visible) << zoom;
  }
}

TEST(Lod, ItemsAndWorkFollowPixelsForAMillionSlices) {
  const auto row = random_row(1'000'000, 11, 20, 20);
  const std::int64_t end = row.back().end();
  for (float width : {400.0f, 1600.0f}) {
    for (double zoom : {1.0, 0.3, 0.05, 0.001, 0.00001}) {
      const std::int64_t span =
          std::max<std::int64_t>(10, static_cast<std::int64_t>(static_cast<double>(end) * zoom));
      const Viewport vp = view(end / 3, end / 3 + span, width);
      std::vector<DrawItem> items;
      LodWork work;
      visible_items(row, vp, items, {}, &work);
      // At most 2 items per 3 px (a narrow block, then a gap or a wide slice).
      EXPECT_LE(items.size(), static_cast<std::size_t>(width * 2 / 3) + 4) << zoom;
      // Work: a binary search per item or per 3 px of a block, not per slice.
      EXPECT_LE(work.searches, static_cast<std::size_t>(width) + 4) << zoom;
      EXPECT_LE(work.steps, 2 * static_cast<std::size_t>(width) + 4) << zoom;
    }
  }
}

TEST(Lod, TenMillionTinySlicesAtFullZoomOut) {
  std::vector<Slice> row(10'000'000);
  for (std::size_t i = 0; i < row.size(); ++i) {
    row[i].start = static_cast<std::int64_t>(i) * 10;
    row[i].dur = 5 + static_cast<std::int64_t>(i % 3);
  }
  const Viewport vp = view(0, row.back().end(), 1600);
  std::vector<DrawItem> items;
  LodWork work;
  visible_items(row, vp, items, {}, &work);
  ASSERT_EQ(items.size(), 1u);
  EXPECT_EQ(items[0].count, 10'000'000u);
  EXPECT_LE(work.searches, 1700u);  // about one per 3 px, not one per slice
}

}  // namespace
}  // namespace flopline::viewer
