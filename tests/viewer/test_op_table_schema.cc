// The viewer's FLOP/s table as a renderer of the stats schema (stats_schema.h): it
// shows the schema's columns, a column added to the schema alone gets its cells, and
// the groupings by GPU stream and device give the rows and instances computed here.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/op_table.h"
#include "core/table_columns.h"
#include "core/viewport.h"
#include "viewer_test_util.h"

namespace flopline::viewer {
namespace {

using testing::column;

TEST(OpTableSchema, ShowsEveryViewerColumnNameFirst) {
  const std::vector<const trace::StatsColumn*> cols = viewer_columns();
  ASSERT_FALSE(cols.empty());
  EXPECT_TRUE(cols.front()->is_name);
  std::size_t want = 0;
  for (const trace::StatsColumn& c : trace::stats_columns()) {
    if ((c.outputs & trace::kStatsViewer) == 0) continue;
    ++want;
    EXPECT_NE(std::find(cols.begin(), cols.end(), &c), cols.end()) << c.id;
  }
  EXPECT_EQ(cols.size(), want);
}

TEST(OpTableSchema, EveryColumnHasACell) {
  OpRow row;
  row.stats.name = "gemm";
  row.stats.count = 2;
  row.stats.total_ns = row.stats.avg_ns = row.stats.median_ns = 2'000;
  row.stats.min_ns = row.stats.max_ns = row.stats.std_ns = 1'000;
  row.stats.pct = 12.5;
  row.stats.flops = row.stats.bytes = row.stats.tflops = row.stats.gbps = 4e9;
  row.stats.pct_peak = row.stats.intensity = row.stats.counted_flops = 50;
  row.stats.declared_vs_counted_pct = 1;
  row.stats.precision = "bf16";
  row.stats.flops_source = "trace";
  row.stats.busy_ns = row.stats.self_ns = row.stats.device_total_ns = row.stats.extent_ns =
      row.stats.cpu_ns = row.stats.window_busy_ns = 3'000;
  for (const trace::StatsColumn& c : trace::stats_columns()) {
    const std::string cell = op_cell_text(row, c);
    EXPECT_FALSE(cell.empty()) << c.id;
    EXPECT_NE(cell, "-") << c.id;
  }
  // Durations carry their unit; a percent its column's decimals.
  EXPECT_EQ(op_cell_text(row, column("self_ns")), format_duration(3'000));
  EXPECT_EQ(op_cell_text(row, column("pct")), "12.5");
  // Declared FLOPs the counters disagree with are marked as in `flopline stats`.
  row.stats.declared_vs_counted_pct = 2 * trace::kFlopsDisagreementPct;
  EXPECT_EQ(op_cell_text(row, column("flops_source")), "trace!");
}

TEST(OpTableSchema, AColumnAddedToTheSchemaAloneHasItsCellsAndSort) {
  std::vector<trace::StatsColumn> all(trace::stats_columns().begin(), trace::stats_columns().end());
  all.push_back(
      {.id = "spread_ns",
       .title = "Spread",
       .table_title = "Spread (ns)",
       .unit = trace::StatsUnit::kNs,
       .decimals = 0,
       .value =
           [](const trace::StatsRow& r) { return trace::StatsValue::integer(r.max_ns - r.min_ns); },
       .outputs = trace::kStatsViewer,
       .people_order = 75});
  const std::vector<const trace::StatsColumn*> cols = viewer_columns(all);
  const trace::StatsColumn& spread = all.back();
  ASSERT_NE(std::find(cols.begin(), cols.end(), &spread), cols.end());

  // Rows a (spread 10 us) and b (spread 1 us).
  const trace::Trace t =
      testing::read_json(testing::trace_json({testing::x_event("a", "kernel", 0, 7, "0", "1"),
                                              testing::x_event("a", "kernel", 0, 7, "5", "11"),
                                              testing::x_event("b", "kernel", 0, 7, "20", "2"),
                                              testing::x_event("b", "kernel", 0, 7, "30", "3")}));
  const auto list = testing::list_of({&t});
  OpTableQuery q;
  q.by = trace::GroupBy::kName;
  OpTable table = build_op_table(list, q);
  ASSERT_EQ(table.rows().size(), 2u);
  std::map<std::string, std::string> cell;
  for (const OpRow& r : table.rows()) cell[r.stats.name] = op_cell_text(r, spread);
  EXPECT_EQ(cell["a"], format_duration(10'000));
  EXPECT_EQ(cell["b"], format_duration(1'000));
  table.sort(spread, false);
  EXPECT_EQ(table.rows().front().stats.name, "b");
  table.sort(spread, true);
  EXPECT_EQ(table.rows().front().stats.name, "a");
}

struct Work {
  int device, stream;
  const char* cat;
  int start_us, dur_us;
};

// GPU work on two devices and three streams, and a CPU op that is not GPU work.
const std::vector<Work> kWork = {
    {0, 7, "kernel", 10, 20},    {0, 7, "kernel", 40, 5},  {0, 8, "gpu_memcpy", 15, 3},
    {0, 8, "gpu_memset", 60, 1}, {1, 7, "kernel", 20, 70},
};

trace::Trace work_trace() {
  std::vector<std::string> events = {testing::x_event("aten::mm", "cpu_op", 100, 1, "0", "200")};
  int i = 0;
  for (const Work& w : kWork) {
    events.push_back(testing::x_event("k" + std::to_string(i++), w.cat, w.device, w.stream,
                                      std::to_string(w.start_us), std::to_string(w.dur_us)));
  }
  return testing::read_json(testing::trace_json(events));
}

std::string stream_of(const Work& w) {
  return "GPU " + std::to_string(w.device) + " stream " + std::to_string(w.stream);
}
std::string device_of(const Work& w) {
  return "GPU " + std::to_string(w.device);
}

TEST(OpTableSchema, ByStreamAndByDeviceRowsAndInstances) {
  const trace::Trace t = work_trace();
  const auto list = testing::list_of({&t});
  for (const trace::GroupBy by : {trace::GroupBy::kStream, trace::GroupBy::kDevice}) {
    auto key = by == trace::GroupBy::kStream ? stream_of : device_of;
    std::map<std::string, std::pair<std::uint64_t, std::int64_t>> want;
    for (const Work& w : kWork) {
      ++want[key(w)].first;
      want[key(w)].second += std::int64_t{w.dur_us} * 1000;
    }
    OpTableQuery q;
    q.by = by;
    const OpTable table = build_op_table(list, q);
    std::map<std::string, std::pair<std::uint64_t, std::int64_t>> got;
    for (const OpRow& r : table.rows()) got[r.stats.name] = {r.stats.count, r.stats.total_ns};
    EXPECT_EQ(got, want) << trace::stats_grouping(by).name;
    // A row's instances are its track's slices, sorted by start.
    for (const auto& [row, counts] : want) {
      const std::vector<SliceHandle> inst = row_instances(list, q, row);
      EXPECT_EQ(inst.size(), counts.first) << row;
      std::int64_t prev = INT64_MIN, total = 0;
      for (const SliceHandle& h : inst) {
        const trace::Slice& s = slice_of(list, h);
        EXPECT_GE(s.start, prev);
        prev = s.start;
        total += s.dur;
      }
      EXPECT_EQ(total, counts.second) << row;
    }
  }
}

TEST(OpTableSchema, ByStreamWithARangeCountsTheClippedWork) {
  const trace::Trace t = work_trace();
  const auto list = testing::list_of({&t});
  // [12 us, 42 us) after the trace's first event (0): each work item clipped to it.
  const std::int64_t lo = 12'000, hi = 42'000;
  std::map<std::string, std::int64_t> want;
  for (const Work& w : kWork) {
    const std::int64_t b = std::max<std::int64_t>(lo, std::int64_t{w.start_us} * 1000);
    const std::int64_t e = std::min<std::int64_t>(hi, std::int64_t{w.start_us + w.dur_us} * 1000);
    if (e > b) want[stream_of(w)] += e - b;
  }
  OpTableQuery q;
  q.by = trace::GroupBy::kStream;
  q.range = TimeRange{t.time_bounds().first + lo, t.time_bounds().first + hi};
  const OpTable table = build_op_table(list, q);
  std::map<std::string, std::int64_t> got;
  for (const OpRow& r : table.rows()) got[r.stats.name] = r.stats.total_ns;
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace flopline::viewer
