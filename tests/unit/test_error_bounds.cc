// The GPU kernel tests' error bounds (tests/gpu/kernels/error_bounds.h), on the CPU: a
// faithful fp32 computation passes them, even with every addition truncated as tensor
// cores may; the corruptions a kernel bug makes fail them: a zeroed 64x64 tile, a dropped
// k tail (k = 4097: the last partial k tile holds one term), a wrong output rounding, and
// softmax rows replaced by a uniform distribution (which still sums to 1).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "error_bounds.h"

namespace flopline::kernels::testing {
namespace {

// a + b in fp32, rounded toward zero (what a truncating accumulator does).
float add_toward_zero(float a, float b) {
  const double exact =
      static_cast<double>(a) + static_cast<double>(b);  // exact: both are floats near each other
  float r = static_cast<float>(exact);
  if (std::fabs(static_cast<double>(r)) > std::fabs(exact)) r = std::nextafter(r, 0.0f);
  return r;
}

struct Problem {
  std::int64_t m, n, k;
  std::vector<double> a, b;  // bf16 values
};

Problem random_problem(std::int64_t m, std::int64_t n, std::int64_t k, double range,
                       unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(static_cast<float>(-range), static_cast<float>(range));
  Problem p{m, n, k, std::vector<double>(static_cast<std::size_t>(m * k)),
            std::vector<double>(static_cast<std::size_t>(k * n))};
  for (double& v : p.a) v = round_to_bf16(dist(rng));
  for (double& v : p.b) v = round_to_bf16(dist(rng));
  return p;
}

// The kernel's stand-in: exact bf16 products, fp32 sums truncated, over the first
// `terms` of k.
std::vector<double> fp32_matmul(const Problem& p, std::int64_t terms) {
  std::vector<double> c(static_cast<std::size_t>(p.m * p.n));
  for (std::int64_t i = 0; i < p.m; ++i) {
    for (std::int64_t j = 0; j < p.n; ++j) {
      float acc = 0.0f;
      for (std::int64_t l = 0; l < terms; ++l) {
        const float product =
            static_cast<float>(p.a[static_cast<std::size_t>(i * p.k + l)] *
                               p.b[static_cast<std::size_t>(l * p.n + j)]);  // exact
        acc = add_toward_zero(acc, product);
      }
      c[static_cast<std::size_t>(i * p.n + j)] = acc;
    }
  }
  return c;
}

// Softmax over the rows of an m x n score matrix as a kernel computes it: fp32 max, exps
// and sum; `store(e, sum)` gives the stored output from exp(s - max) and the row's sum.
template <class Store>
std::vector<double> host_softmax_rows(const std::vector<double>& scores, std::int64_t m,
                                      std::int64_t n, Store store) {
  std::vector<double> out(scores.size());
  auto at = [n](std::int64_t i, std::int64_t j) { return static_cast<std::size_t>(i * n + j); };
  for (std::int64_t i = 0; i < m; ++i) {
    float mx = -INFINITY, sum = 0.0f;
    for (std::int64_t j = 0; j < n; ++j) mx = std::fmax(mx, static_cast<float>(scores[at(i, j)]));
    for (std::int64_t j = 0; j < n; ++j) sum += std::exp(static_cast<float>(scores[at(i, j)]) - mx);
    for (std::int64_t j = 0; j < n; ++j)
      out[at(i, j)] = store(std::exp(static_cast<float>(scores[at(i, j)]) - mx), sum);
  }
  return out;
}

// 72 x 72 x 4097: a 64x64 tile off the origin fits, and k = 4097 is where a worst-case
// bound is loosest against one dropped term.
constexpr std::int64_t kSize = 72;

class MatmulBounds : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    problem_ = new Problem(random_problem(kSize, kSize, 4097, 1.0, 7));
    ref_ = new MatmulReference(reference_matmul_host(problem_->a, problem_->b, kSize, kSize, 4097));
    kernel_ = new std::vector<double>(fp32_matmul(*problem_, 4097));
  }
  static void TearDownTestSuite() {
    delete problem_;
    delete ref_;
    delete kernel_;
  }
  static Problem* problem_;
  static MatmulReference* ref_;
  static std::vector<double>* kernel_;
};
Problem* MatmulBounds::problem_ = nullptr;
MatmulReference* MatmulBounds::ref_ = nullptr;
std::vector<double>* MatmulBounds::kernel_ = nullptr;

