// The FLOP/s table: a hand-computed trace, agreement with compute_stats on a real
// trace, range aggregation against a brute force, sorting, filtering, instances, CSV.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "core/op_table.h"
#include "viewer_test_util.h"

#include "corpus_dir.h"

namespace flopline::viewer {
namespace {

using testing::column;

using testing::read_json;
using testing::trace_json;
using testing::x_event;

// Peaks: bf16 200 TFLOP/s, fp32 100 TFLOP/s, 1 TB/s.
constexpr std::string_view kDevice =
    R"("deviceProperties":[{"id":0,"name":"Test GPU","peakFlops":{"fp32":1e14,"bf16":2e14},)"
    R"("peakBandwidthBytesPerSec":1e12}],)";

// Operators (gpu_user_annotation) on stream 7 with their kernels under them:
//   matmul  [0, 10) us   1e9 FLOPs 1e6 bytes bf16
//   softmax [50, 70) us  1e7 bytes
//   matmul  [100, 130) us 3e9 FLOPs 3e6 bytes bf16
std::string tiny() {
  return trace_json(
      {
          x_event("matmul", "gpu_user_annotation", 0, 7, "0", "10",
                  R"({"flops":1e9,"bytes":1e6,"precision":"bfloat16"})"),
          x_event("gemm_kernel", "kernel", 0, 7, "1", "8"),
          x_event("softmax", "gpu_user_annotation", 0, 7, "50", "20", R"({"bytes":1e7})"),
          x_event("softmax_kernel", "kernel", 0, 7, "51", "18"),
          x_event("matmul", "gpu_user_annotation", 0, 7, "100", "30",
                  R"({"flops":3e9,"bytes":3e6,"precision":"bf16"})"),
          x_event("gemm_kernel", "kernel", 0, 7, "101", "28"),
      },
      kDevice);
}

const OpRow* row_named(const OpTable& t, std::string_view name) {
  for (const OpRow& r : t.rows()) {
    if (r.stats.name == name) return &r;
  }
  return nullptr;
}

TEST(OpTable, HandComputedOperators) {
  const trace::Trace t = read_json(tiny());
  const auto list = testing::list_of({&t});
  const OpTable table = build_op_table(list, OpTableQuery{});
  EXPECT_TRUE(table.has_peaks());
  ASSERT_EQ(table.rows().size(), 2u);
  EXPECT_EQ(table.rows()[0].stats.name, "matmul");  // most time first
  const trace::StatsRow& m = table.rows()[0].stats;
  EXPECT_EQ(m.count, 2u);
  EXPECT_EQ(m.total_ns, 40'000);
  EXPECT_EQ(m.avg_ns, 20'000);
  EXPECT_EQ(m.median_ns, 20'000);
  EXPECT_EQ(m.min_ns, 10'000);
  EXPECT_EQ(m.max_ns, 30'000);
  EXPECT_NEAR(m.pct, 100.0 * 40 / 60, 1e-9);
  EXPECT_DOUBLE_EQ(*m.flops, 4e9);
  EXPECT_NEAR(*m.tflops, 100.0, 1e-9);  // 4e9 FLOPs in 40 us
  EXPECT_NEAR(*m.gbps, 100.0, 1e-9);    // 4e6 bytes in 40 us
  // Attainable: max(1e9 / 2e14, 1e6 / 1e12) = 5 us and 15 us, of 40 us taken.
  EXPECT_NEAR(*m.pct_peak, 50.0, 1e-9);
  EXPECT_EQ(table.rows()[0].precision, "bf16");
  const OpRow* s = row_named(table, "softmax");
  ASSERT_NE(s, nullptr);
  EXPECT_FALSE(s->stats.flops);
  EXPECT_NEAR(*s->stats.gbps, 500.0, 1e-9);     // 1e7 bytes in 20 us
  EXPECT_NEAR(*s->stats.pct_peak, 50.0, 1e-9);  // 10 us at 1 TB/s, of 20 us
  EXPECT_EQ(s->precision, "");
  EXPECT_EQ(table.total_ns(), 60'000);
}

TEST(OpTable, KernelsByName) {
  const trace::Trace t = read_json(tiny());
  const auto list = testing::list_of({&t});
  OpTableQuery q;
  q.by = trace::GroupBy::kName;
  const OpTable table = build_op_table(list, q);
  ASSERT_EQ(table.rows().size(), 2u);
  EXPECT_EQ(table.rows()[0].stats.name, "gemm_kernel");
  EXPECT_EQ(table.rows()[0].stats.total_ns, 36'000);
  EXPECT_FALSE(table.has_peaks() && table.rows()[0].stats.pct_peak);
}

TEST(OpTable, RangeOverlapClippedAndStartInside) {
  const trace::Trace t = read_json(tiny());
  const auto list = testing::list_of({&t});
  OpTableQuery q;
  q.range = TimeRange{5'000, 60'000};
  const OpTable clipped = build_op_table(list, q);
  const OpRow* m = row_named(clipped, "matmul");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->stats.count, 1u);
  EXPECT_EQ(m->stats.total_ns, 5'000);         // [5, 10) us of [0, 10)
  EXPECT_DOUBLE_EQ(*m->stats.flops, 5e8);      // half the FLOPs
  EXPECT_NEAR(*m->stats.tflops, 100.0, 1e-9);  // the same rate
  EXPECT_NEAR(*m->stats.pct_peak, 50.0, 1e-9);
  const OpRow* s = row_named(clipped, "softmax");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->stats.total_ns, 10'000);  // [50, 60) of [50, 70)
  EXPECT_DOUBLE_EQ(*s->stats.bytes, 5e6);

  q.range_rule = RangeRule::kStartInside;
  const OpTable inside = build_op_table(list, q);
  ASSERT_EQ(inside.rows().size(), 1u);  // only softmax starts in [5, 60)
  EXPECT_EQ(inside.rows()[0].stats.name, "softmax");
  EXPECT_EQ(inside.rows()[0].stats.total_ns, 20'000);  // whole
}

// A random trace: nested and overlapping slices of a few names on a few threads.
trace::Trace random_trace(std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::string> ev;
  const char* names[] = {"a", "b", "c", "d"};
  for (int i = 0; i < 3000; ++i) {
    const int tid = 1 + static_cast<int>(rng() % 3);
    const int ts = static_cast<int>(rng() % 100000);
    const int dur = static_cast<int>(rng() % 2000);
    ev.push_back(x_event(names[rng() % 4], "cpu_op", 1, tid,
                         std::to_string(ts) + "." + std::to_string(rng() % 1000),
                         std::to_string(dur) + "." + std::to_string(rng() % 1000)));
  }
  return read_json(trace_json(ev));
}

TEST(OpTable, RangeAggregationMatchesABruteForce) {
  const trace::Trace t = random_trace(5);
  const auto list = testing::list_of({&t});
  std::mt19937 rng(9);
  for (int round = 0; round < 20; ++round) {
    const std::int64_t a = static_cast<std::int64_t>(rng() % 100'000'000);
    const std::int64_t b = a + static_cast<std::int64_t>(rng() % 20'000'000);
    OpTableQuery q;
    q.by = trace::GroupBy::kName;
    q.range = TimeRange{a, b};
    const OpTable table = build_op_table(list, q);
    // Brute force over every slice of every row, with no use of row order.
    std::map<std::string, std::vector<std::int64_t>> want;
    for (const trace::Track& k : t.tracks) {
      for (const auto& row : k.rows) {
        for (const trace::Slice& s : row) {
          const std::int64_t lo = std::max(s.start, a);
          const std::int64_t hi = std::min(s.end(), b);
          const bool overlaps = s.dur > 0 ? (hi > lo) : (s.start >= a && s.start < b);
          if (overlaps) want[std::string(t.str(s.name))].push_back(hi - lo);
        }
      }
    }
    ASSERT_EQ(table.rows().size(), want.size()) << round;
    for (const OpRow& r : table.rows()) {
      auto& d = want[r.stats.name];
      std::sort(d.begin(), d.end());
      std::int64_t total = 0;
      for (std::int64_t x : d) total += x;
      EXPECT_EQ(r.stats.count, d.size()) << r.stats.name;
      EXPECT_EQ(r.stats.total_ns, total) << r.stats.name;
      EXPECT_EQ(r.stats.min_ns, d.front());
      EXPECT_EQ(r.stats.max_ns, d.back());
    }
  }
}

TEST(OpTable, AgreesWithComputeStatsOnACorpusTrace) {
  FLOPLINE_SKIP_WITHOUT_CORPUS();
  trace::ReadResult r = trace::read_chrome_trace_file(std::string(FLOPLINE_CORPUS_DIR) +
                                                      "/hta__simple_add_a100_kineto.json.gz");
  ASSERT_TRUE(r.ok());
  const auto list = testing::list_of({&r.trace});
  for (trace::GroupBy by :
       {trace::GroupBy::kName, trace::GroupBy::kOperator, trace::GroupBy::kCategory}) {
    OpTableQuery q;
    q.by = by;
    const OpTable table = build_op_table(list, q);
    trace::StatsQuery sq;
    sq.by = by;
    const trace::StatsResult want = trace::compute_stats(r.trace, sq);
    ASSERT_EQ(table.rows().size(), want.rows.size());
    ASSERT_GT(want.rows.size(), 0u);
    for (std::size_t i = 0; i < want.rows.size(); ++i) {
      const trace::StatsRow& a = table.rows()[i].stats;
      const trace::StatsRow& b = want.rows[i];
      EXPECT_EQ(a.name, b.name);
      EXPECT_EQ(a.count, b.count);
      EXPECT_EQ(a.total_ns, b.total_ns);
      EXPECT_EQ(a.median_ns, b.median_ns);
      EXPECT_EQ(a.std_ns, b.std_ns);
      EXPECT_DOUBLE_EQ(a.pct, b.pct);
      EXPECT_EQ(a.flops, b.flops);
      EXPECT_EQ(a.gbps, b.gbps);
    }
    EXPECT_EQ(table.total_ns(), want.total_ns);
  }
}

TEST(OpTable, SortByAnyColumnUnknownLast) {
  const trace::Trace t = read_json(tiny());
  const auto list = testing::list_of({&t});
  OpTable table = build_op_table(list, OpTableQuery{});
  table.sort(column("name"), false);
  EXPECT_EQ(table.rows()[0].stats.name, "matmul");
  table.sort(column("name"), true);
  EXPECT_EQ(table.rows()[0].stats.name, "softmax");
  table.sort(column("gbps"), true);
  EXPECT_EQ(table.rows()[0].stats.name, "softmax");  // 500 GB/s > 100
  table.sort(column("tflops"), false);
  EXPECT_EQ(table.rows()[0].stats.name, "matmul");  // softmax has none: last
  table.sort(column("tflops"), true);
  EXPECT_EQ(table.rows()[0].stats.name, "matmul");  // still last when descending
  table.sort(column("max_ns"), false);
  EXPECT_EQ(table.rows()[0].stats.name, "softmax");  // 20 us < 30 us
  EXPECT_EQ(table.sort_column(), &column("max_ns"));
  EXPECT_FALSE(table.sort_descending());
}

TEST(OpTable, FilterInstancesAndLongest) {
  const trace::Trace t = read_json(tiny());
  const auto list = testing::list_of({&t});
  const OpTable table = build_op_table(list, OpTableQuery{});
  EXPECT_EQ(table.filtered("").size(), 2u);
  const auto f = table.filtered("SOFT");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(table.rows()[f[0]].stats.name, "softmax");
  const auto inst = row_instances(list, OpTableQuery{}, "matmul");
  ASSERT_EQ(inst.size(), 2u);
  EXPECT_EQ(slice_of(list, inst[0]).start, 0);
  EXPECT_EQ(slice_of(list, inst[1]).start, 100'000);
  const SliceHandle longest = longest_instance(list, inst);
  EXPECT_EQ(slice_of(list, longest).dur, 30'000);
  EXPECT_TRUE(row_instances(list, OpTableQuery{}, "no such op").empty());
  EXPECT_FALSE(longest_instance(list, {}).valid());
}

TEST(OpTable, CsvHasTheStatsColumnsAndEscapes) {
  const trace::Trace t =
      read_json(trace_json({x_event("add, \\\"fast\\\"", "kernel", 0, 7, "0", "1"),
                            x_event("plain", "kernel", 0, 7, "2", "3")}));
  const auto list = testing::list_of({&t});
  OpTableQuery q;
  q.by = trace::GroupBy::kName;
  const OpTable table = build_op_table(list, q);
  const std::string csv = op_table_csv(table);
  // `flopline stats --csv`'s header and columns (docs/STATS.md).
  EXPECT_EQ(csv,
            "name,count,total_ns,avg_ns,median_ns,min_ns,max_ns,std_ns,pct,flops,bytes,tflops,gbps,"
            "pct_peak,precision,flops_source,busy_ns,self_ns,device_total_ns,extent_ns,cpu_ns,"
            "intensity,counted_flops,declared_vs_counted_pct,window_busy_ns\n"
            "plain,1,3000,3000,3000,3000,3000,0,75,,,,,,,,,,,,,,,,\n"
            "\"add, \"\"fast\"\"\",1,1000,1000,1000,1000,1000,0,25,,,,,,,,,,,,,,,,\n");
  // A selection of rows, in the order given.
  EXPECT_EQ(op_table_csv(table, {1}).substr(op_table_csv(table, {1}).find('\n') + 1),
            "\"add, \"\"fast\"\"\",1,1000,1000,1000,1000,1000,0,25,,,,,,,,,,,,,,,,\n");
}

TEST(OpTable, CsvOfFlopColumns) {
  const trace::Trace t = read_json(tiny());
  const auto list = testing::list_of({&t});
  const std::string csv = op_table_csv(build_op_table(list, OpTableQuery{}));
  EXPECT_NE(csv.find("\nmatmul,2,40000,20000,20000,10000,30000,10000,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",4000000000,4000000,100,100,50,bf16,trace,,,,,,1000,,,\n"), std::string::npos)
      << csv;
}

}  // namespace
}  // namespace flopline::viewer
