// softmax(A x B) over rows and columns against a float64 reference: every input type,
// both output types, every scheme (one launch; the Hopper cluster rows, group rows,
// split k and sweeps, recompute for k <= 320 and rescale above; unfused), sizes that are
// and are not tile multiples.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "flopline/kernels/softmax.h"
#include "kernel_test_util.h"

namespace fk = flopline::kernels;
namespace ft = flopline::kernels::testing;

namespace {

struct Case {
  std::int64_t m, n, k;
  fk::DType in, out;
  fk::SoftmaxDim dim;
  fk::MatmulPath path;
  fk::SoftmaxScheme scheme = fk::SoftmaxScheme::automatic;
  std::size_t out_offset = 0;  // elements: an output pointer off the 8-byte alignment
};

std::string describe(const Case& c) {
  return std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + " " +
         fk::dtype_name(c.in) + "->" + fk::dtype_name(c.out) + " " + fk::softmax_dim_name(c.dim) +
         " path=" + fk::matmul_path_name(c.path) + " scheme=" + fk::softmax_scheme_name(c.scheme) +
         " offset=" + std::to_string(c.out_offset);
}

// Plans that store exp(s - partial max) in the output and rescale it there round the
// output twice.
int output_roundings(fk::SoftmaxPlan plan) {
  switch (plan) {
    case fk::SoftmaxPlan::rows_exps_then_pass:
    case fk::SoftmaxPlan::rows_rescale_in_launch:
    case fk::SoftmaxPlan::swapped_rows_exps_then_pass:
    case fk::SoftmaxPlan::swapped_rows_exps_beside_pass:
    case fk::SoftmaxPlan::swapped_cols_rescale:
      return 2;
    default:
      return 1;
  }
}

void check(const Case& c) {
  SCOPED_TRACE(describe(c));
  // Inputs scaled so the scores are O(1) whatever k: softmax of huge scores is one-hot
  // and would hide errors.
  const double r = std::pow(3.0 / static_cast<double>(c.k), 0.25);
  ft::DeviceBuffer a, b;
  const auto ha = ft::random_device_values(a, c.m * c.k, c.in, -r, r);
  const std::uint64_t seed_a = ft::last_seed();
  const auto hb = ft::random_device_values(b, c.k * c.n, c.in, -r, r);
  const std::uint64_t seed_b = ft::last_seed();
  const std::size_t elem = fk::dtype_bytes(c.out);
  ft::DeviceBuffer out((static_cast<std::size_t>(c.m * c.n) + c.out_offset) * elem);
  ft::poison_nan(out);
  const fk::MatmulProblem p = ft::problem(a, b, static_cast<char*>(out.get()) + c.out_offset * elem,
                                          c.m, c.n, c.k, c.in, c.out);
  fk::MatmulSoftmaxOptions o;
  o.dim = c.dim;
  o.path = c.path;
  o.scheme = c.scheme;
  fk::matmul_softmax(p, o);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto got = ft::download(out, c.m * c.n + static_cast<std::int64_t>(c.out_offset), c.out);
  for (std::size_t i = 0; i < c.out_offset; ++i)
    ASSERT_TRUE(std::isnan(got[i])) << "wrote before the output";
  got.erase(got.begin(), got.begin() + static_cast<std::ptrdiff_t>(c.out_offset));
  // Every element within its bound of the float64 softmax of the float64 scores (the
  // inputs are exact in their types: tf32 ones are rounded to tf32), and every line sums
  // to 1 within its elements' bounds.
  const bool rows = c.dim == fk::SoftmaxDim::rows;
  const ft::MatmulReference scores = ft::reference_matmul(ha, hb, c.m, c.n, c.k);
  const std::vector<double> ref = ft::reference_softmax(scores.c, c.m, c.n, rows);
  const std::vector<double> bounds =
      ft::softmax_bounds(ref, scores.c, ft::matmul_bounds(scores, c.k, fk::DType::f32, true), c.m,
                         c.n, rows, c.out, output_roundings(fk::matmul_softmax_plan(p, o).plan));
  const ft::BoundReport report = ft::check_bounds(got, ref, bounds, c.n);
  EXPECT_TRUE(report.ok()) << report.detail << "; seeds " << seed_a << " " << seed_b;
  const std::string sums = ft::check_line_sums(got, bounds, c.m, c.n, rows);
  EXPECT_EQ(sums, "") << "seeds " << seed_a << " " << seed_b;
}

const std::int64_t kShapes[][3] = {
    {1, 1, 1},        {7, 17, 13},      {128, 128, 128}, {1000, 1000, 64}, {300, 2048, 128},
    {129, 520, 1000}, {4097, 256, 333}, {64, 4100, 40},  {17, 4097, 17},
};

// A row scheme by name on every shape, with tf32 -> fp32, bf16 -> bf16 and bf16 -> fp32.
template <std::size_t N>
void check_row_scheme(const std::int64_t (&shapes)[N][3], fk::SoftmaxScheme scheme) {
  const auto rows = fk::SoftmaxDim::rows;
  const auto path = fk::MatmulPath::automatic;
  for (const auto& s : shapes) {
    check({s[0], s[1], s[2], fk::DType::tf32, fk::DType::f32, rows, path, scheme});
    check({s[0], s[1], s[2], fk::DType::bf16, fk::DType::bf16, rows, path, scheme});
    check({s[0], s[1], s[2], fk::DType::bf16, fk::DType::f32, rows, path, scheme});
  }
}

}  // namespace

