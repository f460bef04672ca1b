// Metric sets per function (function_metrics.h): learning a function's tensor metrics,
// measuring later launches with those only, and catching tensor work outside them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "flopline/capture/function_metrics.h"

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

// Shaped like a GH100's counts through the host API: the SASS (SIMT) metrics take a pass
// of their own, DRAM, duration and instruction counts share one with the tensor metrics
// of one instruction path, and each further path adds one.
std::optional<std::size_t> hopper_like_passes(const std::vector<std::string>& names) {
  bool sass = false;
  bool other = false;
  std::set<std::string> paths;
  for (const std::string& n : names) {
    if (n.find("sass") != std::string::npos) {
      sass = true;
    } else if (n.starts_with("sm__ops_path_tensor_op_")) {
      paths.insert(n.substr(23, n.find("_src_") - 23));
    } else if (n.starts_with("sm__ops_path_tensor_src_")) {
      paths.insert("per type");
    } else {
      other = true;
    }
  }
  const std::size_t hw = std::max<std::size_t>(paths.size(), other ? 1 : 0);
  return (sass ? 1 : 0) + hw;
}

const std::string kBf16 = "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum";
const std::string kBf16Sparse = "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_on.sum";
const std::string kFp16 = "sm__ops_path_tensor_op_hgmma_src_fp16.sum";
const std::string kHmmaTf32 = "sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32.sum";
const std::string kInst = "sm__inst_executed_pipe_tensor.sum";
const std::string kHfma2 = "sm__inst_executed_pipe_tensor_op_hmma_type_hfma2.sum";
const std::string kFfma = "sm__sass_thread_inst_executed_op_ffma_pred_on.sum";
const std::string kRead = "dram__bytes_read.sum";
const std::string kGmma = "sm__inst_executed_pipe_tensor_op_gmma.sum";
const std::string kHmma = "sm__inst_executed_pipe_tensor_op_hmma.sum";
const std::string kDmma = "sm__inst_executed_pipe_tensor_op_dmma.sum";
const std::string kImma = "sm__inst_executed_pipe_tensor_op_imma.sum";

class FunctionMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override { plan = plan_counter_metrics(chip_metrics("GH100"), hopper_like_passes); }

  std::uint32_t index(const std::string& name) const {
    for (std::uint32_t i = 0; i < plan.metrics.size(); ++i) {
      if (plan.metrics[i].name == name) return i;
    }
    ADD_FAILURE() << name << " not in the plan";
    return 0;
  }
  bool in_set(const FunctionMetrics& f, std::uint32_t set, const std::string& name) const {
    const auto& m = f.set(set).metrics;
    return std::find(m.begin(), m.end(), index(name)) != m.end();
  }
  // What a measurement with `set` reads: `v` where given, 0 for the set's other metrics,
  // not collected (-1) outside it. Instruction counts go to the all-tensor metric.
  std::vector<double> values(const FunctionMetrics& f, std::uint32_t set,
                             const std::map<std::string, double>& v) const {
    std::vector<double> out(plan.metrics.size(), -1);
    for (std::uint32_t i : f.set(set).metrics) {
      const auto it = v.find(plan.metrics[i].name);
      out[i] = it != v.end() ? it->second : 0;
    }
    return out;
  }
  CounterPlan plan;
};

TEST_F(FunctionMetricsTest, PlanCountsTensorInstructionsOutsideItsPasses) {
  const CounterPlan without = plan_counter_metrics(
      [] {
        auto v = chip_metrics("GH100");
        std::erase_if(v, [](const std::string& n) { return n.starts_with("sm__inst_executed"); });
        return v;
      }(),
      hopper_like_passes);
  EXPECT_EQ(plan.metrics.size(), without.metrics.size() + 2);
  EXPECT_EQ(plan.passes, without.passes);
  EXPECT_EQ(plan.metrics[index(kInst)].use, CounterUse::kTensorInstructions);
  EXPECT_EQ(plan.metrics[index(kHfma2)].use, CounterUse::kTensorInstructions);
  // Instructions are a check, never FLOPs; HFMA2 the tensor pipe ran are not matrix
  // instructions.
  std::vector<double> v(plan.metrics.size(), 0);
  v[index(kInst)] = 100;
  v[index(kHfma2)] = 30;
  const CountedWork w = evaluate_counters(plan, v);
  EXPECT_EQ(w.flops, 0);
  ASSERT_TRUE(w.tensor_instructions.has_value());
  EXPECT_EQ(*w.tensor_instructions, 70);
}

