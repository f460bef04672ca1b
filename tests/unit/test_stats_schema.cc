// The stats schema (flopline/trace/stats_schema.h): its tables are consistent, every
// renderer of the command line (table, CSV, JSON) draws every column from them, a
// column added to the table alone reaches every output, and the groupings by GPU
// stream and device give the rows computed here from the events.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_test_util.h"
#include "file_test_util.h"
#include "flopline/trace/stats_csv.h"
#include "flopline/trace/stats_schema.h"
#include "reader_test_util.h"
#include "stats_output.h"

namespace flopline::trace {
namespace {

TEST(StatsSchema, EveryGroupingHasItsOwnWords) {
  std::set<std::string_view> words;
  for (const StatsGrouping& g : stats_groupings()) {
    EXPECT_FALSE(g.name.empty());
    EXPECT_FALSE(g.label.empty()) << g.name;
    EXPECT_TRUE(words.insert(g.name).second) << g.name << " is used twice";
    for (std::string_view a : g.aliases) EXPECT_TRUE(words.insert(a).second) << a;
    // Each word finds its entry, and the entry is the one stats_grouping() gives.
    EXPECT_EQ(find_stats_grouping(g.name).grouping, &g);
    for (std::string_view a : g.aliases) EXPECT_EQ(find_stats_grouping(a).grouping, &g) << a;
    EXPECT_EQ(&stats_grouping(g.by), &g) << g.name;
    // A grouping by track says how a track is named; the others must not.
    EXPECT_EQ(g.key == RowKey::kTrack, g.track_row != nullptr) << g.name;
    EXPECT_FALSE(default_category_choices(g).empty()) << g.name;
  }
  // Every value of GroupBy has exactly one entry.
  for (int by = 0; by <= static_cast<int>(GroupBy::kDevice); ++by) {
    int n = 0;
    for (const StatsGrouping& g : stats_groupings()) n += static_cast<int>(g.by) == by;
    EXPECT_EQ(n, 1) << by;
  }
}

TEST(StatsSchema, AnUnknownGroupingListsTheValidOnes) {
  const GroupingMatch m = find_stats_grouping(
      "str\x1b]0;x\a"
      "eam",
      "--by");
  EXPECT_EQ(m.grouping, nullptr);
  EXPECT_EQ(m.error.rfind("--by 'str?]0;x?eam' is not a grouping; use ", 0), 0u) << m.error;
  for (const StatsGrouping& g : stats_groupings())
    EXPECT_NE(m.error.find(g.name), std::string::npos) << g.name << ": " << m.error;
  for (char c : m.error) EXPECT_GE(static_cast<unsigned char>(c), 0x20) << m.error;
  // Words are exact: no case folding, no prefixes.
  EXPECT_EQ(find_stats_grouping("Name").grouping, nullptr);
  EXPECT_EQ(find_stats_grouping("").grouping, nullptr);
}

TEST(StatsSchema, DefaultCategoryChoicesAreParsed) {
  const auto name = default_category_choices(stats_grouping(GroupBy::kName));
  ASSERT_EQ(name.size(), 2u);
  EXPECT_EQ(name[0], std::vector<std::string>{"kernel"});
  EXPECT_TRUE(name[1].empty());  // every category
  const auto op = default_category_choices(stats_grouping(GroupBy::kOperator));
  ASSERT_EQ(op.size(), 2u);
  EXPECT_EQ(op[0], (std::vector<std::string>{"user_annotation", "cpu_op", "operator"}));
  EXPECT_EQ(DefaultCategories(GroupBy::kOperator).choices(), op);
}

TEST(StatsSchema, ColumnsHaveUniqueIdsAndTitles) {
  std::set<std::string_view> ids, titles, table_titles;
  std::set<int> people;
  int names = 0;
  for (const StatsColumn& c : stats_columns()) {
    EXPECT_TRUE(ids.insert(c.id).second) << c.id;
    EXPECT_NE(c.value, nullptr) << c.id;
    EXPECT_NE(c.outputs, 0) << c.id;
    names += c.is_name;
    if ((c.outputs & kStatsPeople) != 0) {
      EXPECT_TRUE(titles.insert(c.title).second) << c.title;
      EXPECT_TRUE(table_titles.insert(c.table_title).second) << c.table_title;
      EXPECT_TRUE(people.insert(c.people_order).second) << c.id << ": same people_order";
    }
  }
  EXPECT_EQ(names, 1);
}

// Downstream programs parse the CSV by this header (docs/STATS.md, "CSV schema"): a new
// column goes at its end, and none moves.
TEST(StatsSchema, MachineColumnsKeepTheDocumentedOrder) {
  EXPECT_EQ(stats_csv_header(),
            "name,count,total_ns,avg_ns,median_ns,min_ns,max_ns,std_ns,pct,flops,bytes,tflops,"
            "gbps,pct_peak,precision,flops_source,busy_ns,self_ns,device_total_ns,extent_ns,cpu_ns,"
            "intensity,counted_flops,declared_vs_counted_pct,window_busy_ns");
}

// A row with every value known, each different, so a cell in the wrong column shows.
StatsRow full_row() {
  StatsRow r;
  r.name = "gemm";
  r.count = 3;
  r.total_ns = 9000;
  r.avg_ns = 3000;
  r.median_ns = 2900;
  r.min_ns = 2000;
  r.max_ns = 4100;
  r.std_ns = 870;
  r.pct = 60;
  r.flops = 4.5e9;
  r.bytes = 7e6;
  r.tflops = 0.5;
  r.gbps = 777.7;
  r.pct_peak = 42.25;
  r.precision = "bf16";
  r.flops_source = "trace";
  r.busy_ns = 9000;
  r.self_ns = 8100;
  r.device_total_ns = 9500;
  r.extent_ns = 12000;
  r.cpu_ns = 15000;
  r.intensity = 642.9;
  r.counted_flops = 4.4e9;
  r.declared_vs_counted_pct = 2.3;
  r.window_busy_ns = 21000;
  return r;
}

cli::StatsReport report_of(std::vector<StatsRow> rows) {
  cli::StatsReport r;
  r.files = {"a.json"};
  r.result.total_ns = 0;
  for (const StatsRow& row : rows) r.result.total_ns += row.total_ns;
  r.result.slices_considered = rows.size();
  r.result.all_categories = true;
  r.result.rows = std::move(rows);
  r.rows_total = r.result.rows.size();
  return r;
}

struct Outputs {
  std::string table, csv, json;
};

Outputs render(const cli::StatsReport& r) {
  std::ostringstream t, c, j;
  cli::write_stats_table(r, t);
  cli::write_stats_csv(r, c);
  cli::write_stats_json(r, j);
  return {t.str(), c.str(), j.str()};
}

TEST(StatsSchema, EveryColumnRendersInEveryOutput) {
  const StatsRow row = full_row();
  const Outputs o = render(report_of({row}));
  const std::string csv_line = o.csv.substr(o.csv.find('\n') + 1);
  std::size_t i = 0;
  for (const StatsColumn* c : columns_for(kStatsMachine)) {
    const StatsValue v = c->value(row);
    EXPECT_TRUE(v.known()) << c->id;
    std::string cell;
    append_stats_csv_cell(cell, v);
    EXPECT_FALSE(cell.empty()) << c->id;
    // CSV: the cell is in its place; JSON: under its id, with the same digits.
    EXPECT_EQ(csv_line.find(cell, i), i) << c->id << "\n" << o.csv;
    i += cell.size() + 1;
    const std::string json_cell =
        v.kind == StatsValue::Kind::kText ? "\"" + std::string(v.text) + "\"" : cell;
    EXPECT_NE(o.json.find("\"" + std::string(c->id) + "\":" + json_cell), std::string::npos)
        << c->id << "\n"
        << o.json;
  }
  for (const StatsColumn* c : columns_for(kStatsTable))
    EXPECT_NE(o.table.find(c->table_title), std::string::npos) << c->id << "\n" << o.table;
}

// A column is one entry: added to the columns alone, it is in the table, CSV and JSON.
TEST(StatsSchema, AColumnAddedToTheTableAloneReachesEveryOutput) {
  std::vector<StatsColumn> columns(stats_columns().begin(), stats_columns().end());
  columns.push_back(
      {.id = "launch_gap_ns",
       .title = "Gap",
       .table_title = "Launch Gap (ns)",
       .unit = StatsUnit::kNs,
       .decimals = 0,
       .value = [](const StatsRow& r) { return StatsValue::integer(r.max_ns - r.min_ns); },
       .outputs = kStatsMachine | kStatsPeople,
       .people_order = 85});
  StatsRow row = full_row();
  cli::StatsReport r = report_of({row});
  r.columns = columns;
  const Outputs o = render(r);
  const std::int64_t gap = row.max_ns - row.min_ns;
  const std::string header = o.csv.substr(0, o.csv.find('\n'));
  EXPECT_EQ(header, stats_csv_header() + ",launch_gap_ns");
  const std::string line = o.csv.substr(header.size() + 1);
  EXPECT_EQ(line.substr(line.size() - std::to_string(gap).size() - 2),
            "," + std::to_string(gap) + "\n")
      << o.csv;
  EXPECT_NE(o.json.find("\"launch_gap_ns\":" + std::to_string(gap) + "}"), std::string::npos)
      << o.json;
  // The table puts it by its people_order: after StdDev, before Self.
  const auto at = o.table.find("Launch Gap (ns)");
  ASSERT_NE(at, std::string::npos) << o.table;
  EXPECT_LT(o.table.find("StdDev (ns)"), at);
  EXPECT_GT(o.table.find("Self (ns)"), at);
  EXPECT_NE(o.table.find(cli::with_thousands(gap)), std::string::npos) << o.table;
}

TEST(StatsSchema, PeopleColumnsWithoutAValueAreLeftOutOfTheTable) {
  StatsRow row = full_row();
  row.self_ns.reset();
  row.extent_ns.reset();
  row.intensity.reset();
  const Outputs o = render(report_of({row}));
  EXPECT_EQ(o.table.find("Self (ns)"), std::string::npos) << o.table;
  EXPECT_EQ(o.table.find("FLOP/B"), std::string::npos) << o.table;
  // The machines keep every column, empty.
  EXPECT_NE(o.json.find("\"self_ns\":null"), std::string::npos) << o.json;
}

// ---- which slices a table covers -----------------------------------------------------

// Two rows of one stream and a CPU thread: kernels at 100-200, 250-260 and 300-500;
// a copy at 150-170 on another stream; a cpu_op at 0-1000.
constexpr const char* kSelectTrace = R"({"traceEvents":[
{"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":0,"dur":1},
{"ph":"X","cat":"kernel","name":"a","pid":0,"tid":7,"ts":0.1,"dur":0.1},
{"ph":"X","cat":"Kernel","name":"b","pid":0,"tid":7,"ts":0.25,"dur":0.01},
{"ph":"X","cat":"kernel","name":"c","pid":0,"tid":7,"ts":0.3,"dur":0.2},
{"ph":"X","cat":"gpu_memcpy","name":"copy","pid":0,"tid":8,"ts":0.15,"dur":0.02}
]})";