TEST(MatmulSoftmax, FusedAndFallbackMatchFloat64) {
  const bool hopper = ft::device_arch() == 90;
  for (const auto& s : kShapes) {
    for (auto dim : {fk::SoftmaxDim::rows, fk::SoftmaxDim::cols}) {
      check({s[0], s[1], s[2], fk::DType::tf32, fk::DType::f32, dim, fk::MatmulPath::automatic});
      check({s[0], s[1], s[2], fk::DType::bf16, fk::DType::bf16, dim, fk::MatmulPath::automatic});
      check({s[0], s[1], s[2], fk::DType::bf16, fk::DType::f32, dim, fk::MatmulPath::automatic});
      check({s[0], s[1], s[2], fk::DType::f32, fk::DType::f32, dim, fk::MatmulPath::automatic});
      check({s[0], s[1], s[2], fk::DType::bf16, fk::DType::f32, dim, fk::MatmulPath::sm80,
             fk::SoftmaxScheme::unfused});
      if (hopper && s[1] % 8 == 0 && s[2] % 8 == 0) {
        check({s[0], s[1], s[2], fk::DType::tf32, fk::DType::f32, dim, fk::MatmulPath::sm90,
               fk::SoftmaxScheme::sweeps});
      }
    }
  }
}

// The sweeps stage their output for TMA stores (as the matmul does): 16-bit in one
// round, fp32 in eight rounds on two alternating buffers. k = 392 (rescale; recompute
// for bf16 -> fp32 rows, SweepsRowsBf16ToFp32AroundTheRecomputeLimit): more tiles than CTAs
// (17 x 9 = 153), so staging buffers are reused, and partial tiles in m and n. k = 200
// (recompute, whose first sweep writes nothing) with one row tile: it streams there
// instead of keeping B resident.
TEST(MatmulSoftmax, SweepsWithStagedOutput) {
  if (ft::device_arch() != 90) GTEST_SKIP() << "the sweeps scheme needs an sm_90 device";
  const fk::DType pairs[][2] = {{fk::DType::bf16, fk::DType::bf16},
                                {fk::DType::bf16, fk::DType::f32},
                                {fk::DType::tf32, fk::DType::f32}};
  for (auto dim : {fk::SoftmaxDim::rows, fk::SoftmaxDim::cols}) {
    for (const auto& t : pairs) {
      check(
          {2120, 2248, 392, t[0], t[1], dim, fk::MatmulPath::automatic, fk::SoftmaxScheme::sweeps});
      check(
          {100, 2248, 200, t[0], t[1], dim, fk::MatmulPath::automatic, fk::SoftmaxScheme::sweeps});
    }
  }
}

// bf16 -> fp32 rows recompute up to k = 768 (two streaming sweeps, B not resident past
// k = 320) and rescale in separate passes above, up to the in-launch rescale's k = 2048:
// both sides of the limit, with more tiles than CTAs (17 x 9 = 153), partial tiles, and
// k = 776 off the 64-wide k tile.
TEST(MatmulSoftmax, SweepsRowsBf16ToFp32AroundTheRecomputeLimit) {
  if (ft::device_arch() != 90) GTEST_SKIP() << "the sweeps scheme needs an sm_90 device";
  for (std::int64_t k : {768, 776}) {
    check({2120, 2248, k, fk::DType::bf16, fk::DType::f32, fk::SoftmaxDim::rows,
           fk::MatmulPath::automatic, fk::SoftmaxScheme::sweeps});
  }
}