TEST_F(FunctionMetricsTest, EveryLaunchModeAlwaysCollectsEveryMetric) {
  FunctionMetrics f(plan, hopper_like_passes, /*every_launch=*/true);
  for (int i = 0; i < 3; ++i) {
    const std::uint32_t s = f.choose(7);
    EXPECT_EQ(s, FunctionMetrics::kFull);
    EXPECT_EQ(f.learn(7, s, values(f, s, {{kBf16, 1000}})), "");
  }
  EXPECT_EQ(f.set(FunctionMetrics::kFull).metrics.size(), plan.metrics.size() - 2);
  EXPECT_FALSE(in_set(f, FunctionMetrics::kFull, kInst));
}

TEST_F(FunctionMetricsTest, WithoutInstructionMetricsOrPassCountsNothingIsLearned) {
  CounterPlan no_inst = plan;
  std::erase_if(no_inst.metrics,
                [](const CounterMetric& m) { return m.use == CounterUse::kTensorInstructions; });
  FunctionMetrics a(no_inst, hopper_like_passes, false);
  FunctionMetrics b(plan, PassCounter{}, false);
  for (FunctionMetrics* f : {&a, &b}) {
    EXPECT_EQ(f->choose(1), FunctionMetrics::kFull);
    EXPECT_EQ(f->learn(1, FunctionMetrics::kFull, {}), "");
    EXPECT_EQ(f->choose(1), FunctionMetrics::kFull);
  }
}

TEST_F(FunctionMetricsTest, LaterLaunchesCollectOnlyTheLearnedTensorMetrics) {
  FunctionMetrics f(plan, hopper_like_passes, false);
  const std::uint32_t first = f.choose(42);
  ASSERT_EQ(first, FunctionMetrics::kLearning);
  EXPECT_TRUE(in_set(f, first, kInst));
  EXPECT_TRUE(in_set(f, first, kHmmaTf32));
  EXPECT_EQ(f.learn(42, first, values(f, first, {{kBf16, 64000}, {kInst, 100}, {kFfma, 7}})), "");
  const std::uint32_t later = f.choose(42);
  ASSERT_GT(later, FunctionMetrics::kLearning);
  EXPECT_TRUE(in_set(f, later, kBf16));
  EXPECT_TRUE(in_set(f, later, kFfma));  // SIMT, DRAM: always
  EXPECT_TRUE(in_set(f, later, kRead));
  EXPECT_TRUE(in_set(f, later, kInst));
  EXPECT_FALSE(in_set(f, later, kFp16));
  EXPECT_FALSE(in_set(f, later, kHmmaTf32));
  EXPECT_FALSE(in_set(f, later, kBf16Sparse));  // it counted nothing sparse
  EXPECT_LT(f.set(later).passes, plan.passes);
  EXPECT_EQ(f.set(later).passes, 2u);
  // A larger GEMM of the same kernel: more operations, in the same proportion.
  EXPECT_EQ(f.learn(42, later, values(f, later, {{kBf16, 640000}, {kInst, 1000}})), "");
  // Within the tolerance.
  EXPECT_EQ(f.learn(42, later, values(f, later, {{kBf16, 64000 * 1.005}, {kInst, 100}})), "");
  // No tensor work at all (an empty problem): complete.
  EXPECT_EQ(f.learn(42, later, values(f, later, {{kRead, 4096}})), "");
  EXPECT_EQ(f.choose(42), later);
  EXPECT_NE(f.describe(42).find("learned: hgmma bf16"), std::string::npos) << f.describe(42);
}

