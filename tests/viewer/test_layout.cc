// Layout: order and names from metadata, several traces with clashing pids, overlap
// rows from the model, collapsing, and y lookups.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/timeline_layout.h"
#include "viewer_test_util.h"

namespace flopline::viewer {
namespace {

using testing::read_json;
using testing::trace_json;
using testing::x_event;

std::string meta(std::string_view what, int pid, int tid, std::string_view args) {
  return "{\"ph\":\"M\",\"name\":\"" + std::string(what) + "\",\"pid\":" + std::to_string(pid) +
         ",\"tid\":" + std::to_string(tid) + ",\"args\":" + std::string(args) + "}";
}

// A CPU process (pid 100, two threads) and a GPU process (pid 0, two streams, the
// kernels of stream 7 overlapping so the model gives them an extra row).
std::string sample() {
  return trace_json({
      meta("process_name", 100, 0, R"({"name":"python"})"),
      meta("process_sort_index", 100, 0, R"({"sort_index":100})"),
      meta("process_name", 0, 0, R"({"name":"GPU 0"})"),
      meta("process_sort_index", 0, 0, R"({"sort_index":5000000})"),
      meta("thread_name", 100, 12, R"({"name":"worker"})"),
      meta("thread_sort_index", 100, 12, R"({"sort_index":1})"),
      meta("thread_name", 100, 11, R"({"name":"main"})"),
      meta("thread_sort_index", 100, 11, R"({"sort_index":2})"),
      x_event("outer", "cpu_op", 100, 11, "0", "10"),
      x_event("inner", "cpu_op", 100, 11, "1", "5"),
      x_event("innermost", "cpu_op", 100, 11, "2", "1"),
      x_event("w", "cpu_op", 100, 12, "0", "3"),
      x_event("k1", "kernel", 0, 7, "0", "4"),
      x_event("k2", "kernel", 0, 7, "2", "4"),  // overlaps k1 without nesting
      x_event("k3", "kernel", 0, 3, "0", "1"),
  });
}

TEST(Layout, OrderAndNamesComeFromMetadata) {
  const trace::Trace t = read_json(sample());
  const auto list = testing::list_of({&t});
  const TimelineLayout L = TimelineLayout::build(list);
  ASSERT_EQ(L.processes().size(), 2u);
  EXPECT_EQ(L.processes()[0].name, "python (pid 100)");
  EXPECT_EQ(L.processes()[1].name, "GPU 0 (pid 0)");  // sort index 5000000: below the CPU
  EXPECT_TRUE(L.processes()[1].is_gpu);
  ASSERT_EQ(L.tracks().size(), 4u);
  EXPECT_EQ(L.tracks()[0].name, "worker");  // thread_sort_index 1 before 2
  EXPECT_EQ(L.tracks()[1].name, "main");
  EXPECT_EQ(L.tracks()[2].name, "stream 3");  // no name given: by tid
  EXPECT_EQ(L.tracks()[3].name, "stream 7");
  EXPECT_EQ(L.tracks()[1].row_count, 3u);  // three nesting depths
  // Stream 7: one nesting row and one overlap row; no slice dropped.
  const LayoutTrack& s7 = L.tracks()[3];
  ASSERT_EQ(s7.row_count, 2u);
  EXPECT_FALSE(L.rows()[s7.first_row].overlap_row);
  EXPECT_TRUE(L.rows()[s7.first_row + 1].overlap_row);
  EXPECT_EQ(L.slice_count(), t.slice_count());
  EXPECT_EQ(L.slice_count(), 7u);
}

TEST(Layout, YOffsetsStackWithoutOverlap) {
  const trace::Trace t = read_json(sample());
  const auto list = testing::list_of({&t});
  LayoutParams p;
  const TimelineLayout L = TimelineLayout::build(list, {}, p);
  float last_bottom = 0;
  for (const LayoutRow& r : L.rows()) {
    ASSERT_TRUE(r.visible);
    EXPECT_GE(r.y, last_bottom);
    EXPECT_FLOAT_EQ(r.height, p.row_px);
    last_bottom = r.y + r.height;
  }
  EXPECT_GT(L.total_height(), last_bottom);
  const float expected = 2 * (p.process_header_px + p.process_gap_px) +
                         4 * (p.track_header_px + p.track_gap_px) + 7 * (p.row_px + p.row_gap_px);
  EXPECT_FLOAT_EQ(L.total_height(), expected);
}

TEST(Layout, CollapseHidesRowsAndRecomputes) {
  const trace::Trace t = read_json(sample());
  const auto list = testing::list_of({&t});
  TimelineLayout L = TimelineLayout::build(list);
  const float full = L.total_height();
  const float gpu_y = L.processes()[1].y;
  L.toggle_track(1);  // "main": 3 rows
  EXPECT_TRUE(L.tracks()[1].collapsed);
  EXPECT_FLOAT_EQ(L.total_height(), full - 3 * (L.params().row_px + L.params().row_gap_px));
  EXPECT_FLOAT_EQ(L.processes()[1].y, gpu_y - 3 * (L.params().row_px + L.params().row_gap_px));
  for (std::uint32_t r = L.tracks()[1].first_row; r < L.tracks()[1].first_row + 3; ++r) {
    EXPECT_FALSE(L.rows()[r].visible);
  }
  L.set_process_collapsed(0, true);
  EXPECT_FALSE(L.tracks()[0].visible);
  EXPECT_FALSE(L.rows()[0].visible);
  L.collapse_all(false);
  L.toggle_track(1);
  EXPECT_FLOAT_EQ(L.total_height(), full);
  // Hidden rows are still in rows(): collapsing never loses a slice.
  EXPECT_EQ(L.slice_count(), t.slice_count());
}

TEST(Layout, VisibleRowsInAYBandAndRowAtY) {
  const trace::Trace t = read_json(sample());
  const auto list = testing::list_of({&t});
  const TimelineLayout L = TimelineLayout::build(list);
  const LayoutRow& r2 = L.rows()[2];
  const auto band = L.visible_rows_in(r2.y + 1, r2.y + 2);
  ASSERT_EQ(band.size(), 1u);
  EXPECT_EQ(band[0], 2u);
  EXPECT_EQ(L.row_at_y(r2.y + r2.height / 2), 2u);
  EXPECT_EQ(L.row_at_y(0.5f), trace::kNone);  // the process header
  EXPECT_EQ(L.row_at_y(L.total_height() + 10), trace::kNone);
  EXPECT_EQ(L.visible_rows_in(0, L.total_height()).size(), L.rows().size());
  EXPECT_EQ(L.layout_row_of(0, r2.track, r2.row), 2u);
}

TEST(Layout, TextTidsThatAreNamesAreNotPrefixedAgain) {
  // Old Kineto traces: "tid": "stream 7" and no thread_name.
  const trace::Trace t = read_json(R"({"traceEvents":[
    {"ph":"X","name":"k","cat":"kernel","pid":0,"tid":"stream 7","ts":0,"dur":1},
    {"ph":"X","name":"k","cat":"kernel","pid":0,"tid":"7","ts":0,"dur":1},
    {"ph":"X","name":"f","cat":"cpu_op","pid":1,"tid":"42","ts":0,"dur":1}]})");
  const auto list = testing::list_of({&t});
  const TimelineLayout L = TimelineLayout::build(list);
  std::vector<std::string> names;
  for (const LayoutTrack& k : L.tracks()) names.push_back(k.name);
  EXPECT_NE(std::find(names.begin(), names.end(), "stream 7"), names.end());  // the text tid
  EXPECT_EQ(std::count(names.begin(), names.end(), "stream 7"), 2);           // and the numeric one
  EXPECT_NE(std::find(names.begin(), names.end(), "thread 42"), names.end());
  for (const std::string& n : names) EXPECT_EQ(n.find("stream stream"), std::string::npos);
}

TEST(Layout, SeveralTracesKeepClashingPidsApart) {
  const trace::Trace a = read_json(sample());
  const trace::Trace b = read_json(sample());
  const auto list = testing::list_of({&a, &b});
  const std::vector<std::string> labels{"rank0.json", "rank1.json"};
  const TimelineLayout L = TimelineLayout::build(list, labels);
  ASSERT_EQ(L.processes().size(), 4u);
  EXPECT_EQ(L.processes()[0].name, "rank0.json: python (pid 100)");
  EXPECT_EQ(L.processes()[2].name, "rank1.json: python (pid 100)");
  EXPECT_EQ(L.processes()[2].trace, 1u);
  EXPECT_EQ(L.slice_count(), a.slice_count() + b.slice_count());
  // Each trace's rows point into that trace.
  for (const LayoutRow& r : L.rows()) {
    const trace::Trace& t = r.trace == 0 ? a : b;
    ASSERT_LT(r.track, t.tracks.size());
    ASSERT_LT(r.row, t.tracks[r.track].rows.size());
  }
  EXPECT_NE(L.layout_row_of(1, 0, 0), L.layout_row_of(0, 0, 0));
}

}  // namespace
}  // namespace flopline::viewer