// Rows past the recompute range finish in one pass over the output: with fp32 output
// the sweep stores the scores and their block maxima and the pass makes the softmax (a
// row in registers: 8192 columns per round of the block, 16384 at most), otherwise the
// sweep stores exps and the pass merges each row's statistics and rescales it (rounds
// of 8192 columns). n = 8200 takes the wider register path or a second round, n = 16392
// with fp32 output the exp path; tf32 (swapped core, 128-column blocks) too. k = 904:
// past bf16 -> fp32's recompute range, off the k tile.
TEST(MatmulSoftmax, SweepsRowsFinishInOnePass) {
  if (ft::device_arch() != 90) GTEST_SKIP() << "the sweeps scheme needs an sm_90 device";
  const std::int64_t shapes[][3] = {{300, 8200, 904}, {40, 16392, 904}};
  check_row_scheme(shapes, fk::SoftmaxScheme::sweeps);
}

// Columns run on the swapped core (C^T = B^T A^T, 256x128 tiles, statistics per 256-row
// tile): recompute (k <= 320: a statistics sweep, then the normalizing one) and
// rescale, fp32 and bf16 output (16-bit staging), with more tiles than CTAs (18 x 8 =
// 144), m and n off the tile sizes, k off the k tile, and a single partial row tile
// (m = 40).
TEST(MatmulSoftmax, SweepsColumnsOnTheSwappedCore) {
  if (ft::device_arch() != 90) GTEST_SKIP() << "the sweeps scheme needs an sm_90 device";
  const std::int64_t shapes[][3] = {
      {4500, 1000, 96}, {4500, 1000, 360}, {40, 520, 200}, {40, 520, 1000}};
  const fk::DType pairs[][2] = {{fk::DType::tf32, fk::DType::f32},
                                {fk::DType::bf16, fk::DType::f32},
                                {fk::DType::bf16, fk::DType::bf16}};
  for (const auto& s : shapes) {
    for (const auto& t : pairs) {
      check({s[0], s[1], s[2], t[0], t[1], fk::SoftmaxDim::cols, fk::MatmulPath::automatic,
             fk::SoftmaxScheme::sweeps});
    }
  }
}

// tf32 rows with k > 320 run the rescale sweep on the swapped core (statistics per row
// and 128-column tile, gathered across lanes, warps and both consumers in shared
// memory): columns past n in the last column tile (n = 1000, 136, 520), a single partial
// row tile (m = 40), more tiles than CTAs (18 x 8), k off the k tile.
TEST(MatmulSoftmax, SweepsRowsOnTheSwappedCore) {
  if (ft::device_arch() != 90) GTEST_SKIP() << "the sweeps scheme needs an sm_90 device";
  const std::int64_t shapes[][3] = {
      {4500, 1000, 360}, {40, 520, 1000}, {300, 136, 2000}, {2048, 4096, 512}};
  for (const auto& s : shapes) {
    check({s[0], s[1], s[2], fk::DType::tf32, fk::DType::f32, fk::SoftmaxDim::rows,
           fk::MatmulPath::automatic, fk::SoftmaxScheme::sweeps});
  }
}

// From k = 4096 the tf32 row sweep counts each 256-row block's tiles as they land and
// the row pass starts beside it, each row waiting for its block (after the max with
// n <= 16384, combine and rescale past it: n = 16392): more
// tiles than CTAs (11 x 13 = 143, so a second wave with idle SMs), a partial last row
// block (2600 = 10 x 256 + 40), a single partial row block (m = 40, 300), columns past
// n (136, 520), k off the k tile (4100).
TEST(MatmulSoftmax, SweepsRowsOnTheSwappedCoreOverlapTheirPass) {
  if (ft::device_arch() != 90) GTEST_SKIP() << "the sweeps scheme needs an sm_90 device";
  const std::int64_t shapes[][3] = {
      {2600, 1664, 4096}, {300, 136, 4100}, {40, 520, 4096}, {40, 16392, 4096}};
  for (const auto& s : shapes) {
    check({s[0], s[1], s[2], fk::DType::tf32, fk::DType::f32, fk::SoftmaxDim::rows,
           fk::MatmulPath::automatic, fk::SoftmaxScheme::sweeps});
  }
}