TEST_F(FunctionMetricsTest, TensorWorkOutsideTheLearnedMetricsIsIncompleteAndNeverRisked) {
  FunctionMetrics f(plan, hopper_like_passes, false);
  f.learn(42, f.choose(42), values(f, FunctionMetrics::kLearning, {{kBf16, 64000}, {kInst, 100}}));
  const std::uint32_t later = f.choose(42);
  // Half its instructions were fp16 MMAs, which this set does not count.
  const std::string why =
      f.learn(42, later, values(f, later, {{kBf16, 64000}, {kFp16, 64000}, {kInst, 200}}));
  EXPECT_NE(why.find("outside its learned metrics"), std::string::npos) << why;
  EXPECT_EQ(f.choose(42), FunctionMetrics::kFull);
  EXPECT_NE(f.describe(42).find("every metric"), std::string::npos);
  // Operations without instructions cannot be.
  FunctionMetrics g(plan, hopper_like_passes, false);
  g.learn(9, g.choose(9), values(g, FunctionMetrics::kLearning, {{kBf16, 64000}, {kInst, 100}}));
  const std::uint32_t s = g.choose(9);
  EXPECT_FALSE(g.learn(9, s, values(g, s, {{kBf16, 64000}})).empty());
}

TEST_F(FunctionMetricsTest, AFunctionWithoutTensorWorkIsCheckedByItsInstructions) {
  FunctionMetrics f(plan, hopper_like_passes, false);
  f.learn(5, f.choose(5), values(f, FunctionMetrics::kLearning, {{kFfma, 1 << 20}}));
  const std::uint32_t later = f.choose(5);
  ASSERT_GT(later, FunctionMetrics::kLearning);
  for (std::uint32_t i : f.set(later).metrics) EXPECT_FALSE(plan.metrics[i].tensor());
  EXPECT_EQ(f.learn(5, later, values(f, later, {{kFfma, 1 << 21}})), "");
  const std::string why = f.learn(5, later, values(f, later, {{kFfma, 1 << 21}, {kInst, 8}}));
  EXPECT_NE(why.find("had none"), std::string::npos) << why;
  EXPECT_EQ(f.choose(5), FunctionMetrics::kFull);
}

TEST_F(FunctionMetricsTest, InstructionsAndOperationsThatDoNotGoTogetherMeanEveryMetric) {
  FunctionMetrics f(plan, hopper_like_passes, false);
  // Tensor-pipe instructions that are not HFMA2 and counted no tensor operation.
  EXPECT_EQ(f.learn(1, f.choose(1), values(f, FunctionMetrics::kLearning, {{kInst, 50}})), "");
  EXPECT_EQ(f.choose(1), FunctionMetrics::kFull);
  EXPECT_NE(f.describe(1).find("without tensor operations"), std::string::npos);
  // HFMA2 alone, as many as the tensor pipe's instructions (PyTorch's normal-distribution
  // kernel): a function without tensor work, measured with the others.
  f.learn(4, f.choose(4),
          values(f, FunctionMetrics::kLearning, {{kInst, 25344}, {kHfma2, 25344}, {kFfma, 9}}));
  const std::uint32_t s4 = f.choose(4);
  ASSERT_GT(s4, FunctionMetrics::kLearning) << f.describe(4);
  EXPECT_EQ(f.learn(4, s4, values(f, s4, {{kInst, 50688}, {kHfma2, 50688}})), "");
  // Operations the instruction metrics do not see.
  EXPECT_EQ(f.learn(2, f.choose(2), values(f, FunctionMetrics::kLearning, {{kBf16, 50}})), "");
  EXPECT_EQ(f.choose(2), FunctionMetrics::kFull);
  // Instruction counts not read.
  std::vector<double> v = values(f, FunctionMetrics::kLearning, {{kBf16, 50}, {kInst, 1}});
  v[index(kHfma2)] = -1;
  f.learn(3, f.choose(3), v);
  EXPECT_EQ(f.choose(3), FunctionMetrics::kFull);
}

