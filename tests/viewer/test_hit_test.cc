// Hit testing: what is drawn at (x, y) is what the hit names.
#include <gtest/gtest.h>

#include "core/hit_test.h"
#include "viewer_test_util.h"

namespace flopline::viewer {
namespace {

using testing::read_json;
using testing::trace_json;
using testing::x_event;

struct Fixture {
  trace::Trace t;
  std::vector<const trace::Trace*> list;
  TimelineLayout layout;
  Viewport vp;
  explicit Fixture(const std::string& json) : t(read_json(json)) {
    list = {&t};
    layout = TimelineLayout::build(list);
    vp.x0_px = 50;
    vp.width_px = 1000;
    vp.set_extent(0, 1'000'000);
    vp.t0_ns = 0;
    vp.t1_ns = 1'000'000;  // 1 us per px
  }
  float row_y(std::uint32_t r) const { return layout.rows()[r].y + layout.rows()[r].height / 2; }
};

TEST(HitTest, FindsTheSliceUnderTheMouseAtEachDepth) {
  Fixture f(trace_json({x_event("outer", "c", 1, 1, "100", "500"),
                        x_event("inner", "c", 1, 1, "200", "100"),
                        x_event("later", "c", 1, 1, "700", "100")}));
  auto h = hit_test(f.list, f.layout, f.vp, 50 + 150, f.row_y(0));
  ASSERT_TRUE(h);
  EXPECT_EQ(f.t.str(slice_of(f.list, h->slice).name), "outer");
  h = hit_test(f.list, f.layout, f.vp, 50 + 250, f.row_y(1));
  ASSERT_TRUE(h);
  EXPECT_EQ(f.t.str(slice_of(f.list, h->slice).name), "inner");
  EXPECT_EQ(h->layout_row, 1u);
  EXPECT_FALSE(h->item.merged());
  h = hit_test(f.list, f.layout, f.vp, 50 + 750, f.row_y(0));
  ASSERT_TRUE(h);
  EXPECT_EQ(f.t.str(slice_of(f.list, h->slice).name), "later");
}

TEST(HitTest, GapsHeadersAndOutsideHitNothing) {
  Fixture f(
      trace_json({x_event("a", "c", 1, 1, "100", "100"), x_event("b", "c", 1, 1, "400", "100")}));
  EXPECT_FALSE(hit_test(f.list, f.layout, f.vp, 50 + 300, f.row_y(0)));  // between a and b
  EXPECT_FALSE(hit_test(f.list, f.layout, f.vp, 50 + 150, 1.0f));        // process header
  EXPECT_FALSE(hit_test(f.list, f.layout, f.vp, 20, f.row_y(0)));        // left of the area
  EXPECT_FALSE(hit_test(f.list, f.layout, f.vp, 50 + 150, f.layout.total_height() + 5));
}

TEST(HitTest, ATinySliceIsHitWhereItIsDrawn) {
  // 5 ns at 1 us per px: drawn 1 px wide from its start.
  Fixture f(trace_json({x_event("tiny", "c", 1, 1, "300", "0.005")}));
  auto h = hit_test(f.list, f.layout, f.vp, 50 + 300.5f, f.row_y(0));
  ASSERT_TRUE(h);
  EXPECT_EQ(f.t.str(slice_of(f.list, h->slice).name), "tiny");
  EXPECT_FALSE(hit_test(f.list, f.layout, f.vp, 50 + 302.0f, f.row_y(0)));
}

TEST(HitTest, AMergedBlockNamesTheSliceNearestTheMouse) {
  std::vector<std::string> ev;
  for (int i = 0; i < 100; ++i) {
    std::string name(1, 'k');  // piece by piece: GCC 12 warns falsely on "k" + string
    name += std::to_string(i);
    ev.push_back(x_event(name, "c", 1, 1, std::to_string(100 + i) + ".5", "0.2"));
  }
  Fixture f(trace_json(ev));  // 100 slices of 200 ns, 1 us apart: one block of 100 px
  auto h = hit_test(f.list, f.layout, f.vp, 50 + 150.6f, f.row_y(0));
  ASSERT_TRUE(h);
  EXPECT_TRUE(h->item.merged());
  EXPECT_EQ(h->item.count, 100u);
  EXPECT_EQ(f.t.str(slice_of(f.list, h->slice).name), "k50");
}

}  // namespace
}  // namespace flopline::viewer