// Scores of +-100 and more (exp overflows fp32 past 88): each tile's shift must be its
// rows' true maximum. Against the float64 softmax of the float64 scores: the inputs are
// exact in their types (tf32 ones rounded to tf32), so only the fp32 sums separate the
// kernel's scores from the reference's (error_bounds.h). tf32 runs on the swapped core,
// bf16 -> fp32 recomputes at k = 520 and rescales in the sweep's launch at k = 2048.
TEST(MatmulSoftmax, SweepsRowsWithLargeScores) {
  if (ft::device_arch() != 90) GTEST_SKIP() << "the sweeps scheme needs an sm_90 device";
  const std::int64_t m = 1000, n = 1000;
  const std::pair<fk::DType, std::int64_t> runs[] = {
      {fk::DType::tf32, 520}, {fk::DType::bf16, 520}, {fk::DType::bf16, 2048}};
  for (const auto& [in, k] : runs) {
    SCOPED_TRACE(std::string(fk::dtype_name(in)) + " k " + std::to_string(k));
    const double r = 6.0 * std::pow(3.0 / static_cast<double>(k), 0.25);  // scores' spread ~21
    ft::DeviceBuffer a, b, fused(m * n * 4);
    const auto ha = ft::random_device_values(a, m * k, in, -r, r);
    const std::uint64_t seed_a = ft::last_seed();
    const auto hb = ft::random_device_values(b, k * n, in, -r, r);
    const std::uint64_t seed_b = ft::last_seed();
    ft::poison_nan(fused);
    fk::MatmulSoftmaxOptions o;
    o.scheme = fk::SoftmaxScheme::sweeps;
    fk::matmul_softmax(ft::problem(a, b, fused.get(), m, n, k, in, fk::DType::f32), o);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto got = ft::download(fused, m * n, fk::DType::f32);
    const ft::MatmulReference scores = ft::reference_matmul(ha, hb, m, n, k);
    double spread = 0;
    for (double s : scores.c) spread = std::max(spread, std::fabs(s));
    EXPECT_GT(spread, 88) << "the scores should be large enough to overflow exp without the shift";
    const auto ref = ft::reference_softmax(scores.c, m, n, true);
    double largest = 0;
    for (double v : ref) largest = std::max(largest, v);
    EXPECT_GT(largest, 0.5) << "the scores should be large enough to make rows nearly one-hot";
    const std::vector<double> bounds =
        ft::softmax_bounds(ref, scores.c, ft::matmul_bounds(scores, k, fk::DType::f32, true), m, n,
                           true, fk::DType::f32);
    const ft::BoundReport report = ft::check_bounds(got, ref, bounds, n);
    EXPECT_TRUE(report.ok()) << report.detail << "; seeds " << seed_a << " " << seed_b;
  }
}