std::multiset<std::string> selected(const Trace& t, const SliceSelection& sel) {
  std::multiset<std::string> names;
  for_each_selected_slice(t, sel,
                          [&](std::uint32_t k, std::uint32_t r, std::uint32_t i, const Slice& s) {
                            EXPECT_EQ(&t.tracks[k].rows[r][i], &s);
                            names.emplace(t.str(s.name));
                          });
  return names;
}

TEST(StatsSchema, SliceSelectionByCategoryAndRange) {
  const ReadResult rr = test::read_ok(kSelectTrace);
  const Trace& t = rr.trace;
  using Names = std::multiset<std::string>;
  EXPECT_EQ(selected(t, {}), (Names{"op", "a", "b", "c", "copy"}));
  SliceSelection kernels;
  kernels.categories = {"kernel"};  // case-insensitive: "Kernel" too
  EXPECT_EQ(selected(t, kernels), (Names{"a", "b", "c"}));
  // Start inside [150, 300): b only (a starts before, c at the end, excluded).
  SliceSelection starts = kernels;
  starts.range_begin = 150;
  starts.range_end = 300;
  EXPECT_EQ(selected(t, starts), (Names{"b"}));
  // Overlap: a (100-200) and b; c starts at the end.
  SliceSelection overlaps = starts;
  overlaps.overlap = true;
  EXPECT_EQ(selected(t, overlaps), (Names{"a", "b"}));
  // A slice that only touches the range is not in it.
  overlaps.range_begin = 200;
  overlaps.range_end = 250;
  EXPECT_EQ(selected(t, overlaps), Names{});
  overlaps.ignore_range = true;
  EXPECT_EQ(selected(t, overlaps), (Names{"a", "b", "c"}));
}

