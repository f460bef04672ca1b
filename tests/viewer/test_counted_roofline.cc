// Counted FLOPs in the table and the roofline, on a real trace: a PyTorch training loop
// recorded with `flopline run --counters` on an H200 (tests/data/README.md), whose every
// kernel carries FLOPs and DRAM bytes from hardware counters.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "core/roofline.h"
#include "core/table_columns.h"
#include "core/viewport.h"
#include "flopline/trace/chrome_reader.h"
#include "flopline/trace/json_value.h"
#include "viewer_test_util.h"

namespace flopline::viewer {
namespace {

using testing::column;

const char* const kTrainLoop = FLOPLINE_SAMPLE_TRACES_DIR "/train_loop_h200_counters.json.gz";

trace::Trace read_train_loop() {
  trace::ReadOptions opt;
  opt.args = trace::ArgsMode::kKeep;
  trace::ReadResult r = trace::read_chrome_trace_file(kTrainLoop, opt);
  EXPECT_TRUE(r.ok()) << (r.error ? r.error->message() : "");
  return std::move(r.trace);
}

struct KernelSums {
  double flops = 0;
  double bytes = 0;
  std::int64_t dur = 0;
};

// Per kernel name, the sums of the kernels' own `flops by precision` and `dram bytes`
// args (not the model's metrics, from `flops` and `bytes`, that the table reads) and of
// their durations.
std::map<std::string, KernelSums> sums_from_args(const trace::Trace& t) {
  std::map<std::string, KernelSums> out;
  for (const trace::Track& k : t.tracks) {
    for (const auto& row : k.rows) {
      for (const trace::Slice& s : row) {
        if (t.str(s.cat) != "kernel") continue;
        const std::string_view args = t.args.json(s.args);
        KernelSums& sum = out[std::string(t.str(s.name))];
        if (auto by = trace::json_member(args, "flops by precision")) {
          for (const auto& [precision, v] : trace::json_members(*by))
            sum.flops += trace::json_number(v).value_or(0);
        }
        if (auto b = trace::json_member(args, "dram bytes"))
          sum.bytes += trace::json_number(*b).value_or(0);
        sum.dur += s.dur;
      }
    }
  }
  return out;
}

TEST(CountedRoofline, EveryKernelWithFlopsAndBytesIsAPoint) {
  const trace::Trace t = read_train_loop();
  const auto list = testing::list_of({&t});
  OpTableQuery q;
  q.by = trace::GroupBy::kName;
  const OpTable table = build_op_table(list, q);
  const Roofline r = build_roofline(list, table);

  const std::map<std::string, KernelSums> sums = sums_from_args(t);
  std::size_t expected = 0;
  for (const auto& [name, s] : sums) expected += s.flops > 0 && s.bytes > 0 && s.dur > 0;
  // 65 kernel names, 44 with FLOPs (fill and copy kernels count none); the same count by
  // a Python pass over the file's JSON (tests/viewer/app/test_first_look.py).
  EXPECT_EQ(sums.size(), 65u);
  EXPECT_EQ(expected, 44u);
  EXPECT_EQ(r.points.size(), expected);
  EXPECT_EQ(r.rows_without_bytes, 0u);
  EXPECT_EQ(r.device, "NVIDIA H200");
  for (const RooflinePoint& p : r.points) {
    SCOPED_TRACE(p.name);
    ASSERT_TRUE(sums.count(p.name));
    const KernelSums& s = sums.at(p.name);
    EXPECT_NEAR(p.intensity, s.flops / s.bytes, 1e-9 * p.intensity);
    EXPECT_NEAR(p.tflops, s.flops / static_cast<double>(s.dur) / 1e3, 1e-9 * p.tflops);
  }
}

TEST(CountedRoofline, TableShowsWhereEachRowsFlopsCameFrom) {
  const trace::Trace t = read_train_loop();
  const auto list = testing::list_of({&t});
  OpTableQuery q;
  q.by = trace::GroupBy::kName;
  OpTable table = build_op_table(list, q);
  EXPECT_EQ(column("flops_source").title, "FLOPs from");
  std::size_t with_flops = 0;
  for (const OpRow& row : table.rows()) {
    const std::string cell = op_cell_text(row, column("flops_source"));
    if (row.stats.flops) {
      ++with_flops;
      // Every kernel was counted: each row says where its FLOPs came from (the wording
      // is analysis.h's).
      EXPECT_FALSE(row.stats.flops_source.empty()) << row.stats.name;
      EXPECT_EQ(cell, row.stats.flops_source);
    } else {
      EXPECT_EQ(cell, "-");
    }
  }
  EXPECT_EQ(with_flops, table.rows().size());  // zero counted FLOPs are FLOPs too
  // Sorting by the source keeps unknowns last and the rest in order.
  table.sort(column("flops_source"), false);
  for (std::size_t i = 1; i < table.rows().size(); ++i)
    EXPECT_LE(table.rows()[i - 1].stats.flops_source, table.rows()[i].stats.flops_source);
}

TEST(TableCells, NumbersWithUnitsAndDashesForUnknowns) {
  OpRow row;
  row.stats.name = "gemm";
  row.stats.count = 3;
  row.stats.total_ns = 1'500'000;
  row.stats.flops = 1.37e11;
  row.stats.bytes = 2e6;
  row.stats.tflops = 91.33;
  row.stats.flops_source = "counters";
  row.stats.precision = row.precision = "bf16";
  EXPECT_EQ(op_cell_text(row, column("name")), "gemm");
  EXPECT_EQ(op_cell_text(row, column("count")), "3");
  EXPECT_EQ(op_cell_text(row, column("total_ns")), format_duration(1'500'000));
  EXPECT_EQ(op_cell_text(row, column("flops")), "137 G");
  EXPECT_EQ(op_cell_text(row, column("bytes")), "2.00 MB");
  EXPECT_EQ(op_cell_text(row, column("tflops")), "91.33");
  EXPECT_EQ(op_cell_text(row, column("gbps")), "-");
  EXPECT_EQ(op_cell_text(row, column("precision")), "bf16");
  EXPECT_EQ(op_cell_text(row, column("flops_source")), "counters");
  EXPECT_EQ(op_cell_text(row, column("self_ns")), "-");
}

}  // namespace
}  // namespace flopline::viewer

namespace flopline::viewer {
namespace {

// The table knows how much kernel time rests on which basis: this trace was recorded
// with signature inference, so its inferred kernels read as estimates.
TEST(CountedRoofline, TheTableSaysWhatTheCountedValuesRestOn) {
  const trace::Trace t = read_train_loop();
  const auto list = testing::list_of({&t});
  OpTableQuery q;
  q.by = trace::GroupBy::kName;
  EXPECT_FALSE(build_op_table(list, q).counted().has_value());  // only when asked
  q.counted_coverage = true;
  const OpTable table = build_op_table(list, q);
  ASSERT_TRUE(table.counted().has_value());
  const trace::CountedCoverage& c = *table.counted();
  EXPECT_GT(c.measured_ns, 0);
  EXPECT_GT(c.estimated_ns, 0);
  EXPECT_EQ(c.same_work_ns, 0);
  EXPECT_EQ(c.measured_ns + c.estimated_ns + c.not_counted_ns + c.none_ns + c.same_work_ns,
            c.kernel_ns);
  EXPECT_EQ(c.kernel_ns, trace::counted_coverage(t).kernel_ns);
}

}  // namespace
}  // namespace flopline::viewer