TEST_F(MatmulBounds, FaithfulFp32AndBf16ResultsPass) {
  const BoundReport fp32 =
      check_bounds(*kernel_, ref_->c, matmul_bounds(*ref_, 4097, DType::f32, true), kSize);
  EXPECT_TRUE(fp32.ok()) << fp32.detail;
  std::vector<double> bf16(*kernel_);
  for (double& v : bf16) v = round_to_bf16(static_cast<float>(v));
  const BoundReport r =
      check_bounds(bf16, ref_->c, matmul_bounds(*ref_, 4097, DType::bf16, true), kSize);
  EXPECT_TRUE(r.ok()) << r.detail;
}

TEST_F(MatmulBounds, ZeroedTileFails) {
  std::vector<double> c(*kernel_);
  for (std::int64_t i = 4; i < 68; ++i) {
    for (std::int64_t j = 8; j < 72; ++j) c[static_cast<std::size_t>(i * kSize + j)] = 0.0;
  }
  const BoundReport r =
      check_bounds(c, ref_->c, matmul_bounds(*ref_, 4097, DType::f32, true), kSize);
  EXPECT_GT(r.outside, 4096u * 9 / 10)
      << "a zeroed 64x64 tile: " << r.outside << " elements flagged";
  EXPECT_NE(r.detail.find("outside their error bounds"), std::string::npos) << r.detail;
}

TEST_F(MatmulBounds, DroppedKTailFails) {
  const std::vector<double> c =
      fp32_matmul(*problem_, 4096);  // the last k tile (one term) left out
  const BoundReport f32 =
      check_bounds(c, ref_->c, matmul_bounds(*ref_, 4097, DType::f32, true), kSize);
  EXPECT_GT(f32.outside, 20u) << "fp32 output";
  std::vector<double> bf16(c);
  for (double& v : bf16) v = round_to_bf16(static_cast<float>(v));
  const BoundReport b =
      check_bounds(bf16, ref_->c, matmul_bounds(*ref_, 4097, DType::bf16, true), kSize);
  EXPECT_GT(b.outside, 20u) << "bf16 output";
}

TEST_F(MatmulBounds, NaNFails) {
  std::vector<double> c(*kernel_);
  c[77] = std::nan("");
  const BoundReport r =
      check_bounds(c, ref_->c, matmul_bounds(*ref_, 4097, DType::f32, true), kSize);
  EXPECT_EQ(r.outside, 1u);
  EXPECT_NE(r.detail.find("(1, 5) = nan"), std::string::npos) << r.detail;
}

// Where k is small the accumulation's share of the bound is too: fp32 output rounded to
// bf16 fails the fp32 bound.
TEST(ErrorBounds, WrongOutputRoundingFails) {
  const Problem p = random_problem(64, 64, 64, 1.0, 5);
  const MatmulReference ref = reference_matmul_host(p.a, p.b, 64, 64, 64);
  std::vector<double> c = fp32_matmul(p, 64);
  EXPECT_TRUE(check_bounds(c, ref.c, matmul_bounds(ref, 64, DType::f32, true), 64).ok());
  for (double& v : c) v = round_to_bf16(static_cast<float>(v));
  EXPECT_TRUE(check_bounds(c, ref.c, matmul_bounds(ref, 64, DType::bf16, true), 64).ok());
  EXPECT_GT(check_bounds(c, ref.c, matmul_bounds(ref, 64, DType::f32, true), 64).outside,
            64u * 64 / 2);
}

// tf32 from full fp32 values: the bound allows the inputs' rounding only when asked to.
TEST(ErrorBounds, Tf32RoundingNeedsTheInputTerm) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  const std::int64_t m = 40, n = 40, k = 300;
  std::vector<double> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n));
  std::vector<double> at(a.size()), bt(b.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    at[i] = round_to_tf32(static_cast<float>(a[i] = dist(rng)));
  for (std::size_t i = 0; i < b.size(); ++i)
    bt[i] = round_to_tf32(static_cast<float>(b[i] = dist(rng)));
  const MatmulReference ref = reference_matmul_host(a, b, m, n, k);
  const MatmulReference rounded = reference_matmul_host(at, bt, m, n, k);  // what tf32 multiplies
  EXPECT_TRUE(check_bounds(rounded.c, ref.c, matmul_bounds(ref, k, DType::f32, false), n).ok());
  EXPECT_FALSE(check_bounds(rounded.c, ref.c, matmul_bounds(ref, k, DType::f32, true), n).ok());
  EXPECT_EQ(round_to_tf32(1.0f + std::ldexp(1.0f, -11)), 1.0f + std::ldexp(1.0f, -10))
      << "ties away from zero";
  EXPECT_EQ(round_to_bf16(1.0f + std::ldexp(1.0f, -8)), 1.0f) << "ties to even";
}

