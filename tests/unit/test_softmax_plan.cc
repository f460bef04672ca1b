// The matmul_softmax plan without a GPU: the shape -> plan table of softmax_plan_cases.h
// on an H100, an H200 and an A100, the plan's use of the device's numbers (SMs, resident
// CTAs and clusters), the refusals of schemes asked for by name, and the occupancy
// questions the launcher asks the runtime (only those the plan reads).
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>

#include "flopline/kernels/softmax_plan.h"
#include "softmax_plan_cases.h"

namespace flopline::kernels {
namespace {

using plan_cases::Case;
using plan_cases::DeviceModel;
using plan_cases::kRefused;

std::string describe(const Case& c) {
  return std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + " " +
         dtype_name(c.in) + "->" + dtype_name(c.out) + " " + softmax_dim_name(c.dim) + " scheme " +
         softmax_scheme_name(c.scheme);
}

MatmulSoftmaxPlan plan_on(const DeviceModel& d, const MatmulProblem& p,
                          const SoftmaxPlanRequest& r) {
  return plan_matmul_softmax(p, r, plan_cases::device_numbers(d, p));
}
MatmulSoftmaxPlan plan_on(const DeviceModel& d, const Case& c) {
  return plan_on(d, plan_cases::problem(c),
                 SoftmaxPlanRequest{c.dim, MatmulPath::automatic, c.scheme});
}

void expect_table(const DeviceModel& d, bool hopper) {
  for (const Case& c : plan_cases::cases()) {
    const MatmulSoftmaxPlan got = plan_on(d, c);
    const SoftmaxPlan want = hopper ? c.hopper : c.a100;
    if (want == kRefused) {
      EXPECT_FALSE(got.refusal.empty())
          << d.name << " " << describe(c) << ": got " << softmax_plan_name(got.plan);
      continue;
    }
    EXPECT_EQ(got.refusal, "") << d.name << " " << describe(c);
    EXPECT_EQ(softmax_plan_name(got.plan), std::string(softmax_plan_name(want)))
        << d.name << " " << describe(c) << " (" << got.reason << ")";
    EXPECT_EQ(got.k_splits, hopper ? c.hopper_k_splits : 1) << d.name << " " << describe(c);
    EXPECT_FALSE(got.reason.empty()) << d.name << " " << describe(c);
    EXPECT_EQ(softmax_plan_scheme(got.plan) == c.scheme, c.scheme != SoftmaxScheme::automatic)
        << d.name << " " << describe(c) << ": a scheme asked for by name runs one of its own plans";
  }
}

TEST(SoftmaxPlan, TableOnH100) {
  expect_table(plan_cases::kH100, true);
}
TEST(SoftmaxPlan, TableOnH200) {
  expect_table(plan_cases::kH200, true);
}
TEST(SoftmaxPlan, TableOnA100) {
  expect_table(plan_cases::kA100, false);
}

// Every launch sequence is in the table, and each has its own name.
TEST(SoftmaxPlan, TableReachesEveryPlan) {
  std::set<std::string> reached, names;
  for (const Case& c : plan_cases::cases()) {
    reached.insert(softmax_plan_name(c.hopper));
    if (c.a100 != kRefused) reached.insert(softmax_plan_name(c.a100));
  }
  for (int i = 0; i <= static_cast<int>(SoftmaxPlan::unfused); ++i) {
    const std::string name = softmax_plan_name(static_cast<SoftmaxPlan>(i));
    EXPECT_TRUE(names.insert(name).second) << name << " named twice";
    EXPECT_NE(name, "?");
    EXPECT_TRUE(reached.count(name)) << name << " is in no line of the table";
  }
}

// The plan reads only the numbers softmax_plan_queries names: with the others zeroed
// (matmul_softmax does not ask the runtime for them) every problem gets the same plan.
TEST(SoftmaxPlan, ReadsOnlyTheNumbersItAsksFor) {
  const std::int64_t sizes[] = {1, 64, 128, 256, 300, 512, 1024, 2048, 4096, 16392};
  const std::int64_t ks[] = {8, 128, 200, 320, 400, 768, 1024, 2048, 4096};
  const DType pairs[][2] = {{DType::tf32, DType::f32},
                            {DType::bf16, DType::f32},
                            {DType::bf16, DType::bf16},
                            {DType::f16, DType::f16}};
  const SoftmaxScheme schemes[] = {SoftmaxScheme::automatic,    SoftmaxScheme::one_launch,
                                   SoftmaxScheme::cluster_rows, SoftmaxScheme::group_rows,
                                   SoftmaxScheme::split_k,      SoftmaxScheme::sweeps};
  int compared = 0;
  for (const DeviceModel* d : {&plan_cases::kH100, &plan_cases::kA100}) {
    for (std::int64_t m : sizes) {
      for (std::int64_t n : sizes) {
        for (std::int64_t k : ks) {
          for (const auto& t : pairs) {
            for (SoftmaxDim dim : {SoftmaxDim::rows, SoftmaxDim::cols}) {
              for (SoftmaxScheme scheme : schemes) {
                Case c{m,      n,
                       k,      t[0],
                       t[1],   dim,
                       scheme, SoftmaxPlan::unfused,
                       1,      SoftmaxPlan::unfused};
                const MatmulProblem p = plan_cases::problem(c);
                const SoftmaxPlanRequest r{dim, MatmulPath::automatic, scheme};
                const SoftmaxPlanDevice all = plan_cases::device_numbers(*d, p);
                SoftmaxPlanDevice asked = all;
                const SoftmaxPlanQueries q = softmax_plan_queries(p, r, d->arch);
                if (!q.one_launch_ctas) asked.one_launch_ctas = 0;
                if (!q.cluster_rows_clusters) asked.cluster_rows_clusters = 0;
                const MatmulSoftmaxPlan a = plan_matmul_softmax(p, r, all),
                                        b = plan_matmul_softmax(p, r, asked);
                ASSERT_EQ(a.refusal, b.refusal) << d->name << " " << describe(c);
                ASSERT_EQ(a.plan, b.plan) << d->name << " " << describe(c);
                ASSERT_EQ(a.k_splits, b.k_splits) << d->name << " " << describe(c);
                ++compared;
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(compared, 10000);
}

// The cluster query needs the sm90 kernels: no question about clusters on an A100, for
// columns, or for rows over more column tiles than a cluster holds.
TEST(SoftmaxPlan, AsksForClustersOnlyWhereTheyCouldRun) {
  const Case rows{4096,
                  4096,
                  4096,
                  DType::bf16,
                  DType::f32,
                  SoftmaxDim::rows,
                  SoftmaxScheme::automatic,
                  SoftmaxPlan::unfused,
                  1,
                  SoftmaxPlan::unfused};
  const MatmulProblem p = plan_cases::problem(rows);
  EXPECT_TRUE(softmax_plan_queries(p, {SoftmaxDim::rows}, 90).cluster_rows_clusters);
  EXPECT_FALSE(softmax_plan_queries(p, {SoftmaxDim::rows}, 80).cluster_rows_clusters);
  EXPECT_FALSE(softmax_plan_queries(p, {SoftmaxDim::cols}, 90).cluster_rows_clusters);
  EXPECT_FALSE(
      softmax_plan_queries(p, {SoftmaxDim::rows, MatmulPath::sm80}, 90).cluster_rows_clusters);
  MatmulProblem wide = p;
  wide.n = 4352;  // 17 column tiles
  EXPECT_FALSE(softmax_plan_queries(wide, {SoftmaxDim::rows}, 90).cluster_rows_clusters);
  EXPECT_FALSE(softmax_plan_queries(p, {SoftmaxDim::rows}, 90).one_launch_ctas)
      << "m*n*k past the one launch";
  MatmulProblem small = p;
  small.m = small.n = small.k = 256;
  EXPECT_TRUE(softmax_plan_queries(small, {SoftmaxDim::rows}, 80).one_launch_ctas);
  small.in = small.out = DType::f16;
  EXPECT_FALSE(softmax_plan_queries(small, {SoftmaxDim::rows}, 80).one_launch_ctas)
      << "no fp16 one launch";
}

// The device's numbers move the boundaries: resident clusters against row tiles, SMs
// against tiles (split k), resident CTAs against 64x64 tiles (one launch).
TEST(SoftmaxPlan, DeviceNumbersMoveTheChoice) {
  const Case c{2048,
               2048,
               2048,
               DType::bf16,
               DType::f32,
               SoftmaxDim::rows,
               SoftmaxScheme::automatic,
               SoftmaxPlan::unfused,
               1,
               SoftmaxPlan::unfused};
  const MatmulProblem p = plan_cases::problem(c);
  const SoftmaxPlanRequest r{SoftmaxDim::rows};
  SoftmaxPlanDevice d = plan_cases::device_numbers(plan_cases::kH100, p);
  ASSERT_EQ(d.cluster_rows_clusters, 15);
  EXPECT_EQ(plan_matmul_softmax(p, r, d).plan, SoftmaxPlan::group_rows)
      << "16 row tiles, 15 clusters";
  d.cluster_rows_clusters = 16;
  EXPECT_EQ(plan_matmul_softmax(p, r, d).plan, SoftmaxPlan::cluster_rows)
      << "16 row tiles, 16 clusters";
  d.cluster_rows_clusters = 0;
  EXPECT_EQ(plan_matmul_softmax(p, r, d).plan, SoftmaxPlan::group_rows);
  d.sms = 4;  // fewer SMs than the 8 column tiles: no group of a row
  EXPECT_EQ(plan_matmul_softmax(p, r, d).plan, SoftmaxPlan::rows_rescale_in_launch);

  // 1024^3 tf32 rows: 32 tiles of 256x128; 4 ranges on 132 SMs, 2 on 64, none on 63.
  MatmulProblem q = p;
  q.m = q.n = q.k = 1024;
  q.in = DType::tf32;
  SoftmaxPlanDevice h = plan_cases::device_numbers(plan_cases::kH100, q);
  EXPECT_EQ(plan_matmul_softmax(q, r, h).k_splits, 4);
  h.sms = 64;
  EXPECT_EQ(plan_matmul_softmax(q, r, h).plan, SoftmaxPlan::split_k_rows);
  EXPECT_EQ(plan_matmul_softmax(q, r, h).k_splits, 2);
  h.sms = 63;
  EXPECT_NE(plan_matmul_softmax(q, r, h).plan, SoftmaxPlan::split_k_rows);

  // 512^3 tf32 on an A100: 64 tiles of 64x64, one launch while 64 CTAs stay resident.
  MatmulProblem s = q;
  s.m = s.n = s.k = 512;
  SoftmaxPlanDevice a = plan_cases::device_numbers(plan_cases::kA100, s);
  EXPECT_EQ(plan_matmul_softmax(s, r, a).plan, SoftmaxPlan::one_launch);
  a.one_launch_ctas = 63;
  EXPECT_EQ(plan_matmul_softmax(s, r, a).plan, SoftmaxPlan::unfused);
}

// The one launch keeps its tile statistics in the output unless the output is too small
// or not 8-byte aligned.
TEST(SoftmaxPlan, OneLaunchStatisticsInTheOutputWhereTheyFit) {
  const Case c{256,
               256,
               64,
               DType::bf16,
               DType::f32,
               SoftmaxDim::cols,
               SoftmaxScheme::one_launch,
               SoftmaxPlan::unfused,
               1,
               SoftmaxPlan::unfused};
  MatmulProblem p = plan_cases::problem(c);
  const SoftmaxPlanRequest r{SoftmaxDim::cols, MatmulPath::automatic, SoftmaxScheme::one_launch};
  EXPECT_EQ(plan_on(plan_cases::kA100, p, r).plan, SoftmaxPlan::one_launch);
  p.c = reinterpret_cast<void*>(std::uintptr_t{0x30000004});
  EXPECT_EQ(plan_on(plan_cases::kA100, p, r).plan, SoftmaxPlan::one_launch_scratch_stats);
}

// A scheme asked for by name that cannot take the problem: the refusal names the scheme
// and the reason (matmul_softmax throws it as KernelError).
TEST(SoftmaxPlan, SchemesAskedForByNameSayWhyNot) {
  auto refusal = [](std::int64_t m, std::int64_t n, std::int64_t k, DType in, SoftmaxDim dim,
                    SoftmaxScheme s, const DeviceModel& d = plan_cases::kH100) {
    const Case c{m, n, k, in, DType::f32, dim, s, SoftmaxPlan::unfused, 1, SoftmaxPlan::unfused};
    return plan_on(d, c).refusal;
  };
  const auto rows = SoftmaxDim::rows, cols = SoftmaxDim::cols;
  EXPECT_EQ(refusal(16384, 16384, 16, DType::tf32, rows, SoftmaxScheme::one_launch),
            "matmul_softmax: the one-launch scheme cannot take this problem: 65536 tiles of 64x64 "
            "but the device "
            "keeps 264 of its CTAs resident");
  EXPECT_EQ(refusal(64, 64, 64, DType::f32, rows, SoftmaxScheme::one_launch),
            "matmul_softmax: the one-launch scheme cannot take this problem: inputs fp32 with "
            "output fp32");
  EXPECT_NE(refusal(64, 64, 64, DType::f32, rows, SoftmaxScheme::sweeps)
                .find("the sweeps scheme needs the sm90 path"),
            std::string::npos);
  EXPECT_EQ(refusal(64, 64, 64, DType::tf32, cols, SoftmaxScheme::cluster_rows),
            "matmul_softmax: the cluster_rows scheme cannot take this problem: it computes softmax "
            "over rows only");
  EXPECT_EQ(refusal(64, 4352, 64, DType::tf32, rows, SoftmaxScheme::cluster_rows),
            "matmul_softmax: the cluster_rows scheme cannot take this problem: 17 column tiles of "
            "256, more than a "
            "cluster's 16 CTAs");
  EXPECT_EQ(refusal(64, 256 * 1024, 64, DType::tf32, rows, SoftmaxScheme::group_rows),
            "matmul_softmax: the group_rows scheme cannot take this problem: 1024 column tiles of "
            "256, more than the "
            "device's 132 SMs");
  EXPECT_NE(
      refusal(4096, 4096, 1024, DType::tf32, rows, SoftmaxScheme::split_k).find("nothing to split"),
      std::string::npos);
  EXPECT_NE(refusal(1024, 1024, 224, DType::tf32, rows, SoftmaxScheme::split_k)
                .find("at least 8 k tiles (32 wide)"),
            std::string::npos);
  EXPECT_NE(
      refusal(64, 16392, 1024, DType::tf32, rows, SoftmaxScheme::split_k).find("16392 columns"),
      std::string::npos);
  EXPECT_NE(refusal(1024, 1024, 1024, DType::bf16, rows, SoftmaxScheme::sweeps, plan_cases::kA100)
                .find("the sweeps scheme needs"),
            std::string::npos);
  EXPECT_EQ(refusal(64, 64, 64, DType::f32, rows, SoftmaxScheme::unfused), "");
}

// Names for traces and messages.
TEST(SoftmaxPlan, Names) {
  EXPECT_STREQ(softmax_plan_name(SoftmaxPlan::swapped_rows_scores_beside_pass),
               "swapped_rows_scores_beside_pass");
  EXPECT_STREQ(softmax_scheme_name(SoftmaxScheme::split_k), "split_k");
  EXPECT_EQ(softmax_plan_scheme(SoftmaxPlan::rows_rescale_in_launch), SoftmaxScheme::sweeps);
  EXPECT_EQ(softmax_plan_scheme(SoftmaxPlan::split_k_cols), SoftmaxScheme::split_k);
  EXPECT_EQ(softmax_plan_scheme(SoftmaxPlan::one_launch_scratch_stats), SoftmaxScheme::one_launch);
}

}  // namespace
}  // namespace flopline::kernels
