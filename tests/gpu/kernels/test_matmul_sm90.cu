// The sm90 matmul's two tile walks: B-resident (k of at most 5 k-tiles, many row tiles)
// and streaming, each against the float64 reference, at shapes that are not tile
// multiples. test_matmul.cu covers every path at the general shapes.
#include <gtest/gtest.h>

#include <string>

#include "flopline/kernels/matmul.h"
#include "kernel_test_util.h"

namespace fk = flopline::kernels;
namespace ft = flopline::kernels::testing;

namespace {

void check_sm90(std::int64_t m, std::int64_t n, std::int64_t k, fk::DType in, fk::DType out) {
  SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + " " +
               fk::dtype_name(in) + "->" + fk::dtype_name(out));
  ft::DeviceBuffer a, b;
  const auto ha = ft::random_device_values(a, m * k, in);
  const auto hb = ft::random_device_values(b, k * n, in);
  ft::DeviceBuffer c(static_cast<std::size_t>(m * n) * fk::dtype_bytes(out));
  ft::poison_nan(c);
  const fk::MatmulProblem p = ft::problem(a, b, c.get(), m, n, k, in, out);
  fk::MatmulOptions o;
  o.path = fk::MatmulPath::sm90;
  fk::matmul(p, o);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const ft::MatmulReference ref = ft::reference_matmul(ha, hb, m, n, k);
  // Inputs exact in their type: only the fp32 sums and the output's rounding err.
  const ft::BoundReport r =
      ft::check_bounds(ft::download(c, m * n, out), ref.c, ft::matmul_bounds(ref, k, out, true), n);
  EXPECT_TRUE(r.ok()) << r.detail << "; seed " << ft::last_seed();
}

}  // namespace

TEST(Matmul, Sm90ResidentAndStreamingWalks) {
  if (ft::device_arch() != 90) GTEST_SKIP() << "sm90 path needs an sm_90 device";
  // B-resident (ping-pong over 64-row tiles): CTAs with odd and even tile counts, one
  // CTA with a single tile (m = 129: 3 row tiles on 2 CTAs), 5 k tiles (k = 160 in tf32,
  // 320 in bf16, the most that stays resident).
  const std::int64_t shapes[][3] = {{1000, 1024, 64}, {4100, 520, 128},
                                    {300, 2056, 24},  {129, 776, 104},
                                    {700, 776, 160},  {520, 1032, 320},    // B-resident
                                    {129, 264, 1000}, {1000, 1000, 520}};  // streaming
  for (const auto& s : shapes) {
    check_sm90(s[0], s[1], s[2], fk::DType::tf32, fk::DType::f32);
    check_sm90(s[0], s[1], s[2], fk::DType::bf16, fk::DType::bf16);
    check_sm90(s[0], s[1], s[2], fk::DType::bf16, fk::DType::f32);
  }
}

// Outputs on streaming runs are staged in shared memory and stored by TMA; each
// consumer reuses its staging buffer for its next tile once the previous stores have
// read it. 17 x 9 = 153 tiles of 128x256 on at most 132 CTAs, so some CTAs stage twice;
// k = 392 streams (more than 5 k tiles) and ends in a partial k tile; m and n end in
// partial tiles, whose rows and columns outside the matrix TMA must clip.
TEST(Matmul, Sm90StagedOutputReusesItsBuffer) {
  if (ft::device_arch() != 90) GTEST_SKIP() << "sm90 path needs an sm_90 device";
  check_sm90(2120, 2248, 392, fk::DType::bf16, fk::DType::bf16);
  check_sm90(2120, 2248, 392, fk::DType::f16, fk::DType::f16);
  check_sm90(2120, 2248, 392, fk::DType::bf16, fk::DType::f32);  // fp32: two rounds per block
  check_sm90(2120, 2248, 392, fk::DType::tf32, fk::DType::f32);
}
