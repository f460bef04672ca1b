// The state dump the app's end-to-end test reads.
#include <gtest/gtest.h>

#include "core/state_dump.h"
#include "flopline/trace/json_value.h"
#include "viewer_test_util.h"

namespace flopline::viewer {
namespace {

using testing::read_json;
using testing::trace_json;
using testing::x_event;

TEST(StateDump, ViewportSelectionCollapsedAndCounts) {
  const trace::Trace t = read_json(
      trace_json({x_event("we\\\"ird", "k", 1, 1, "10", "5"), x_event("b", "k", 1, 2, "20", "5")}));
  const auto list = testing::list_of({&t});
  TimelineLayout layout = TimelineLayout::build(list);
  layout.toggle_track(1);
  Viewport vp;
  vp.set_extent(0, 100'000);
  vp.t0_ns = 1'000;
  vp.t1_ns = 90'000;
  vp.width_px = 800;
  Selection sel;
  sel.select(SliceHandle{0, {0, 0, 0}}, FlowIndex{});
  sel.range = TimeRange{5'000, 25'000};
  SliceSearch search;
  search.run(list, "B");
  const std::string json = dump_state_json(list, ViewerStateView{&vp, &layout, &sel, &search, 42});
  EXPECT_EQ(json.find('\n'), std::string::npos);
  const auto viewport = trace::json_member(json, "viewport");
  ASSERT_TRUE(viewport);
  EXPECT_EQ(trace::json_int(*trace::json_member(*viewport, "t0_ns")), 1'000);
  EXPECT_EQ(trace::json_int(*trace::json_member(*viewport, "t1_ns")), 90'000);
  EXPECT_EQ(trace::json_number(*trace::json_member(*viewport, "width_px")), 800.0);
  const auto selection = trace::json_member(json, "selection");
  ASSERT_TRUE(selection);
  EXPECT_EQ(trace::json_string(*trace::json_member(*selection, "name")), "we\"ird");
  EXPECT_EQ(trace::json_int(*trace::json_member(*selection, "start_ns")), 10'000);
  EXPECT_EQ(trace::json_int(*trace::json_member(*selection, "dur_ns")), 5'000);
  EXPECT_EQ(trace::json_int(*trace::json_member(*trace::json_member(json, "range"), "end_ns")),
            25'000);
  EXPECT_EQ(*trace::json_member(json, "highlighted"), "null");
  EXPECT_EQ(trace::json_int(*trace::json_member(*trace::json_member(json, "search"), "matches")),
            1);
  EXPECT_EQ(*trace::json_member(json, "collapsed"), "[\"process (pid 1)/thread 2\"]");
  EXPECT_EQ(trace::json_int(*trace::json_member(json, "visible_items")), 42);
  EXPECT_EQ(trace::json_int(*trace::json_member(json, "slices")), 2);
  EXPECT_EQ(trace::json_int(*trace::json_member(json, "tracks")), 2);

  sel.clear_all();
  const std::string cleared =
      dump_state_json(list, ViewerStateView{&vp, &layout, &sel, nullptr, 0});
  EXPECT_EQ(*trace::json_member(cleared, "selection"), "null");
  EXPECT_EQ(*trace::json_member(cleared, "range"), "null");
}

}  // namespace
}  // namespace flopline::viewer