TEST_F(FunctionMetricsTest, SetsAreSharedAndKeptOnlyWhenTheySaveAPass) {
  FunctionMetrics f(plan, hopper_like_passes, false);
  f.learn(1, f.choose(1), values(f, FunctionMetrics::kLearning, {{kBf16, 10}, {kInst, 1}}));
  f.learn(2, f.choose(2), values(f, FunctionMetrics::kLearning, {{kBf16, 30}, {kInst, 1}}));
  EXPECT_EQ(f.choose(1), f.choose(2));
  // Sparse work is learned with its type.
  f.learn(3, f.choose(3),
          values(f, FunctionMetrics::kLearning, {{kBf16, 30}, {kBf16Sparse, 30}, {kInst, 1}}));
  EXPECT_NE(f.choose(3), f.choose(1));
  EXPECT_TRUE(in_set(f, f.choose(3), kBf16Sparse));
  // A counter that cannot tell, or a set as costly as every metric: every metric.
  std::size_t full_passes = plan.passes;
  FunctionMetrics g(
      plan,
      [full_passes](const std::vector<std::string>& n) -> std::optional<std::size_t> {
        if (n.size() > 20) return full_passes + 1;
        return full_passes;
      },
      false);
  g.learn(1, g.choose(1), values(g, FunctionMetrics::kLearning, {{kBf16, 10}, {kInst, 1}}));
  EXPECT_EQ(g.choose(1), FunctionMetrics::kFull);
  EXPECT_NE(g.describe(1).find("as many as every metric"), std::string::npos) << g.describe(1);
}

TEST_F(FunctionMetricsTest, OnePassGroupsFitFirstInOrderOrNotAtAll) {
  const std::vector<std::uint32_t> metrics = {index(kFfma), index(kRead), index(kBf16),
                                              index(kInst), index(kHmmaTf32)};
  const auto groups = one_pass_groups(plan, metrics, hopper_like_passes);
  // SASS metrics apart; DRAM, instructions and one tensor path together; another path
  // apart.
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0], (std::vector<std::uint32_t>{index(kFfma)}));
  EXPECT_EQ(groups[1], (std::vector<std::uint32_t>{index(kRead), index(kBf16), index(kInst)}));
  EXPECT_EQ(groups[2], (std::vector<std::uint32_t>{index(kHmmaTf32)}));
  // A metric that needs two passes alone, or passes that cannot be counted: no groups.
  const PassCounter two = [](const std::vector<std::string>&) -> std::optional<std::size_t> {
    return 2;
  };
  EXPECT_TRUE(one_pass_groups(plan, metrics, two).empty());
  EXPECT_TRUE(one_pass_groups(plan, metrics, PassCounter{}).empty());
}