TEST(StatsSchema, StreamAndDeviceRowsNameTheTrack) {
  const ReadResult rr = test::read_ok(kSelectTrace);
  const Trace& t = rr.trace;
  std::set<std::string> streams, devices;
  int cpu = 0;
  for (std::uint32_t k = 0; k < t.tracks.size(); ++k) {
    const auto s = stream_row(t, k);
    const auto d = device_row(t, k);
    EXPECT_EQ(s.has_value(), d.has_value());
    if (!s) {
      ++cpu;
      continue;
    }
    streams.insert(*s);
    devices.insert(*d);
  }
  EXPECT_EQ(cpu, 1);
  EXPECT_EQ(streams, (std::set<std::string>{"GPU 0 stream 7", "GPU 0 stream 8"}));
  EXPECT_EQ(devices, std::set<std::string>{"GPU 0"});
  EXPECT_FALSE(stream_row(t, static_cast<std::uint32_t>(t.tracks.size())).has_value());
}

// ---- --by stream and --by device, end to end -----------------------------------------

struct Work {
  int device;
  int stream;
  const char* cat;
  std::int64_t start_ns, dur_ns;
};

// GPU work on two devices and three streams, a CPU op and a GPU annotation (neither is
// GPU work the groupings count).
const std::vector<Work> kWork = {
    {0, 7, "kernel", 1000, 2000},   {0, 7, "kernel", 4000, 500},  {0, 8, "gpu_memcpy", 1500, 300},
    {0, 8, "gpu_memset", 6000, 40}, {1, 7, "kernel", 2000, 7000},
};