// A NaN in row 5 of A makes every score of row 5 NaN: that row of the softmax is NaN
// (as PyTorch's is) and the other rows are untouched and sum to 1. The swapped core's row
// sweep stores raw scores (n <= 16384: the pass after the max carries the NaN) or, for
// wider rows (n = 16392), adds its sums in fixed point (where a NaN would turn into 0)
// and its NaN-propagating tile max carries the NaN instead. Also the rows past the
// recompute range on the transposing core (scores then one pass with fp32 output; exps,
// then the merged pass with bf16 output) and tf32 with the pass beside the sweep (k =
// 4096).
namespace {
void expect_only_the_nan_row_nan(fk::DType in, fk::DType out_type, std::int64_t k,
                                 fk::SoftmaxScheme scheme = fk::SoftmaxScheme::sweeps,
                                 std::int64_t n = 520) {
  SCOPED_TRACE(std::string(fk::dtype_name(in)) + " -> " + fk::dtype_name(out_type) + " k " +
               std::to_string(k) + " n " + std::to_string(n) + " " +
               fk::softmax_scheme_name(scheme));
  const std::int64_t m = 300, nan_row = 5;
  ft::DeviceBuffer a, b, out(m * n * fk::dtype_bytes(out_type));
  ft::random_device_values(a, m * k, in, -0.3, 0.3);
  ft::random_device_values(b, k * n, in, -0.3, 0.3);
  const std::size_t at = static_cast<std::size_t>(nan_row * k + 7);
  if (in == fk::DType::bf16) {
    const std::uint16_t nan = 0x7FC0;  // a bf16 quiet NaN
    ASSERT_EQ(
        cudaMemcpy(static_cast<std::uint16_t*>(a.get()) + at, &nan, 2, cudaMemcpyHostToDevice),
        cudaSuccess);
  } else {
    const float nan = std::nanf("");
    ASSERT_EQ(cudaMemcpy(static_cast<float*>(a.get()) + at, &nan, 4, cudaMemcpyHostToDevice),
              cudaSuccess);
  }
  ft::poison_nan(out);
  fk::MatmulSoftmaxOptions o;
  o.scheme = scheme;
  fk::matmul_softmax(ft::problem(a, b, out.get(), m, n, k, in, out_type), o);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto got = ft::download(out, m * n, out_type);
  const double sum_tol = out_type == fk::DType::bf16 ? 2e-2 : 1e-4;
  for (std::int64_t r = 0; r < m; ++r) {
    double sum = 0;
    int nans = 0;
    for (std::int64_t c = 0; c < n; ++c) {
      const double v = got[static_cast<std::size_t>(r * n + c)];
      nans += std::isnan(v) ? 1 : 0;
      sum += v;
    }
    if (r == nan_row) {
      EXPECT_EQ(nans, n) << "row " << r;
    } else {
      ASSERT_EQ(nans, 0) << "row " << r;
      ASSERT_NEAR(sum, 1.0, sum_tol) << "row " << r;
    }
  }
}
}  // namespace

TEST(MatmulSoftmax, SweepsRowsKeepNaNRows) {
  if (ft::device_arch() != 90) GTEST_SKIP() << "the sweeps scheme needs an sm_90 device";
  expect_only_the_nan_row_nan(fk::DType::tf32, fk::DType::f32, 400);
  expect_only_the_nan_row_nan(fk::DType::tf32, fk::DType::f32, 4096);
  expect_only_the_nan_row_nan(fk::DType::tf32, fk::DType::f32, 400, fk::SoftmaxScheme::sweeps,
                              16392);
  expect_only_the_nan_row_nan(fk::DType::bf16, fk::DType::f32, 904);
  expect_only_the_nan_row_nan(fk::DType::bf16, fk::DType::bf16, 904);
}

// split_k: the row pass's max skips the NaN (fmaxf), and its exp and sum carry it.
TEST(MatmulSoftmax, SplitKKeepsNaNRows) {
  if (ft::device_arch() != 90) GTEST_SKIP() << "the split_k scheme needs an sm_90 device";
  expect_only_the_nan_row_nan(fk::DType::tf32, fk::DType::f32, 1000, fk::SoftmaxScheme::split_k);
  expect_only_the_nan_row_nan(fk::DType::bf16, fk::DType::bf16, 1000, fk::SoftmaxScheme::split_k);
}

// bf16 -> fp32 rows with k >= 2048 rescale in the sweep's own launch: the producer
// warpgroup's idle warps scale each tile once every tile of its 128-row block is in
// memory (softmax_rescale_in_launch.cuh). A partial last column tile (n = 1000; n =
// 2056, whose last tile has 8 columns), a single partial row tile (m = 40) with k not a
// multiple of the 64-wide k tile, several tiles per CTA (65 x 9 = 585 tiles at 8200 x
// 2056) with the last row block cut by m (8200 = 64 x 128 + 8). bf16 output at the same
// shapes takes the separate passes.
TEST(MatmulSoftmax, SweepsRowsRescaledInLaunch) {
  if (ft::device_arch() != 90) GTEST_SKIP() << "the sweeps scheme needs an sm_90 device";
  const std::int64_t shapes[][3] = {{4500, 1000, 2048}, {40, 520, 2056}, {8200, 2056, 2048}};
  for (const auto& s : shapes) {
    for (auto out : {fk::DType::f32, fk::DType::bf16}) {
      check({s[0], s[1], s[2], fk::DType::bf16, out, fk::SoftmaxDim::rows,
             fk::MatmulPath::automatic, fk::SoftmaxScheme::sweeps});
    }
  }
}

