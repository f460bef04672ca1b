// Counter metric choice from real chips' metric lists (tests/data/counters, listed
// through CUPTI's profiler host API) and the evaluation of counter values into FLOPs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "flopline/capture/counters.h"

namespace flopline::capture {
namespace {

std::vector<std::string> chip_metrics(const std::string& chip) {
  std::ifstream in(std::string(FLOPLINE_TEST_DATA_DIR) + "/counters/" + chip + ".txt");
  EXPECT_TRUE(in) << chip;
  std::vector<std::string> names;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) names.push_back(line);
  }
  return names;
}

std::set<std::string> names_of(const CounterPlan& plan) {
  const auto v = plan.names();
  return {v.begin(), v.end()};
}

const CounterMetric* find(const CounterPlan& plan, const std::string& name) {
  for (const CounterMetric& m : plan.metrics) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

TEST(CounterPlan, HopperCountsEachInstructionPath) {
  const CounterPlan plan = plan_counter_metrics(chip_metrics("GH100"));
  const std::set<std::string> n = names_of(plan);
  for (const char* want : {
           "sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32.sum",
           "sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32.sum",
           "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum",
           "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32.sum",
           "sm__ops_path_tensor_op_hgmma_src_fp16.sum",
           // hmma lists fp16 with and without a destination type: the typed ones partition it.
           "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp16.sum",
           "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32.sum",
           // No per-path metric for these: the per-type totals.
           "sm__ops_path_tensor_src_fp64.sum",
           "sm__ops_path_tensor_src_fp8.sum",
           "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
           "sm__sass_thread_inst_executed_op_dfma_pred_on.sum",
           "sm__sass_thread_inst_executed_op_hadd_pred_on.sum",
           "dram__bytes_read.sum",
           // Writes: the kernel's stores, not the DRAM write counter (replay write-backs).
           "lts__t_sectors_srcunit_tex_op_write.sum",
       }) {
    EXPECT_TRUE(n.count(want)) << want;
  }
  // Never a total next to its own parts: that would count the same operations twice.
  EXPECT_FALSE(n.count("sm__ops_path_tensor_src_tf32_dst_fp32.sum"));
  EXPECT_FALSE(n.count("sm__ops_path_tensor_src_bf16_dst_fp32.sum"));
  EXPECT_FALSE(n.count("sm__ops_path_tensor_op_hmma_src_fp16.sum"));
  EXPECT_FALSE(n.count("dram__bytes_write.sum"));
  EXPECT_FALSE(n.count("lts__t_sectors_op_write.sum"));  // the fallback, when tex is not listed
  EXPECT_TRUE(plan.missing.empty()) << plan.missing.front();
  const CounterMetric* stores = find(plan, "lts__t_sectors_srcunit_tex_op_write.sum");
  ASSERT_NE(stores, nullptr);
  EXPECT_EQ(stores->use, CounterUse::kDramWrite);
  EXPECT_EQ(stores->per_count, 32);  // bytes per sector
  const CounterMetric* fma = find(plan, "sm__sass_thread_inst_executed_op_ffma_pred_on.sum");
  ASSERT_NE(fma, nullptr);
  EXPECT_EQ(fma->per_count, 2);
  EXPECT_EQ(fma->precision, "fp32");
  const CounterMetric* hgmma = find(plan, "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum");
  ASSERT_NE(hgmma, nullptr);
  EXPECT_EQ(hgmma->path, "hgmma");
  EXPECT_EQ(hgmma->precision, "bf16");
  EXPECT_EQ(hgmma->per_count, 1);
}

TEST(CounterPlan, AmpereFallsBackToPerTypeTotals) {
  const CounterPlan plan = plan_counter_metrics(chip_metrics("GA100"));
  const std::set<std::string> n = names_of(plan);
  EXPECT_TRUE(n.count("sm__ops_path_tensor_src_tf32_dst_fp32.sum"));
  EXPECT_TRUE(n.count("sm__ops_path_tensor_src_bf16_dst_fp32.sum"));
  EXPECT_TRUE(n.count("sm__ops_path_tensor_src_fp16_dst_fp16.sum"));
  EXPECT_TRUE(n.count("sm__ops_path_tensor_src_fp16_dst_fp32.sum"));
  EXPECT_EQ(find(plan, "sm__ops_path_tensor_src_tf32_dst_fp32.sum")->path, "tensor");
  for (const std::string& name : n) EXPECT_EQ(name.find("hgmma"), std::string::npos) << name;
}

TEST(CounterPlan, BlackwellCountsItsNewPathsAndSharedFp8Path) {
  const CounterPlan plan = plan_counter_metrics(chip_metrics("GB100"));
  const CounterMetric* utc = find(plan, "sm__ops_path_tensor_op_utchmma_src_bf16_dst_fp32.sum");
  ASSERT_NE(utc, nullptr);
  EXPECT_EQ(utc->precision, "bf16");
  const CounterMetric* fp8 =
      find(plan, "sm__ops_path_tensor_op_utcqmma_src_fp4_fp6_fp8_dst_fp32.sum");
  ASSERT_NE(fp8, nullptr);
  EXPECT_EQ(fp8->precision, "fp8");
  // "_realtime" twins count the same operations: never taken.
  for (const std::string& name : plan.names())
    EXPECT_EQ(name.find("_realtime"), std::string::npos) << name;
}

TEST(CounterPlan, NamesWhatTheChipCannotCount) {
  const std::vector<std::string> few = {"sm__ops_path_tensor_src_bf16_dst_fp32",
                                        "sm__sass_thread_inst_executed_op_ffma_pred_on",
                                        "dram__sectors_read"};
  const CounterPlan plan = plan_counter_metrics(few);
  const std::set<std::string> missing(plan.missing.begin(), plan.missing.end());
  EXPECT_TRUE(missing.count("tensor tf32 ops"));
  EXPECT_TRUE(missing.count("fp32 SIMT add"));
  EXPECT_TRUE(missing.count("DRAM bytes written (L2 stores)"));
  EXPECT_FALSE(missing.count("tensor bf16 ops"));
  const CounterMetric* sectors = find(plan, "dram__sectors_read.sum");
  ASSERT_NE(sectors, nullptr);
  EXPECT_EQ(sectors->per_count, 32);
}

TEST(CounterPlan, WritesFallBackToEveryL2Store) {
  const std::vector<std::string> chip = {"dram__bytes_read", "dram__bytes_write",
                                         "lts__t_sectors_op_write"};
  const CounterPlan plan = plan_counter_metrics(chip);
  const std::set<std::string> missing(plan.missing.begin(), plan.missing.end());
  EXPECT_FALSE(missing.count("DRAM bytes written (L2 stores)"));
  EXPECT_FALSE(missing.count("DRAM bytes read"));
  const CounterMetric* stores = find(plan, "lts__t_sectors_op_write.sum");
  ASSERT_NE(stores, nullptr);
  EXPECT_EQ(stores->use, CounterUse::kDramWrite);
  EXPECT_EQ(find(plan, "dram__bytes_write.sum"), nullptr);
}

// A stand-in for the profiler's pass count: each metric lives in a named group, and a
// set needs as many passes as groups it touches.
std::optional<std::size_t> grouped_passes(const std::vector<std::string>& names) {
  std::set<std::string> groups;
  for (const std::string& n : names) {
    if (n.find("imma") != std::string::npos && n.find("igmma") == std::string::npos) {
      groups.insert("imma");
    } else if (n.find("tensor") != std::string::npos) {
      groups.insert("tensor");
    } else {
      groups.insert("other");
    }
  }
  return groups.size();
}

TEST(CounterPlan, OptionalMetricsThatAddAPassAreLeftOut) {
  const CounterPlan plan = plan_counter_metrics(chip_metrics("GH100"), grouped_passes);
  EXPECT_EQ(plan.passes, 2u);
  const std::set<std::string> n = names_of(plan);
  EXPECT_FALSE(n.count("sm__ops_path_tensor_op_imma_src_int8.sum"));
  EXPECT_TRUE(n.count("sm__ops_path_tensor_op_igmma_src_int8.sum"));  // no pass of its own
  EXPECT_TRUE(n.count("sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_on.sum"));
  const std::set<std::string> left(plan.left_out.begin(), plan.left_out.end());
  EXPECT_TRUE(left.count("sm__ops_path_tensor_op_imma_src_int8.sum"));
  // Required metrics are never left out, whatever they cost.
  EXPECT_TRUE(n.count("sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32.sum"));
  EXPECT_TRUE(n.count("lts__t_sectors_srcunit_tex_op_write.sum"));
}

std::vector<double> values_for(const CounterPlan& plan, const std::map<std::string, double>& v) {
  std::vector<double> out(plan.metrics.size(), 0);
  for (std::size_t i = 0; i < plan.metrics.size(); ++i) {
    const auto it = v.find(plan.metrics[i].name);
    if (it != v.end()) out[i] = it->second;
  }
  return out;
}

// Values read on an H200 from cuBLAS's tf32 sgemm at 2048^3 (counters_probe); the stores
// are its 2048^2 fp32 outputs, 16 MiB, in 32-byte sectors.
TEST(CountedWork, TensorMatmulCountsTwoMnk) {
  const CounterPlan plan = plan_counter_metrics(chip_metrics("GH100"));
  const CountedWork w = evaluate_counters(
      plan, values_for(plan, {{"sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32.sum", 17179869184.0},
                              {"sm__sass_thread_inst_executed_op_fmul_pred_on.sum", 147456.0},
                              {"sm__sass_thread_inst_executed_op_ffma_pred_on.sum", 4194304.0},
                              {"dram__bytes_read.sum", 33632000.0},
                              {"lts__t_sectors_srcunit_tex_op_write.sum", 524288.0}}));
  EXPECT_DOUBLE_EQ(w.tensor_flops, 2.0 * 2048 * 2048 * 2048);
  EXPECT_DOUBLE_EQ(w.flops, 2.0 * 2048 * 2048 * 2048 + 147456.0 + 2 * 4194304.0);
  EXPECT_EQ(w.precision, "tf32");
  ASSERT_EQ(w.flops_by_precision.size(), 2u);
  EXPECT_EQ(w.flops_by_precision[0].first, "tf32");
  EXPECT_EQ(w.flops_by_precision[1].first, "fp32");
  EXPECT_DOUBLE_EQ(w.flops_by_precision[1].second, 147456.0 + 2 * 4194304.0);
  ASSERT_EQ(w.tensor_flops_by_path.size(), 1u);
  EXPECT_EQ(w.tensor_flops_by_path[0].first, "hgmma");
  ASSERT_TRUE(w.dram_write_bytes.has_value());
  EXPECT_DOUBLE_EQ(*w.dram_write_bytes, 524288.0 * 32);  // 2048^2 fp32: 16 MiB stored
  EXPECT_DOUBLE_EQ(*w.dram_bytes(), 33632000.0 + 524288.0 * 32);
}

TEST(CountedWork, FmaIsTwoFlopsAndIntegerOpsStayApart) {
  const CounterPlan plan = plan_counter_metrics(chip_metrics("GH100"));
  const CountedWork w = evaluate_counters(
      plan, values_for(plan, {{"sm__sass_thread_inst_executed_op_dfma_pred_on.sum", 1000.0},
                              {"sm__sass_thread_inst_executed_op_dadd_pred_on.sum", 10.0},
                              {"sm__ops_path_tensor_op_igmma_src_int8.sum", 5e6}}));
  EXPECT_DOUBLE_EQ(w.flops, 2010.0);
  EXPECT_EQ(w.precision, "fp64");
  EXPECT_DOUBLE_EQ(w.int_ops, 5e6);
  EXPECT_FALSE(w.dram_bytes().has_value() && *w.dram_bytes() > 0);
}

TEST(CountedWork, SparseOpsAreAPartNotAnAddition) {
  const CounterPlan plan = plan_counter_metrics(chip_metrics("GH100"));
  const CountedWork w = evaluate_counters(
      plan, values_for(plan, {{"sm__ops_path_tensor_op_hgmma_src_fp16.sum", 1e9},
                              {"sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_on.sum", 4e8}}));
  EXPECT_DOUBLE_EQ(w.flops, 1e9);
  EXPECT_DOUBLE_EQ(w.sparse_ops, 4e8);
  EXPECT_EQ(w.precision, "fp16");
}

TEST(CountedWork, UnmeasuredValuesAreAbsentNotZero) {
  const CounterPlan plan = plan_counter_metrics(chip_metrics("GH100"));
  std::vector<double> v(plan.metrics.size(), -1);
  const CountedWork none = evaluate_counters(plan, v);
  EXPECT_EQ(none.flops, 0);
  EXPECT_EQ(none.precision, "");
  EXPECT_FALSE(none.dram_bytes());
  v.assign(plan.metrics.size(), std::nan(""));
  EXPECT_FALSE(evaluate_counters(plan, v).dram_bytes());
  // Fewer values than metrics: the rest are not measured.
  EXPECT_EQ(evaluate_counters(plan, std::vector<double>{}).flops, 0);
}

TEST(CounterPrecision, SourceTypesMapToPeakNames) {
  EXPECT_EQ(precision_of_tensor_type("tf32"), "tf32");
  EXPECT_EQ(precision_of_tensor_type("bf16"), "bf16");
  EXPECT_EQ(precision_of_tensor_type("fp4_fp6_fp8"), "fp8");
  EXPECT_EQ(precision_of_tensor_type("fp8"), "fp8");
  EXPECT_EQ(precision_of_tensor_type("fp4"), "fp4");
  EXPECT_EQ(precision_of_tensor_type("int8"), "int8");
  EXPECT_EQ(precision_of_tensor_type("int1"), "");
}

}  // namespace
}  // namespace flopline::capture
