// The standalone softmax against a float64 reference on the host, over rows and over
// columns: every (input, output) type pair, shapes that take each scheme (rows in
// registers with vector or scalar accesses, rows too long for registers; columns in one
// kernel or split over row chunks), odd offsets, in place, large inputs. Outputs are
// poisoned with NaN before each run and the elements around the output must keep it.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "flopline/kernels/softmax.h"
#include "kernel_test_util.h"

namespace flopline::kernels::testing {
namespace {

struct Types {
  DType in, out;
};
const Types kTypes[] = {
    {DType::f32, DType::f32},
    {DType::bf16, DType::bf16},
    {DType::bf16, DType::f32},
    {DType::f16, DType::f16},
    {DType::f16, DType::f32},
    {DType::f32, DType::bf16},  // fp32 scores to 16 bits: matmul_softmax's fallback
    {DType::f32, DType::f16}};

struct Shape {
  std::int64_t m, n;
};

// Error bounds on the output type: per element |out - ref| <= atol + rtol * ref (fp32:
// exp2 and the reductions, a few ulp; 16-bit: half an ulp of rounding, fp16 subnormals
// below 6e-5), the norm-wise relative error, and |sum of a line - 1|.
struct Tolerance {
  double rtol, atol, norm, sum;
};
Tolerance tolerance(DType out) {
  switch (out) {
    case DType::bf16:
      return {8e-3, 1e-8, 2e-2, 8e-3};
    case DType::f16:
      return {1.5e-3, 1e-7, 2e-3, 2e-3};
    default:
      return {1e-5, 1e-12, 1e-5, 1e-5};
  }
}

constexpr std::int64_t kGuard = 8;  // sentinel elements each side of the output

struct Case {
  Shape shape;
  SoftmaxDim dim;
  Types types;
  std::int64_t x_offset = 0, out_offset = 0;
  double lo = -1, hi = 1;  // input range
  bool in_place = false;
};

std::string describe(const Case& c) {
  std::ostringstream s;
  s << "softmax " << softmax_dim_name(c.dim) << " " << c.shape.m << "x" << c.shape.n << " "
    << dtype_name(c.types.in) << "->" << dtype_name(c.types.out);
  if (c.x_offset || c.out_offset) s << " offsets x+" << c.x_offset << " out+" << c.out_offset;
  if (c.in_place) s << " in place";
  if (c.lo != -1 || c.hi != 1) s << " inputs in [" << c.lo << ", " << c.hi << ")";
  return s.str();
}

::testing::AssertionResult poison_intact(const DeviceBuffer& buffer, std::size_t from,
                                         std::size_t to, const char* where) {
  std::vector<unsigned char> bytes(buffer.bytes());
  FLOPLINE_CUDA_OK(cudaMemcpy(bytes.data(), buffer.get(), bytes.size(), cudaMemcpyDeviceToHost));
  for (std::size_t i = from; i < to; ++i) {
    if (bytes[i] != 0xFF) {
      return ::testing::AssertionFailure()
             << "sentinel " << where << " the output overwritten at byte " << i;
    }
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult check(const Case& c) {
  const std::int64_t m = c.shape.m, n = c.shape.n, count = m * n;
  const std::size_t in_es = dtype_bytes(c.types.in), out_es = dtype_bytes(c.types.out);
  const std::int64_t x_len = kGuard + c.x_offset + count + kGuard;
  const std::int64_t out_len = kGuard + c.out_offset + count + kGuard;
  DeviceBuffer dx(static_cast<std::size_t>(x_len) * in_es),
      dout(static_cast<std::size_t>(out_len) * out_es);
  const std::vector<double> x_all = random_device_values(dx, x_len, c.types.in, c.lo, c.hi);
  const std::uint64_t seed = last_seed();
  const std::vector<double> x(x_all.begin() + kGuard + c.x_offset,
                              x_all.begin() + kGuard + c.x_offset + count);
  if (!c.in_place) poison_nan(dout);

  SoftmaxProblem p;
  p.x = static_cast<const char*>(dx.get()) + (kGuard + c.x_offset) * in_es;
  p.out = c.in_place ? const_cast<void*>(p.x)
                     : static_cast<char*>(dout.get()) + (kGuard + c.out_offset) * out_es;
  p.m = m;
  p.n = n;
  p.in = c.types.in;
  p.out_type = c.types.out;
  try {
    softmax(p, c.dim);
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << describe(c) << ": threw " << e.what();
  }
  FLOPLINE_CUDA_OK(cudaDeviceSynchronize());

  const DeviceBuffer& result = c.in_place ? dx : dout;
  const std::int64_t first = kGuard + (c.in_place ? c.x_offset : c.out_offset);
  const std::vector<double> all = download(result, c.in_place ? x_len : out_len, c.types.out);
  const std::vector<double> got(all.begin() + first, all.begin() + first + count);
  const std::vector<double> want = reference_softmax(x, m, n, c.dim == SoftmaxDim::rows);
  const Tolerance tol = tolerance(c.types.out);
  for (std::int64_t i = 0; i < count; ++i) {
    const std::size_t k = static_cast<std::size_t>(i);
    if (!(std::fabs(got[k] - want[k]) <= tol.atol + tol.rtol * want[k])) {
      return ::testing::AssertionFailure()
             << describe(c) << ": element (" << i / n << ", " << i % n << ") = " << got[k]
             << ", want " << want[k] << "; seed " << seed;
    }
  }
  const double err = relative_error(got, want);
  if (!(err < tol.norm)) {
    return ::testing::AssertionFailure()
           << describe(c) << ": relative error " << err << "; seed " << seed;
  }
  // Each line (a row, or a column) sums to 1.
  const bool rows = c.dim == SoftmaxDim::rows;
  const std::int64_t lines = rows ? m : n, len = rows ? n : m;
  for (std::int64_t l = 0; l < lines; ++l) {
    double sum = 0;
    for (std::int64_t i = 0; i < len; ++i)
      sum += got[static_cast<std::size_t>(rows ? l * n + i : i * n + l)];
    if (!(std::fabs(sum - 1.0) <= tol.sum)) {
      return ::testing::AssertionFailure() << describe(c) << ": " << (rows ? "row " : "column ")
                                           << l << " sums to " << sum << "; seed " << seed;
    }
  }
  if (!c.in_place) {
    const std::size_t begin = static_cast<std::size_t>(first) * out_es;
    const std::size_t end = static_cast<std::size_t>(first + count) * out_es;
    ::testing::AssertionResult before = poison_intact(dout, 0, begin, "before");
    if (!before) return before << " (" << describe(c) << ")";
    ::testing::AssertionResult after = poison_intact(dout, end, dout.bytes(), "after");
    if (!after) return after << " (" << describe(c) << ")";
  }
  return ::testing::AssertionSuccess();
}

// Degenerate and odd sizes, then shapes at the edges of each scheme.
const Shape kShapes[] = {{1, 1}, {7, 17}, {128, 4097}, {1000, 128}, {4097, 7}};

void check_all(SoftmaxDim dim, const std::vector<Shape>& extra) {
  std::vector<Shape> shapes(std::begin(kShapes), std::end(kShapes));
  shapes.insert(shapes.end(), extra.begin(), extra.end());
  int failures = 0;
  for (const Types& t : kTypes) {
    for (const Shape& s : shapes) {
      Case c;
      c.shape = s;
      c.dim = dim;
      c.types = t;
      const ::testing::AssertionResult r = check(c);
      EXPECT_TRUE(r);
      if (!r && ++failures >= 5) {
        ADD_FAILURE() << "stopping after 5 failures";
        return;
      }
    }
  }
}

// Rows: 512 fills a warp's registers, 513 takes two warps; 16384 is the longest row held
// in registers (1024 threads), 16385 and 40000 run the two-read scheme.
TEST(Softmax, Rows) {
  check_all(SoftmaxDim::rows, {{33, 512}, {9, 513}, {3, 16384}, {2, 16385}, {5, 40000}});
}

// Columns: 20000x5 splits into many row chunks, 64x33 has a partial strip, 300x2049 is
// split with a strip of one column.
TEST(Softmax, Cols) {
  check_all(SoftmaxDim::cols, {{64, 33}, {20000, 5}, {300, 2049}, {2, 40000}});
}

// Rows whose starts are not 16-byte aligned take the scalar path; the columns don't care
// but must still be right.
TEST(Softmax, OddOffsets) {
  for (SoftmaxDim dim : {SoftmaxDim::rows, SoftmaxDim::cols}) {
    for (const Types& t : {Types{DType::f32, DType::f32}, Types{DType::bf16, DType::bf16},
                           Types{DType::f16, DType::f32}}) {
      for (Shape s : {Shape{1000, 128}, Shape{64, 20000}, Shape{7, 17}}) {
        Case c;
        c.shape = s;
        c.dim = dim;
        c.types = t;
        c.x_offset = 1;
        c.out_offset = 3;
        EXPECT_TRUE(check(c));
      }
    }
  }
}

// out == x: every scheme reads what it needs before writing over it.
TEST(Softmax, InPlace) {
  for (SoftmaxDim dim : {SoftmaxDim::rows, SoftmaxDim::cols}) {
    for (const Types& t : {Types{DType::f32, DType::f32}, Types{DType::bf16, DType::bf16}}) {
      for (Shape s : {Shape{1000, 128}, Shape{2, 40000}, Shape{4097, 7}, Shape{256, 2048}}) {
        Case c;
        c.shape = s;
        c.dim = dim;
        c.types = t;
        c.in_place = true;
        EXPECT_TRUE(check(c));
      }
    }
  }
}

// Inputs whose exp overflows fp32 without the max subtraction (e^100).
TEST(Softmax, LargeInputs) {
  for (SoftmaxDim dim : {SoftmaxDim::rows, SoftmaxDim::cols}) {
    for (Shape s : {Shape{128, 4097}, Shape{64, 20000}, Shape{4097, 7}}) {
      Case c;
      c.shape = s;
      c.dim = dim;
      c.types = {DType::f32, DType::f32};
      c.lo = -100;
      c.hi = 100;
      EXPECT_TRUE(check(c));
    }
  }
}

// A 4096x4096 matrix: the benchmark's shape, both dims.
TEST(Softmax, BenchShape) {
  for (SoftmaxDim dim : {SoftmaxDim::rows, SoftmaxDim::cols}) {
    Case c;
    c.shape = {4096, 4096};
    c.dim = dim;
    c.types = {DType::f32, DType::f32};
    EXPECT_TRUE(check(c));
  }
}

TEST(Softmax, EmptyIsANoOp) {
  SoftmaxProblem p;  // null pointers
  p.m = 0;
  p.n = 128;
  EXPECT_NO_THROW(softmax(p, SoftmaxDim::rows));
  p.m = 128;
  p.n = 0;
  EXPECT_NO_THROW(softmax(p, SoftmaxDim::cols));
}

template <class Fn>
void expect_kernel_error(Fn fn, const std::string& needle) {
  try {
    fn();
    ADD_FAILURE() << "no KernelError; expected one mentioning \"" << needle << "\"";
  } catch (const KernelError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << "message: " << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected KernelError mentioning \"" << needle
                  << "\", got another exception: " << e.what();
  }
}

TEST(Softmax, ArgumentErrors) {
  DeviceBuffer x(4096), out(4096);
  poison_nan(out);
  const auto problem = [&] {
    SoftmaxProblem p;
    p.x = x.get();
    p.out = out.get();
    p.m = 16;
    p.n = 16;
    return p;
  };
  SoftmaxProblem p = problem();
  p.x = nullptr;
  expect_kernel_error([&] { softmax(p, SoftmaxDim::rows); }, "softmax: x is a null pointer");
  p = problem();
  p.out = nullptr;
  expect_kernel_error([&] { softmax(p, SoftmaxDim::cols); }, "softmax: out is a null pointer");
  p = problem();
  p.in = DType::tf32;
  expect_kernel_error([&] { softmax(p, SoftmaxDim::rows); }, "tf32");
  p = problem();
  p.m = -1;
  expect_kernel_error([&] { softmax(p, SoftmaxDim::rows); }, "m = -1 is negative");
  p = problem();
  p.n = -3;
  expect_kernel_error([&] { softmax(p, SoftmaxDim::cols); }, "n = -3 is negative");
  p = problem();
  p.out_type = DType::tf32;  // fp32 input
  expect_kernel_error([&] { softmax(p, SoftmaxDim::rows); },
                      "unsupported output type tf32 for fp32 input");
  p = problem();
  p.in = DType::bf16;
  p.out_type = DType::f16;
  expect_kernel_error([&] { softmax(p, SoftmaxDim::rows); },
                      "unsupported output type fp16 for bf16 input");
  p = problem();
  p.out = static_cast<char*>(out.get()) + 2;
  expect_kernel_error([&] { softmax(p, SoftmaxDim::rows); }, "out is not aligned");
  FLOPLINE_CUDA_OK(cudaDeviceSynchronize());
  EXPECT_TRUE(poison_intact(out, 0, out.bytes(), "in")) << "a refused call launched a kernel";
}

}  // namespace
}  // namespace flopline::kernels::testing