TEST_F(FunctionMetricsTest, ALearnedSetIsMeasuredInOnePassParts) {
  FunctionMetrics f(plan, hopper_like_passes, false);
  f.learn(42, f.choose(42),
          values(f, FunctionMetrics::kLearning, {{kBf16, 64000}, {kInst, 100}, {kFfma, 7}}));
  const std::uint32_t later = f.choose(42);
  const MetricSet& set = f.set(later);
  ASSERT_EQ(set.passes, 2u);
  ASSERT_EQ(set.parts.size(), 2u);
  // The parts are one pass each and hold the set's metrics exactly once.
  std::vector<std::uint32_t> all;
  for (std::uint32_t p : set.parts) {
    EXPECT_EQ(f.set(p).passes, 1u);
    EXPECT_TRUE(f.set(p).parts.empty());
    all.insert(all.end(), f.set(p).metrics.begin(), f.set(p).metrics.end());
  }
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, set.metrics);
  // The instructions that check the tensor work share a part with it.
  const std::uint32_t hw = in_set(f, set.parts[0], kBf16) ? set.parts[0] : set.parts[1];
  EXPECT_TRUE(in_set(f, hw, kInst));
  EXPECT_NE(f.describe(42).find("in 2 one-pass parts"), std::string::npos) << f.describe(42);
  // Learning and every metric stay one replayed launch.
  EXPECT_TRUE(f.set(FunctionMetrics::kLearning).parts.empty());
  EXPECT_TRUE(f.set(FunctionMetrics::kFull).parts.empty());
  // What an unfinished measurement lacks, in words.
  const std::uint32_t first_part = set.parts[0];
  const std::string why = f.unfinished(later, 1);
  EXPECT_NE(why.find("ran 1 of the 2 times"), std::string::npos) << why;
  const bool simt_first = in_set(f, first_part, kFfma);
  EXPECT_NE(why.find(simt_first ? "tensor operations" : "SIMT operations"), std::string::npos)
      << why;
}

// The two-pass first set (the default): a function's first measurement collects only the
// tensor metrics that fit the passes of the others, with the tensor instructions by type.
class FirstSetTest : public FunctionMetricsTest {
 protected:
  void SetUp() override {
    plan = plan_counter_metrics(chip_metrics("GH100"), hopper_like_passes, true);
  }
  FunctionMetrics make() const { return FunctionMetrics(plan, hopper_like_passes, false, true); }
};

TEST_F(FirstSetTest, PlannedOnlyWhenAskedAndNeverFlops) {
  const CounterPlan without = plan_counter_metrics(chip_metrics("GH100"), hopper_like_passes);
  // The pipe's instructions as HMMA, DMMA and IMMA less HFMA2, and GMMA apart, outside the
  // counting metrics' passes; never the pipe's total beside them, which then reads NaN.
  EXPECT_EQ(plan.metrics.size(), without.metrics.size() + 3);
  EXPECT_EQ(plan.passes, without.passes);
  for (const CounterMetric& m : plan.metrics) EXPECT_NE(m.name, kInst);
  EXPECT_EQ(plan.metrics[index(kHmma)].use, CounterUse::kTensorInstructions);
  EXPECT_EQ(plan.metrics[index(kHfma2)].per_count, -1);
  EXPECT_EQ(plan.metrics[index(kGmma)].use, CounterUse::kTensorInstructionType);
  EXPECT_EQ(plan.metrics[index(kGmma)].path, "gmma");
  std::vector<double> v(plan.metrics.size(), 0);
  v[index(kHmma)] = 100;  // holds the GMMA and the HFMA2 instructions
  v[index(kDmma)] = 5;
  v[index(kHfma2)] = 30;
  v[index(kGmma)] = 60;  // a part of HMMA's count, never added
  const CountedWork w = evaluate_counters(plan, v);
  EXPECT_EQ(w.flops, 0);
  EXPECT_EQ(w.tensor_instructions.value_or(0), 75);
  FunctionMetrics f = make();
  EXPECT_FALSE(in_set(f, FunctionMetrics::kFull, kGmma));
}

TEST_F(FirstSetTest, OnlyWhenAskedAndInTheOthersPasses) {
  EXPECT_EQ(FunctionMetrics(plan, hopper_like_passes, false).first_set(),
            FunctionMetrics::kLearning);
  FunctionMetrics f = make();
  const std::uint32_t first = f.choose(1);
  EXPECT_EQ(first, f.first_set());
  ASSERT_GT(first, FunctionMetrics::kLearning);
  EXPECT_EQ(f.set(first).passes, 2u);
  EXPECT_GT(f.set(FunctionMetrics::kLearning).passes, 2u);
  for (const std::string& m :
       {kBf16, kBf16Sparse, kFp16, kGmma, kHmma, kHfma2, kDmma, kFfma, kRead}) {
    EXPECT_TRUE(in_set(f, first, m)) << m;
  }
  EXPECT_FALSE(in_set(f, first, kHmmaTf32));
  EXPECT_FALSE(in_set(f, FunctionMetrics::kLearning, kGmma));
  // Without the types (a chip before Hopper) there is none.
  auto names = chip_metrics("GH100");
  std::erase(names, std::string("sm__inst_executed_pipe_tensor_op_gmma"));
  const CounterPlan older = plan_counter_metrics(names, hopper_like_passes, true);
  EXPECT_EQ(FunctionMetrics(older, hopper_like_passes, false, true).first_set(),
            FunctionMetrics::kLearning);
}

