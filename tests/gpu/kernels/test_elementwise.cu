// Elementwise kernels against float64 references on the host: every op (the built-ins and
// two user functors through elementwise_functor.cuh), every dtype, lengths that cover the
// vector body, the scalar head and the tail, and element offsets that take the aligned,
// the head-aligned and the scalar paths. Outputs are poisoned with NaN before each run;
// the elements around the output range must keep their poison (sentinels).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "flopline/kernels/elementwise.h"
#include "flopline/kernels/elementwise_functor.cuh"
#include "kernel_test_util.h"

namespace flopline::kernels::testing {
namespace {

// User functors, as a user would write them in their own .cu.
struct Silu {
  __device__ float operator()(float x) const { return x / (1.0f + expf(-x)); }
};
struct XMinusTwoY {
  __device__ float operator()(float x, float y) const { return x - 2.0f * y; }
};

enum class Op { add, mul, axpy, relu, gelu, silu, x_minus_2y };
constexpr float kAxpyA = 0.75f;

const char* op_name(Op op) {
  switch (op) {
    case Op::add:
      return "add";
    case Op::mul:
      return "mul";
    case Op::axpy:
      return "axpy";
    case Op::relu:
      return "relu";
    case Op::gelu:
      return "gelu";
    case Op::silu:
      return "silu (elementwise_unary)";
    case Op::x_minus_2y:
      return "x-2y (elementwise_binary)";
  }
  return "?";
}

bool binary(Op op) {
  return op == Op::add || op == Op::mul || op == Op::axpy || op == Op::x_minus_2y;
}

double reference(Op op, double x, double y) {
  switch (op) {
    case Op::add:
      return x + y;
    case Op::mul:
      return x * y;
    case Op::axpy:
      return static_cast<double>(kAxpyA) * x + y;
    case Op::relu:
      return x < 0 ? 0.0 : x;
    case Op::gelu:
      return x * 0.5 * (1.0 + std::erf(x / std::sqrt(2.0)));
    case Op::silu:
      return x / (1.0 + std::exp(-x));
    case Op::x_minus_2y:
      return x - 2.0 * y;
  }
  return 0;
}

template <int kInputs, class T, class F>
void run_custom(const F& f, const void* x, const void* y, void* out, std::int64_t n,
                const ElementwiseOptions& options) {
  if constexpr (kInputs == 2) {
    elementwise_binary(f, static_cast<const T*>(x), static_cast<const T*>(y), static_cast<T*>(out),
                       n, {"x_minus_2y", 2}, options);
  } else {
    elementwise_unary(f, static_cast<const T*>(x), static_cast<T*>(out), n, {"silu", 4}, options);
  }
}

template <int kInputs, class F>
void run_custom_any(const F& f, const void* x, const void* y, void* out, std::int64_t n, DType t,
                    const ElementwiseOptions& options) {
  switch (t) {
    case DType::bf16:
      run_custom<kInputs, __nv_bfloat16>(f, x, y, out, n, options);
      return;
    case DType::f16:
      run_custom<kInputs, __half>(f, x, y, out, n, options);
      return;
    default:
      run_custom<kInputs, float>(f, x, y, out, n, options);
      return;
  }
}

void run(Op op, const void* x, const void* y, void* out, std::int64_t n, DType t,
         const ElementwiseOptions& options = {}) {
  switch (op) {
    case Op::add:
      add(x, y, out, n, t, options);
      return;
    case Op::mul:
      mul(x, y, out, n, t, options);
      return;
    case Op::axpy:
      axpy(kAxpyA, x, y, out, n, t, options);
      return;
    case Op::relu:
      relu(x, out, n, t, options);
      return;
    case Op::gelu:
      gelu(x, out, n, t, options);
      return;
    case Op::silu:
      run_custom_any<1>(Silu{}, x, nullptr, out, n, t, options);
      return;
    case Op::x_minus_2y:
      run_custom_any<2>(XMinusTwoY{}, x, y, out, n, t, options);
      return;
  }
}

// Per-element bound |out - ref| <= atol + rtol * |ref|: one rounding to the storage type
// (half an ulp: 2^-8 bf16, 2^-11 fp16) plus the fp32 math (erff/expf: a few ulp; gelu's
// 1 + erf(x) cancels for negative x, hence the absolute term).
struct Tolerance {
  double rtol, atol, norm;
};
Tolerance tolerance(DType t) {
  switch (t) {
    case DType::bf16:
      return {8e-3, 1e-6, 2e-2};
    case DType::f16:
      return {1.5e-3, 1e-6, 2e-3};
    default:
      return {2e-6, 1e-6, 1e-5};
  }
}

constexpr std::int64_t kGuard = 8;  // sentinel elements each side of the output range

struct Offsets {
  std::int64_t x, y, out;
};

std::string describe(Op op, DType t, std::int64_t n, Offsets o) {
  std::ostringstream s;
  s << op_name(op) << " " << dtype_name(t) << " n=" << n << " offsets x+" << o.x << " y+" << o.y
    << " out+" << o.out;
  return s.str();
}

// Bytes of `buffer` in [from, to) all still 0xFF (the poison).
::testing::AssertionResult poison_intact(const DeviceBuffer& buffer, std::size_t from,
                                         std::size_t to, const char* where) {
  std::vector<unsigned char> bytes(buffer.bytes());
  FLOPLINE_CUDA_OK(cudaMemcpy(bytes.data(), buffer.get(), bytes.size(), cudaMemcpyDeviceToHost));
  for (std::size_t i = from; i < to; ++i) {
    if (bytes[i] != 0xFF) {
      return ::testing::AssertionFailure()
             << "sentinel " << where << " the output overwritten at byte " << i << " (0x"
             << std::hex << int(bytes[i]) << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

// Runs op once on fresh inputs and checks every output element, the error norm and the
// sentinels.
::testing::AssertionResult check(Op op, DType t, std::int64_t n, Offsets o) {
  const std::size_t es = dtype_bytes(t);
  const std::int64_t x_len = kGuard + o.x + n + kGuard, y_len = kGuard + o.y + n + kGuard;
  const std::int64_t out_len = kGuard + o.out + n + kGuard;
  DeviceBuffer dx(static_cast<std::size_t>(x_len) * es), dy(static_cast<std::size_t>(y_len) * es);
  DeviceBuffer dout(static_cast<std::size_t>(out_len) * es);
  const double lo = (op == Op::gelu || op == Op::silu || op == Op::relu) ? -4 : -1;
  const std::vector<double> x = random_device_values(dx, x_len, t, lo, -lo);
  const std::uint64_t x_seed = last_seed();
  std::vector<double> y;
  std::uint64_t y_seed = 0;
  if (binary(op)) {
    y = random_device_values(dy, y_len, t, -1, 1);
    y_seed = last_seed();
  }
  poison_nan(dout);
  const char* px = static_cast<const char*>(dx.get()) + (kGuard + o.x) * es;
  const char* py = binary(op) ? static_cast<const char*>(dy.get()) + (kGuard + o.y) * es : nullptr;
  char* pout = static_cast<char*>(dout.get()) + (kGuard + o.out) * es;
  try {
    run(op, px, py, pout, n, t);
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << describe(op, t, n, o) << ": threw " << e.what();
  }
  FLOPLINE_CUDA_OK(cudaDeviceSynchronize());

  const std::vector<double> all = download(dout, out_len, t);
  std::vector<double> got(static_cast<std::size_t>(n)), want(static_cast<std::size_t>(n));
  const Tolerance tol = tolerance(t);
  for (std::int64_t i = 0; i < n; ++i) {
    const double xi = x[static_cast<std::size_t>(kGuard + o.x + i)];
    const double yi = binary(op) ? y[static_cast<std::size_t>(kGuard + o.y + i)] : 0.0;
    want[static_cast<std::size_t>(i)] = reference(op, xi, yi);
    got[static_cast<std::size_t>(i)] = all[static_cast<std::size_t>(kGuard + o.out + i)];
    const double d =
        std::fabs(got[static_cast<std::size_t>(i)] - want[static_cast<std::size_t>(i)]);
    if (!(d <= tol.atol + tol.rtol * std::fabs(want[static_cast<std::size_t>(i)]))) {
      return ::testing::AssertionFailure()
             << describe(op, t, n, o) << ": element " << i << " = "
             << got[static_cast<std::size_t>(i)] << ", want " << want[static_cast<std::size_t>(i)]
             << " (x=" << xi << ", y=" << yi << "); seeds x " << x_seed << " y " << y_seed;
    }
  }
  // Norm-wise: relative, or within atol in rms where the outputs are all tiny (gelu of a
  // single x near -4 is ~1e-4, where erff's absolute error dominates).
  const double err = relative_error(got, want);
  double sq = 0;
  for (std::size_t i = 0; i < got.size(); ++i) sq += (got[i] - want[i]) * (got[i] - want[i]);
  const double rms = got.empty() ? 0.0 : std::sqrt(sq / static_cast<double>(got.size()));
  if (!(err < tol.norm) && !(rms <= tol.atol)) {
    return ::testing::AssertionFailure()
           << describe(op, t, n, o) << ": relative error " << err << " >= " << tol.norm
           << "; seeds x " << x_seed << " y " << y_seed;
  }
  const std::size_t begin = static_cast<std::size_t>(kGuard + o.out) * es;
  const std::size_t end = static_cast<std::size_t>(kGuard + o.out + n) * es;
  ::testing::AssertionResult before = poison_intact(dout, 0, begin, "before");
  if (!before) return before << " (" << describe(op, t, n, o) << ")";
  ::testing::AssertionResult after = poison_intact(dout, end, dout.bytes(), "after");
  if (!after) return after << " (" << describe(op, t, n, o) << ")";
  return ::testing::AssertionSuccess();
}

const std::int64_t kLengths[] = {0, 1, 7, 17, 128, 1000, 4097, (std::int64_t{1} << 20) + 3};
// Aligned; one shared misalignment (scalar head, then vectors) at several distances;
// different misalignments (scalar path throughout).
const Offsets kOffsets[] = {{0, 0, 0}, {1, 1, 1}, {3, 3, 3}, {4, 4, 4}, {1, 0, 3}, {0, 5, 2}};
const DType kTypes[] = {DType::f32, DType::bf16, DType::f16};

// Every dtype, length and offset for one op; stops after a few failures so that one bug
// does not print a thousand lines.
void check_all(Op op) {
  int failures = 0;
  for (DType t : kTypes) {
    for (std::int64_t n : kLengths) {
      for (const Offsets& o : kOffsets) {
        const ::testing::AssertionResult r = check(op, t, n, o);
        EXPECT_TRUE(r);
        if (!r && ++failures >= 5) {
          ADD_FAILURE() << "stopping " << op_name(op) << " after 5 failures";
          return;
        }
      }
    }
  }
}

TEST(Elementwise, Add) {
  check_all(Op::add);
}
TEST(Elementwise, Mul) {
  check_all(Op::mul);
}
TEST(Elementwise, Axpy) {
  check_all(Op::axpy);
}
TEST(Elementwise, Relu) {
  check_all(Op::relu);
}
TEST(Elementwise, Gelu) {
  check_all(Op::gelu);
}
TEST(Elementwise, UserUnaryFunctor) {
  check_all(Op::silu);
}
TEST(Elementwise, UserBinaryFunctor) {
  check_all(Op::x_minus_2y);
}

// out == x (and out == y for axpy): every element is read before it is written.
TEST(Elementwise, InPlace) {
  for (DType t : kTypes) {
    for (std::int64_t n : {std::int64_t{1000}, std::int64_t{1} << 20}) {
      for (Op op : {Op::add, Op::axpy, Op::gelu}) {
        const std::size_t es = dtype_bytes(t);
        DeviceBuffer dx(static_cast<std::size_t>(n) * es), dy(static_cast<std::size_t>(n) * es);
        const std::vector<double> x = random_device_values(dx, n, t, -2, 2);
        const std::vector<double> y = random_device_values(dy, n, t, -2, 2);
        // add and gelu write over x; axpy writes over y.
        void* out = op == Op::axpy ? dy.get() : dx.get();
        run(op, dx.get(), binary(op) ? dy.get() : nullptr, out, n, t);
        FLOPLINE_CUDA_OK(cudaDeviceSynchronize());
        const std::vector<double> got = download(op == Op::axpy ? dy : dx, n, t);
        std::vector<double> want(got.size());
        for (std::size_t i = 0; i < want.size(); ++i)
          want[i] = reference(op, x[i], binary(op) ? y[i] : 0.0);
        EXPECT_LT(relative_error(got, want), tolerance(t).norm)
            << op_name(op) << " in place, " << dtype_name(t) << " n=" << n;
      }
    }
  }
}

// n == 0: no launch, nothing written, null pointers accepted.
TEST(Elementwise, ZeroLengthIsANoOp) {
  DeviceBuffer d(64);
  poison_nan(d);
  EXPECT_NO_THROW(add(d.get(), d.get(), d.get(), 0, DType::f32));
  EXPECT_NO_THROW(gelu(nullptr, nullptr, 0, DType::bf16));
  EXPECT_NO_THROW(axpy(1.0f, nullptr, nullptr, nullptr, 0, DType::f16));
  FLOPLINE_CUDA_OK(cudaDeviceSynchronize());
  EXPECT_TRUE(poison_intact(d, 0, d.bytes(), "in"));
}

// The options' stream is the one launched on.
TEST(Elementwise, RunsOnTheGivenStream) {
  cudaStream_t stream = nullptr;
  FLOPLINE_CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const std::int64_t n = 4097;
  DeviceBuffer dx(n * 4), dy(n * 4), dout(n * 4);
  const std::vector<double> x = random_device_values(dx, n, DType::f32);
  const std::vector<double> y = random_device_values(dy, n, DType::f32);
  poison_nan(dout);
  ElementwiseOptions options;
  options.stream = stream;
  mul(dx.get(), dy.get(), dout.get(), n, DType::f32, options);
  FLOPLINE_CUDA_OK(cudaStreamSynchronize(stream));
  const std::vector<double> got = download(dout, n, DType::f32);
  std::vector<double> want(got.size());
  for (std::size_t i = 0; i < want.size(); ++i) want[i] = x[i] * y[i];
  EXPECT_LT(relative_error(got, want), 1e-6);
  FLOPLINE_CUDA_OK(cudaStreamDestroy(stream));
}

// relu passes NaN through (torch.relu does) and keeps inf; gelu keeps NaN and inf.
TEST(Elementwise, SpecialValues) {
  const float nan = std::numeric_limits<float>::quiet_NaN(),
              inf = std::numeric_limits<float>::infinity();
  const std::vector<float> in = {-1.0f, 0.0f, 2.5f, nan, inf, -inf, -0.0f};
  DeviceBuffer dx(in.size() * 4), dout(in.size() * 4);
  FLOPLINE_CUDA_OK(cudaMemcpy(dx.get(), in.data(), in.size() * 4, cudaMemcpyHostToDevice));
  relu(dx.get(), dout.get(), static_cast<std::int64_t>(in.size()), DType::f32);
  std::vector<float> got(in.size());
  FLOPLINE_CUDA_OK(cudaMemcpy(got.data(), dout.get(), got.size() * 4, cudaMemcpyDeviceToHost));
  EXPECT_EQ(got[0], 0.0f);
  EXPECT_EQ(got[1], 0.0f);
  EXPECT_EQ(got[2], 2.5f);
  EXPECT_TRUE(std::isnan(got[3])) << "relu(NaN) = " << got[3];
  EXPECT_EQ(got[4], inf);
  EXPECT_EQ(got[5], 0.0f);
  gelu(dx.get(), dout.get(), static_cast<std::int64_t>(in.size()), DType::f32);
  FLOPLINE_CUDA_OK(cudaMemcpy(got.data(), dout.get(), got.size() * 4, cudaMemcpyDeviceToHost));
  EXPECT_TRUE(std::isnan(got[3])) << "gelu(NaN) = " << got[3];
  EXPECT_EQ(got[4], inf);
}

// Argument errors: KernelError naming the argument, and nothing launched.
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

class ElementwiseErrors : public ::testing::Test {
 protected:
  void SetUp() override { poison_nan(out_); }
  // The output buffer still holds its poison: the failed call launched nothing.
  void TearDown() override {
    FLOPLINE_CUDA_OK(cudaDeviceSynchronize());
    EXPECT_TRUE(poison_intact(out_, 0, out_.bytes(), "in"));
  }
  DeviceBuffer x_{1024}, y_{1024}, out_{1024};
};

TEST_F(ElementwiseErrors, NullPointers) {
  expect_kernel_error([&] { add(nullptr, y_.get(), out_.get(), 16, DType::f32); },
                      "add: x is a null pointer");
  expect_kernel_error([&] { mul(x_.get(), nullptr, out_.get(), 16, DType::bf16); },
                      "mul: y is a null pointer");
  expect_kernel_error([&] { axpy(2.0f, x_.get(), y_.get(), nullptr, 16, DType::f16); },
                      "axpy: out is a null pointer");
  expect_kernel_error([&] { relu(nullptr, out_.get(), 16, DType::f32); },
                      "relu: x is a null pointer");
  expect_kernel_error([&] { gelu(x_.get(), nullptr, 16, DType::f32); },
                      "gelu: out is a null pointer");
  expect_kernel_error(
      [&] {
        elementwise_binary(XMinusTwoY{}, static_cast<const float*>(x_.get()),
                           static_cast<const float*>(nullptr), static_cast<float*>(out_.get()), 16);
      },
      "custom: y is a null pointer");
}

TEST_F(ElementwiseErrors, Tf32IsNotAnElementwiseType) {
  expect_kernel_error([&] { add(x_.get(), y_.get(), out_.get(), 16, DType::tf32); }, "tf32");
  expect_kernel_error([&] { gelu(x_.get(), out_.get(), 16, DType::tf32); }, "tf32");
}

TEST_F(ElementwiseErrors, NegativeLength) {
  expect_kernel_error([&] { add(x_.get(), y_.get(), out_.get(), -1, DType::f32); },
                      "n = -1 is negative");
  expect_kernel_error([&] { relu(x_.get(), out_.get(), -5, DType::bf16); }, "n = -5 is negative");
}

TEST_F(ElementwiseErrors, PointerNotAlignedToItsElement) {
  const char* x = static_cast<const char*>(x_.get());
  expect_kernel_error([&] { add(x + 1, y_.get(), out_.get(), 16, DType::f32); },
                      "x is not aligned");
  expect_kernel_error([&] { relu(x + 2, out_.get(), 16, DType::f32); },
                      "x is not aligned to its 4-byte fp32 element");
  expect_kernel_error(
      [&] { mul(x_.get(), static_cast<const char*>(y_.get()) + 1, out_.get(), 16, DType::bf16); },
      "y is not aligned");
}

}  // namespace
}  // namespace flopline::kernels::testing