// The one-launch scheme by name at every shape (all fit the resident CTAs), with the
// statistics in the output buffer, and in scratch memory when the output pointer is only
// 4-byte aligned or the output is smaller than the statistics (1x1).
TEST(MatmulSoftmax, OneLaunchMatchesFloat64) {
  if (ft::device_arch() < 80) GTEST_SKIP() << "the one-launch scheme needs sm_80";
  for (const auto& s : kShapes) {
    for (auto dim : {fk::SoftmaxDim::rows, fk::SoftmaxDim::cols}) {
      const auto one = fk::SoftmaxScheme::one_launch;
      check(
          {s[0], s[1], s[2], fk::DType::tf32, fk::DType::f32, dim, fk::MatmulPath::automatic, one});
      check({s[0], s[1], s[2], fk::DType::bf16, fk::DType::bf16, dim, fk::MatmulPath::automatic,
             one});
      check({s[0], s[1], s[2], fk::DType::bf16, fk::DType::f32, dim, fk::MatmulPath::automatic, one,
             1});
      check({s[0], s[1], s[2], fk::DType::tf32, fk::DType::f32, dim, fk::MatmulPath::automatic, one,
             1});
    }
  }
}

// The cluster_rows scheme (Hopper, rows) by name: 1 to 16 CTAs per cluster, B-resident
// (k <= 160 tf32 / 320 bf16: 64-row tiles ping-ponged) and streaming (128-row tiles),
// m and n off the tile sizes, CTAs with odd and even tile counts, a cluster whose last
// CTA is mostly past n.
TEST(MatmulSoftmax, ClusterRowsMatchesFloat64) {
  if (ft::device_arch() != 90) GTEST_SKIP() << "the cluster_rows scheme needs an sm_90 device";
  const std::int64_t shapes[][3] = {
      {300, 2048, 128}, {1000, 520, 64},  {4097, 256, 96},    {2100, 2048, 160}, {777, 1288, 320},
      {64, 1024, 40},   {129, 4096, 336}, {1100, 1000, 1000}, {96, 296, 8},      {8200, 1792, 32},
  };
  check_row_scheme(shapes, fk::SoftmaxScheme::cluster_rows);
}

// The group_rows scheme (Hopper, rows) by name: groups of 1 to 40 CTAs (n up to 10240,
// past the clusters' 16), B-resident (64-row tiles ping-ponged) and streaming, more row
// tiles than groups (several exchanges per CTA), m and n off the tile sizes, a group
// whose last CTA is mostly past n.
TEST(MatmulSoftmax, GroupRowsMatchesFloat64) {
  if (ft::device_arch() != 90) GTEST_SKIP() << "the group_rows scheme needs an sm_90 device";
  const std::int64_t shapes[][3] = {
      {300, 2048, 128},   {1000, 520, 64}, {4097, 256, 96},   {777, 1288, 320},  {129, 4096, 336},
      {1100, 1000, 1000}, {96, 296, 8},    {2500, 4000, 392}, {300, 10240, 520}, {4100, 4096, 400},
  };
  check_row_scheme(shapes, fk::SoftmaxScheme::group_rows);
}

// The split_k scheme (Hopper) by name: k cut into ranges over few 256x128 tiles of the
// swapped core, partial scores in scratch slabs, one pass per row (rows) or the column
// softmax's kernels adding the slabs as they read (columns: one block per strip for
// short columns, row chunks for the tall 4097 x 256). 1024^3 (32 tiles,
// 4 ranges); m and n off the tiles with ranges of unequal length (k = 904: 29 tf32 k
// tiles in 6 ranges, the last of 4; 15 bf16 k tiles in 3 ranges, the last of 5); a single
// partial tile (40 x 520) and one tile split 8 ways (256 x 128 x 2056, k off the k
// tile); a tall problem of 34 tiles (k = 520: 3 tf32 ranges, 2 bf16); rows of 8192 and
// 8200 columns (the pass's widest register paths).
TEST(MatmulSoftmax, SplitKMatchesFloat64) {
  if (ft::device_arch() != 90) GTEST_SKIP() << "the split_k scheme needs an sm_90 device";
  const std::int64_t shapes[][3] = {
      {1024, 1024, 1024}, {300, 1000, 904}, {40, 520, 1000}, {256, 128, 2056},
      {4097, 256, 520},   {128, 8192, 512}, {64, 8200, 512},
  };
  check_row_scheme(shapes, fk::SoftmaxScheme::split_k);
  for (const auto& s : shapes) {
    check({s[0], s[1], s[2], fk::DType::tf32, fk::DType::f32, fk::SoftmaxDim::cols,
           fk::MatmulPath::automatic, fk::SoftmaxScheme::split_k});
    check({s[0], s[1], s[2], fk::DType::bf16, fk::DType::bf16, fk::SoftmaxDim::cols,
           fk::MatmulPath::automatic, fk::SoftmaxScheme::split_k});
  }
}

