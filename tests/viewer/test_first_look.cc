// What a first look at a trace asks of the viewer, GL-free: merged blocks say they are
// counts, the roofline fits its axes to the data and keeps its ceiling labels apart,
// the table's Name column follows the names, Kineto's bookkeeping tracks start folded,
// and operator rows take their GPU time from the work they launched.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/lod.h"
#include "core/op_table.h"
#include "core/roofline.h"
#include "core/table_columns.h"
#include "core/timeline_layout.h"
#include "viewer_test_util.h"

namespace flopline::viewer {
namespace {

using testing::read_json;
using testing::trace_json;
using testing::x_event;

TEST(FirstLook, MergedBlocksSayTheyAreCounts) {
  EXPECT_EQ(merged_block_label(758), "x758");
  EXPECT_EQ(merged_block_label(2), "x2");
}

TEST(FirstLook, LogTicksAreDecadesOrOneTwoFive) {
  EXPECT_EQ(log_ticks(0.01, 1000), (std::vector<double>{0.01, 0.1, 1, 10, 100, 1000}));
  // Less than two decades inside: 1-2-5 steps.
  EXPECT_EQ(log_ticks(31.6, 316), (std::vector<double>{50, 100, 200}));
  EXPECT_TRUE(log_ticks(0, 10).empty());
  EXPECT_TRUE(log_ticks(5, 5).empty());
}

Roofline h200_like() {
  Roofline r;
  r.bandwidth_gbps = 4800;
  r.compute = {{"fp32", 67}, {"tf32", 495}, {"bf16", 989}, {"fp16", 989}, {"fp8", 1979}};
  RooflinePoint a;
  a.name = "gemm";
  a.intensity = 300;
  a.tflops = 400;
  a.total_ns = 10;
  RooflinePoint b;
  b.name = "add";
  b.intensity = 0.08;
  b.tflops = 0.3;
  b.total_ns = 30;
  r.points = {a, b};
  return r;
}

TEST(FirstLook, RooflineAxesFitTheData) {
  const Roofline r = h200_like();
  const LogLogMap m = LogLogMap::fit(r, 0, 0, 800, 500);
  // Everything inside, with the margin and no more: the lowest intensity (the add at
  // 0.08) and the highest ridge (1979 TFLOP/s at 4.8 TB/s) set the x bounds.
  const double ridge = r.ridge_intensity(1979);
  EXPECT_NEAR(m.x_min, 0.08 / LogLogMap::kFitMargin, 1e-12);
  EXPECT_NEAR(m.x_max, ridge * LogLogMap::kFitMargin, 1e-9);
  EXPECT_NEAR(m.y_min, 0.3 / LogLogMap::kFitMargin, 1e-12);
  EXPECT_NEAR(m.y_max, 1979 * LogLogMap::kFitMargin, 1e-9);
  for (const RooflinePoint& p : r.points) {
    EXPECT_GT(m.x_of(p.intensity), 0.0f);
    EXPECT_LT(m.x_of(p.intensity), 800.0f);
  }
}

TEST(FirstLook, CeilingLabelsShareEqualPeaksAndNeverOverlap) {
  const Roofline r = h200_like();
  // A short plot squeezes the ceilings together.
  const LogLogMap m = LogLogMap::fit(r, 0, 0, 800, 120);
  const float line = 14;
  const std::vector<CeilingLabel> labels = ceiling_labels(r, m, line);
  ASSERT_EQ(labels.size(), 4u);  // bf16 and fp16 share 989
  EXPECT_EQ(labels[0].text, "fp8 1979 TFLOP/s");
  EXPECT_EQ(labels[1].text, "bf16, fp16 989 TFLOP/s");
  EXPECT_EQ(labels[3].text, "fp32 67 TFLOP/s");
  for (std::size_t i = 1; i < labels.size(); ++i) {
    EXPECT_GE(labels[i].y, labels[i - 1].y + line - 1e-3f) << labels[i].text;
  }
  // An uncrowded label sits just above its line.
  EXPECT_FLOAT_EQ(labels[0].y, labels[0].line_y - line);
}

TEST(FirstLook, RooflineLegendListsMostTimeFirst) {
  const Roofline r = h200_like();
  EXPECT_EQ(legend_points(r, 10), (std::vector<std::size_t>{1, 0}));
  EXPECT_EQ(legend_points(r, 1), (std::vector<std::size_t>{1}));
}

TEST(FirstLook, NameColumnTakesTheRoomItNeeds) {
  const float font = 13;
  EXPECT_FLOAT_EQ(name_column_width(500, 1600, font), 500);            // as wide as the name
  EXPECT_FLOAT_EQ(name_column_width(50, 1600, font), 12 * font);       // at least 12 characters
  EXPECT_FLOAT_EQ(name_column_width(1500, 1600, font), 0.55f * 1600);  // the numbers stay
  EXPECT_FLOAT_EQ(name_column_width(1500, 100, font), 12 * font);
}

TEST(FirstLook, KinetoBookkeepingTracksStartFolded) {
  const trace::Trace t = read_json(trace_json({
      x_event("aten::mm", "cpu_op", 418, 418, "10", "5"),
      R"({"name":"Iteration Start: PyTorch Profiler","ph":"i","s":"g","pid":"Traces","tid":"Trace PyTorch Profiler","ts":1})",
      x_event("Activity Buffer Request", "overhead", -1, 0, "2", "3"),
      R"j({"ph":"X","cat":"Trace","ts":0,"dur":30,"pid":"Spans","tid":"PyTorch Profiler","name":"PyTorch Profiler (0)"})j",
      R"({"name":"marker","ph":"i","s":"t","pid":418,"tid":7,"ts":3})",
      x_event("gemm", "kernel", 0, 7, "12", "4"),
  }));
  const auto list = testing::list_of({&t});
  const TimelineLayout L = TimelineLayout::build(list);
  int folded = 0, open = 0;
  for (const LayoutProcess& p : L.processes()) {
    const bool bookkeeping = p.name.find("Traces") != std::string::npos ||
                             p.name.find("pid -1") != std::string::npos ||
                             p.name.find("Spans") != std::string::npos;
    EXPECT_EQ(p.collapsed, bookkeeping) << p.name;
    (p.collapsed ? folded : open) += 1;
  }
  EXPECT_EQ(folded, 3);
  EXPECT_EQ(open, 2);
  // In the CPU process, the thread with only an instant is folded; the ops' is not.
  for (const LayoutTrack& k : L.tracks()) {
    if (L.processes()[k.layout_process].collapsed) continue;
    EXPECT_EQ(k.collapsed, k.slice_count == 0) << k.name;
  }
  // Folding hides rows, never drops slices.
  EXPECT_EQ(L.slice_count(), t.slice_count());
}

// cpu_ops launching kernels through ac2g flows: the op rows' time is GPU busy time.
std::string kineto_ops() {
  return trace_json({
      x_event("aten::mm", "cpu_op", 1, 1, "0", "10",
              R"({"Input type":["float","float"],"Input Dims":[[64,32],[32,16]]})"),
      x_event("cudaLaunchKernel", "cuda_runtime", 1, 1, "1", "2", R"({"correlation":5})"),
      R"({"ph":"s","id":5,"pid":1,"tid":1,"ts":1,"cat":"ac2g","name":"ac2g"})",
      x_event("gemm", "kernel", 0, 7, "20", "4", R"({"correlation":5})"),
      R"({"ph":"f","id":5,"pid":0,"tid":7,"ts":20,"cat":"ac2g","name":"ac2g","bp":"e"})",
  });
}

TEST(FirstLook, OperatorRowsUseTheWorkTheyLaunched) {
  trace::Trace t = read_json(kineto_ops());
  const auto list = testing::list_of({&t});
  // The index built while the flows exist, as the load job does before releasing them.
  const trace::OperatorIndex index = trace::OperatorIndex::build(t);
  t.flows.clear();
  const std::vector<const trace::OperatorIndex*> ops = {&index};
  const OpTable table = build_op_table(list, OpTableQuery{}, ops);
  ASSERT_EQ(table.rows().size(), 1u);
  const trace::StatsRow& mm = table.rows()[0].stats;
  EXPECT_EQ(mm.name, "aten::mm");
  EXPECT_EQ(mm.total_ns, 4000);  // the kernel's 4 us, not the op's 10 us on the CPU
  EXPECT_EQ(mm.self_ns, 4000);
  EXPECT_EQ(mm.cpu_ns, 10000);
  EXPECT_EQ(mm.flops, 2.0 * 64 * 16 * 32);
  EXPECT_EQ(table.rows()[0].precision, "fp32");
  // Without the index and without the flows, the "correlation" args still join them.
  const OpTable by_correlation = build_op_table(list, OpTableQuery{});
  EXPECT_EQ(by_correlation.rows()[0].stats.total_ns, 4000);
}

}  // namespace
}  // namespace flopline::viewer