// Softmax over rows of scores O(1) (the GPU tests' scaling), fp32 exps and sums on the
// host for the kernel.
TEST(ErrorBounds, SoftmaxRowsReplacedByUniformFail) {
  const std::int64_t m = 72, n = 72, k = 1000;
  const Problem p = random_problem(m, n, k, std::pow(3.0 / k, 0.25), 11);
  const MatmulReference ref = reference_matmul_host(p.a, p.b, m, n, k);
  const std::vector<double> scores = fp32_matmul(p, k);
  const std::vector<double> p_ref = reference_softmax(ref.c, m, n, true);
  const std::vector<double> got =
      host_softmax_rows(scores, m, n, [](float e, float sum) { return e / sum; });
  auto at = [](std::int64_t i, std::int64_t j) { return static_cast<std::size_t>(i * n + j); };
  for (DType out : {DType::f32, DType::bf16}) {
    std::vector<double> stored(got);
    if (out == DType::bf16) {
      for (double& v : stored) v = round_to_bf16(static_cast<float>(v));
    }
    const std::vector<double> bounds =
        softmax_bounds(p_ref, ref.c, matmul_bounds(ref, k, DType::f32, true), m, n, true, out);
    const BoundReport faithful = check_bounds(stored, p_ref, bounds, n);
    EXPECT_TRUE(faithful.ok()) << dtype_name(out) << ": " << faithful.detail;
    EXPECT_EQ(check_line_sums(stored, bounds, m, n, true), "") << dtype_name(out);
    std::vector<double> uniform(stored);
    for (std::int64_t i = 40; i < 45; ++i) {
      for (std::int64_t j = 0; j < n; ++j) uniform[at(i, j)] = 1.0 / static_cast<double>(n);
    }
    EXPECT_EQ(check_line_sums(uniform, bounds, m, n, true), "") << "uniform rows still sum to 1";
    const BoundReport r = check_bounds(uniform, p_ref, bounds, n);
    EXPECT_GT(r.outside, 5u * 72 / 2)
        << dtype_name(out) << ": five uniform rows, " << r.outside << " flagged";
  }
}

// A kernel that stores exp(s - max) in bf16 and rescales it there by 1 / sum rounds each
// output twice: two roundings' bounds take every such value, one rounding's do not, and
// uniform rows still fail.
TEST(ErrorBounds, TwoRoundingsOfRescaledExpsPassOnlyTheirOwnBounds) {
  const std::int64_t m = 72, n = 512, k = 400;
  const Problem p = random_problem(m, n, k, std::pow(3.0 / k, 0.25), 12);
  const MatmulReference ref = reference_matmul_host(p.a, p.b, m, n, k);
  const std::vector<double> scores = fp32_matmul(p, k);
  const std::vector<double> p_ref = reference_softmax(ref.c, m, n, true);
  const std::vector<double> got = host_softmax_rows(scores, m, n, [](float e, float sum) {
    return static_cast<double>(round_to_bf16(round_to_bf16(e) * (1.0f / sum)));
  });
  auto at = [](std::int64_t i, std::int64_t j) { return static_cast<std::size_t>(i * n + j); };
  const std::vector<double> score_bounds = matmul_bounds(ref, k, DType::f32, true);
  const auto twice = softmax_bounds(p_ref, ref.c, score_bounds, m, n, true, DType::bf16, 2);
  const auto once = softmax_bounds(p_ref, ref.c, score_bounds, m, n, true, DType::bf16, 1);
  const BoundReport r2 = check_bounds(got, p_ref, twice, n);
  EXPECT_TRUE(r2.ok()) << r2.detail;
  EXPECT_GT(check_bounds(got, p_ref, once, n).outside, 0u) << "one rounding's bounds are tighter";
  std::vector<double> uniform(got);
  for (std::int64_t j = 0; j < n; ++j) uniform[at(3, j)] = 1.0 / static_cast<double>(n);
  EXPECT_GT(check_bounds(uniform, p_ref, twice, n).outside, static_cast<std::size_t>(n / 2));
}

}  // namespace
}  // namespace flopline::kernels::testing