TEST_F(FirstSetTest, CompleteWithoutTensorWorkOrWithGmmaOnItsPaths) {
  FunctionMetrics f = make();
  const std::uint32_t first = f.first_set();
  // An elementwise kernel whose tensor-pipe instructions are all HFMA2: SIMT work.
  EXPECT_EQ(
      f.learn(5, f.choose(5), values(f, first, {{kFfma, 1 << 20}, {kHmma, 4096}, {kHfma2, 4096}})),
      "");
  const std::uint32_t plain = f.choose(5);
  EXPECT_GT(plain, FunctionMetrics::kLearning);
  EXPECT_NE(plain, first);
  EXPECT_FALSE(in_set(f, plain, kBf16));
  // A bf16 GEMM: every tensor instruction GMMA (which HMMA holds), on a path the set
  // counts.
  EXPECT_EQ(f.learn(7, f.choose(7), values(f, first, {{kBf16, 64000}, {kGmma, 100}, {kHmma, 100}})),
            "");
  const std::uint32_t gemm = f.choose(7);
  EXPECT_TRUE(in_set(f, gemm, kBf16));
  EXPECT_FALSE(in_set(f, gemm, kFp16));
  EXPECT_LE(f.set(gemm).passes, 2u);
  // Later launches are checked by the pipe's instructions by type, as after learning.
  EXPECT_EQ(f.learn(7, gemm, values(f, gemm, {{kBf16, 128000}, {kHmma, 200}})), "");
  const std::string why = f.learn(7, gemm, values(f, gemm, {{kBf16, 64000}, {kHmma, 200}}));
  EXPECT_NE(why.find("outside its learned metrics"), std::string::npos) << why;
  EXPECT_EQ(f.first_set(), first);  // nothing needed the six-pass set
}

TEST_F(FirstSetTest, WorkItCannotCountIsLearnedAgainAndEndsTheTwoPassFirstSets) {
  FunctionMetrics f = make();
  const std::uint32_t first = f.first_set();
  // Real HMMA (beyond the GMMA and HFMA2 that HMMA holds): paths the set does not count.
  std::string why =
      f.learn(1, first, values(f, first, {{kBf16, 1000}, {kGmma, 10}, {kHmma, 50}, {kHfma2, 20}}));
  EXPECT_NE(why.find("20 HMMA, DMMA or IMMA instructions"), std::string::npos) << why;
  EXPECT_EQ(f.choose(1), FunctionMetrics::kLearning);
  EXPECT_NE(f.describe(1).find("learning with every metric"), std::string::npos);
  // The object holds six passes from then on: new functions learn with them at once.
  EXPECT_EQ(f.first_set(), FunctionMetrics::kLearning);
  EXPECT_EQ(f.choose(99), FunctionMetrics::kLearning);
  // Learning goes on as without the first set.
  EXPECT_EQ(f.learn(1, FunctionMetrics::kLearning,
                    values(f, FunctionMetrics::kLearning, {{kHmmaTf32, 4096}, {kHmma, 1}})),
            "");
  EXPECT_TRUE(in_set(f, f.choose(1), kHmmaTf32));

  FunctionMetrics g = make();
  // DMMA; GMMA without operations on its paths (integer GMMA); operations without GMMA;
  // types not read.
  EXPECT_FALSE(g.learn(2, first, values(g, first, {{kDmma, 8}})).empty());
  why = g.learn(3, first, values(g, first, {{kGmma, 10}, {kHmma, 10}}));
  EXPECT_NE(why.find("without operations"), std::string::npos) << why;
  EXPECT_FALSE(g.learn(4, first, values(g, first, {{kBf16, 1000}})).empty());
  // Every set reads the same instruction metrics: none holds the pipe's total.
  for (std::uint32_t s = 0; s < g.set_count(); ++s) {
    for (std::uint32_t i : g.set(s).metrics) EXPECT_NE(plan.metrics[i].name, kInst) << s;
  }
  std::vector<double> unread = values(g, first, {{kFfma, 8}});
  unread[index(kGmma)] = std::nan("");
  why = g.learn(5, first, unread);
  EXPECT_NE(why.find("not read (GMMA"), std::string::npos) << why;
  for (std::uint64_t fn : {2, 3, 4, 5}) EXPECT_EQ(g.choose(fn), FunctionMetrics::kLearning) << fn;
}