TEST(MatmulSoftmax, SchemeThatCannotTakeTheProblemThrows) {
  ft::DeviceBuffer buf(1 << 20);
  ft::poison_nan(buf);
  fk::MatmulProblem p;
  p.a = p.b = p.c = buf.get();
  p.m = p.n = 16384;  // 65536 tiles of 64x64: more than any GPU keeps resident
  p.k = 16;
  p.in = fk::DType::tf32;
  p.out = fk::DType::f32;
  fk::MatmulSoftmaxOptions o;
  o.scheme = fk::SoftmaxScheme::one_launch;
  EXPECT_THROW(fk::matmul_softmax(p, o), fk::KernelError);
  p.m = p.n = 64;
  p.in = fk::DType::f32;  // FFMA inputs: no tensor-core scheme
  EXPECT_THROW(fk::matmul_softmax(p, o), fk::KernelError);
  o.scheme = fk::SoftmaxScheme::sweeps;
  EXPECT_THROW(fk::matmul_softmax(p, o), fk::KernelError);
  o.scheme = fk::SoftmaxScheme::cluster_rows;
  EXPECT_THROW(fk::matmul_softmax(p, o), fk::KernelError);  // fp32 inputs
  p.in = fk::DType::tf32;
  o.dim = fk::SoftmaxDim::cols;
  EXPECT_THROW(fk::matmul_softmax(p, o), fk::KernelError);  // columns
  o.dim = fk::SoftmaxDim::rows;
  p.n = 4352;  // 17 column tiles: more than a cluster holds
  EXPECT_THROW(fk::matmul_softmax(p, o), fk::KernelError);
  o.scheme = fk::SoftmaxScheme::group_rows;
  p.n = 256 * 1024;  // 1024 column tiles: more than any GPU's SMs
  EXPECT_THROW(fk::matmul_softmax(p, o), fk::KernelError);
  p.n = 4352;
  o.dim = fk::SoftmaxDim::cols;
  EXPECT_THROW(fk::matmul_softmax(p, o), fk::KernelError);  // columns
  o.dim = fk::SoftmaxDim::rows;
  o.scheme = fk::SoftmaxScheme::split_k;
  p.m = p.n = 4096;  // 512 tiles of 256x128: more than half of any GPU's SMs
  p.k = 1024;
  EXPECT_THROW(fk::matmul_softmax(p, o), fk::KernelError);
  p.m = p.n = 1024;
  p.k = 224;  // 7 tf32 k tiles: too few to split
  EXPECT_THROW(fk::matmul_softmax(p, o), fk::KernelError);
  p.k = 1024;
  p.in = fk::DType::f32;
  EXPECT_THROW(fk::matmul_softmax(p, o), fk::KernelError);  // FFMA inputs
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto after = ft::download(buf, 16, fk::DType::f32);
  for (double v : after) EXPECT_TRUE(std::isnan(v)) << "nothing ran";
}

TEST(MatmulSoftmax, ArgumentErrorsThrowBeforeLaunch) {
  ft::DeviceBuffer buf(1 << 20);
  ft::poison_nan(buf);
  fk::MatmulProblem p;
  p.a = buf.get();
  p.b = buf.get();
  p.c = nullptr;
  p.m = p.n = p.k = 16;
  p.in = fk::DType::bf16;
  p.out = fk::DType::bf16;
  EXPECT_THROW(fk::matmul_softmax(p), fk::KernelError);
  p.c = buf.get();
  p.k = 0;
  EXPECT_THROW(fk::matmul_softmax(p), fk::KernelError);
  p.k = 16;
  p.in = fk::DType::tf32;
  p.out = fk::DType::bf16;  // tf32 writes fp32 only
  EXPECT_THROW(fk::matmul_softmax(p), fk::KernelError);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto after = ft::download(buf, 16, fk::DType::f32);
  for (double v : after) EXPECT_TRUE(std::isnan(v)) << "nothing ran";
}