std::string work_trace() {
  std::string s = R"({"traceEvents":[
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":100,"tid":1,"ts":0,"dur":20},
{"ph":"X","cat":"gpu_user_annotation","name":"mm","pid":0,"tid":7,"ts":1,"dur":9})";
  int i = 0;
  for (const Work& w : kWork) {
    s += ",\n{\"ph\":\"X\",\"cat\":\"" + std::string(w.cat) + "\",\"name\":\"k" +
         std::to_string(i++) + "\",\"pid\":" + std::to_string(w.device) +
         ",\"tid\":" + std::to_string(w.stream) + ",\"ts\":" + std::to_string(w.start_ns / 1000.0) +
         ",\"dur\":" + std::to_string(w.dur_ns / 1000.0) + "}";
  }
  return s + "]}";
}

// name -> (count, total ns) from a CSV's rows.
std::map<std::string, std::pair<std::int64_t, std::int64_t>> csv_rows(const std::string& csv) {
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> out;
  std::istringstream in(csv);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::istringstream l(line);
    std::string cell;
    while (std::getline(l, cell, ',')) cells.push_back(cell);
    out[cells.at(0)] = {std::stoll(cells.at(1)), std::stoll(cells.at(2))};
  }
  return out;
}

class StatsByTrack : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& text) {
    const std::string path = dir_.file(name);
    test::write_bytes(path, text);
    return path;
  }
  test::TempDir dir_;
};

TEST_F(StatsByTrack, ByStreamAndByDeviceSumEachTracksGpuWork) {
  const std::string f = write("work.json", work_trace());
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> by_stream, by_device;
  for (const Work& w : kWork) {
    const std::string gpu = "GPU " + std::to_string(w.device);
    for (auto* m : {&by_stream, &by_device}) {
      auto& e = (*m)[m == &by_stream ? gpu + " stream " + std::to_string(w.stream) : gpu];
      ++e.first;
      e.second += w.dur_ns;
    }
  }
  for (const char* by : {"stream", "device"}) {
    const auto r = cli::testing::run_flopline({"stats", f, "--by", by, "--csv"});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out.substr(0, r.out.find('\n')), stats_csv_header());
    EXPECT_EQ(csv_rows(r.out), std::string(by) == "stream" ? by_stream : by_device) << r.out;
  }
  const auto json = cli::testing::run_flopline({"stats", f, "--by", "stream", "--json"});
  EXPECT_NE(json.out.find("\"group_by\":\"stream\",\"categories\":[\"kernel\",\"gpu_memcpy\","
                          "\"gpu_memset\"]"),
            std::string::npos)
      << json.out;
  const auto table = cli::testing::run_flopline({"stats", f, "--by", "device"});
  EXPECT_NE(table.out.find("Grouped by: device;"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find(" GPU 1\n"), std::string::npos) << table.out;
}

TEST_F(StatsByTrack, CategoriesAndRangeApplyAsToEveryGrouping) {
  const std::string f = write("work.json", work_trace());
  // Only kernels that start in [1000, 3000) ns after the first event (ts 0): the
  // kernels at 1000 and 2000.
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> want;
  for (const Work& w : kWork) {
    if (std::string(w.cat) != "kernel" || w.start_ns < 1000 || w.start_ns >= 3000) continue;
    auto& e = want["GPU " + std::to_string(w.device)];
    ++e.first;
    e.second += w.dur_ns;
  }
  const auto r = cli::testing::run_flopline(
      {"stats", f, "--by", "device", "--cat", "kernel", "--range", "1000:3000", "--csv"});
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(csv_rows(r.out), want) << r.out;
}

TEST_F(StatsByTrack, AnUnknownGroupingIsAUsageErrorListingTheValidOnes) {
  const auto r = cli::testing::run_flopline({"stats", "x.json", "--by", "thread"});
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--by 'thread' is not a grouping; use " + stats_grouping_names()),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace flopline::trace