TEST_F(FirstSetTest, NoSetReadsAnInstructionCountTheFirstSetCannotHold) {
  // As on a GH100: GMMA, HMMA, DMMA and IMMA together add a pass.
  const PassCounter gh100 = [](const std::vector<std::string>& names) {
    auto has = [&](const std::string& n) {
      return std::find(names.begin(), names.end(), n) != names.end();
    };
    const bool all_types = has(kGmma) && has(kHmma) && has(kDmma) && has(kImma);
    return std::optional<std::size_t>(*hopper_like_passes(names) + (all_types ? 1 : 0));
  };
  FunctionMetrics f(plan, gh100, false, true);
  const std::uint32_t first = f.first_set();
  ASSERT_GT(first, FunctionMetrics::kLearning);
  EXPECT_TRUE(in_set(f, first, kDmma));
  EXPECT_FALSE(in_set(f, first, kImma));
  EXPECT_FALSE(in_set(f, FunctionMetrics::kLearning, kImma));
  EXPECT_TRUE(in_set(f, FunctionMetrics::kLearning, kHmma));
  // A function without tensor work learns a set that checks HMMA and DMMA, not IMMA.
  EXPECT_EQ(f.learn(5, first, values(f, first, {{kFfma, 64}})), "");
  const std::uint32_t plain = f.choose(5);
  EXPECT_TRUE(in_set(f, plain, kHmma));
  EXPECT_FALSE(in_set(f, plain, kImma));
  EXPECT_EQ(f.learn(5, plain, values(f, plain, {{kFfma, 64}})), "");
  // With room for every type, every set reads IMMA too.
  FunctionMetrics roomy = make();
  EXPECT_TRUE(in_set(roomy, roomy.first_set(), kImma));
  EXPECT_TRUE(in_set(roomy, FunctionMetrics::kLearning, kImma));
}

TEST(MeasureInParts, UnlessTheFunctionsKeysDoNotComeBack) {
  using Ages = std::vector<std::uint64_t>;
  EXPECT_TRUE(measure_in_parts({}, 0));
  // No key has come back yet: nothing can be called stale, however long it waits (a
  // first training step that compiles).
  EXPECT_TRUE(measure_in_parts(Ages{100000, 200000}, 0));
  // Keys come back within 10 of the function's launches: two waiting past 20 are stale.
  EXPECT_TRUE(measure_in_parts(Ages{5, 19, 21}, 10));
  EXPECT_TRUE(measure_in_parts(Ages{20, 20}, 10));
  EXPECT_FALSE(measure_in_parts(Ages{21, 3, 40}, 10));
  // Too many open at all.
  EXPECT_FALSE(measure_in_parts(Ages(kOpenPartsLimit, 1), 10));
  EXPECT_TRUE(measure_in_parts(Ages(kOpenPartsLimit - 1, 1), 10));
}

}  // namespace
}  // namespace flopline::capture
