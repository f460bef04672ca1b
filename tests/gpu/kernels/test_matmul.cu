// GPU tests of flopline::kernels::matmul. Matmul: each path on each dtype pair it runs
// (simt fp32; sm80 tf32/bf16/fp16 with fp32 and 16-bit outputs; sm90 where the device is
// an sm_90 and the problem qualifies; automatic), on square and rectangular shapes that
// are not multiples of any tile (odd k and n included), with fresh random inputs per
// check and a NaN-poisoned output, every element against a float64 reference within
// the error bound of its precision (error_bounds.h), and against cuBLAS.
// MatmulErrors: bad arguments throw KernelError naming the argument, and nothing runs.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "cublas_loader.h"
#include "flopline/kernels/matmul.h"
#include "kernel_test_util.h"

namespace flopline::kernels::testing {
namespace {

struct Shape {
  std::int64_t m, n, k;
};

// Squares of sizes 1..4097 and rectangles: a single row, thin/tall panels, long k with
// small m and n, a wide n, odd k and n (rows not 4-byte aligned in 16-bit types), even k
// and n that are not multiples of 8 (4-byte but not 16-byte rows); the last three have
// 16-byte rows in every dtype (the sm90 path takes them) without being tile multiples.
const Shape kShapes[] = {{1, 1, 1},          {7, 7, 7},          {17, 17, 17},     {128, 128, 128},
                         {1000, 1000, 1000}, {4097, 4097, 4097}, {1, 4097, 7},     {129, 65, 1000},
                         {4097, 17, 128},    {64, 8192, 64},     {33, 31, 37},     {130, 66, 1002},
                         {1, 8, 8},          {136, 264, 40},     {520, 1032, 4104}};

std::string describe(MatmulPath path, DType in, DType out, const Shape& s,
                     std::int64_t offset = 0) {
  std::ostringstream o;
  o << "path=" << matmul_path_name(path) << " " << dtype_name(in) << "->" << dtype_name(out)
    << " m=" << s.m << " n=" << s.n << " k=" << s.k;
  if (offset) o << " (A, B, C offset by " << offset << " element)";
  return o.str();
}

double to_double(const unsigned char* p, DType t) {
  switch (t) {
    case DType::bf16: {
      __nv_bfloat16 v;
      std::memcpy(&v, p, 2);
      return static_cast<double>(__bfloat162float(v));
    }
    case DType::f16: {
      __half v;
      std::memcpy(&v, p, 2);
      return static_cast<double>(__half2float(v));
    }
    default: {
      float v;
      std::memcpy(&v, p, 4);
      return static_cast<double>(v);
    }
  }
}

std::vector<unsigned char> download_bytes(const DeviceBuffer& b) {
  std::vector<unsigned char> host(b.bytes());
  FLOPLINE_CUDA_OK(cudaMemcpy(host.data(), b.get(), host.size(), cudaMemcpyDeviceToHost));
  return host;
}

std::vector<double> to_doubles(const unsigned char* p, std::int64_t n, DType t) {
  std::vector<double> out(static_cast<std::size_t>(n));
  const std::size_t es = dtype_bytes(t);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = to_double(p + i * es, t);
  return out;
}

// cuBLAS, loaded once for the whole binary.
Cublas& cublas() {
  static Cublas instance;
  return instance;
}

// Elements of NaN guard before and after C (64 keeps C 16-byte aligned for every dtype).
constexpr std::int64_t kGuard = 64;

// Runs one matmul on fresh random inputs and checks it. `offset` shifts A, B and C by
// that many elements from their 256-byte aligned allocations (misaligned rows and bases).
void check(MatmulPath path, DType in, DType out, const Shape& s, std::int64_t offset = 0) {
  const std::string what = describe(path, in, out, s, offset);
  SCOPED_TRACE(what);
  const std::size_t es_in = dtype_bytes(in), es_out = dtype_bytes(out);

  DeviceBuffer a, b;
  std::vector<double> ha = random_device_values(a, s.m * s.k + offset, in);
  const std::uint64_t seed_a = last_seed();
  std::vector<double> hb = random_device_values(b, s.k * s.n + offset, in);
  const std::uint64_t seed_b = last_seed();
  ha.erase(ha.begin(), ha.begin() + offset);
  hb.erase(hb.begin(), hb.begin() + offset);

  // C with a NaN guard on both sides: the kernel must write every element of C and
  // nothing outside it.
  const std::int64_t mn = s.m * s.n;
  DeviceBuffer c(static_cast<std::size_t>(2 * kGuard + offset + mn) * es_out);
  MatmulProblem p;
  p.a = static_cast<const unsigned char*>(a.get()) + offset * es_in;
  p.b = static_cast<const unsigned char*>(b.get()) + offset * es_in;
  p.c = static_cast<unsigned char*>(c.get()) + (kGuard + offset) * es_out;
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  p.in = in;
  p.out = out;
  MatmulOptions options;
  options.path = path;
  options.range = false;

  auto run = [&]() -> std::vector<unsigned char> {
    poison_nan(c);
    matmul(p, options);
    FLOPLINE_CUDA_OK(cudaGetLastError());
    FLOPLINE_CUDA_OK(cudaDeviceSynchronize());
    return download_bytes(c);
  };
  const std::vector<unsigned char> bytes = run();
  const std::size_t c_begin = static_cast<std::size_t>(kGuard + offset) * es_out;
  const std::size_t c_end = c_begin + static_cast<std::size_t>(mn) * es_out;
  std::size_t touched = 0, first_touched = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if ((i < c_begin || i >= c_end) && bytes[i] != 0xFF) {
      if (touched++ == 0) first_touched = i;
    }
  }
  EXPECT_EQ(touched, 0u) << what << ": " << touched
                         << " bytes outside C were written, the first at byte offset "
                         << static_cast<std::int64_t>(first_touched) -
                                static_cast<std::int64_t>(c_begin)
                         << " from C (C is " << mn * static_cast<std::int64_t>(es_out) << " bytes)";

  const std::vector<double> ours = to_doubles(bytes.data() + c_begin, mn, out);
  const MatmulReference ref = reference_matmul(ha, hb, s.m, s.n, s.k);
  const std::vector<double> bounds = matmul_bounds(ref, s.k, out, true);  // inputs exact in `in`
  const BoundReport vs_ref = check_bounds(ours, ref.c, bounds, s.n);
  EXPECT_TRUE(vs_ref.ok()) << what << " against the float64 reference: " << vs_ref.detail
                           << "; seeds A=" << seed_a << " B=" << seed_b;

  // The paths written here accumulate in a fixed order: a second run must give the same
  // bits (a difference means a race in the pipeline).
  if (path == MatmulPath::simt || path == MatmulPath::sm80) {
    const std::vector<unsigned char> again = run();
    EXPECT_TRUE(std::memcmp(again.data() + c_begin, bytes.data() + c_begin, c_end - c_begin) == 0)
        << what << ": two runs on the same inputs differ (race?); seeds A=" << seed_a
        << " B=" << seed_b;
  }

  ASSERT_TRUE(cublas().ok()) << "cuBLAS could not be loaded for the comparison: "
                             << cublas().error();
  DeviceBuffer cc(static_cast<std::size_t>(mn) * es_out);
  poison_nan(cc);
  ASSERT_TRUE(cublas().matmul(p.a, p.b, cc.get(), static_cast<long>(s.m), static_cast<long>(s.n),
                              static_cast<long>(s.k), in, out, nullptr))
      << what << ": " << cublas().error();
  FLOPLINE_CUDA_OK(cudaDeviceSynchronize());
  const std::vector<unsigned char> cb = download_bytes(cc);
  const std::vector<double> theirs = to_doubles(cb.data(), mn, out);
  // Both within their bound of the reference, so within twice it of each other.
  std::vector<double> twice(bounds);
  for (double& b : twice) b *= 2;
  const BoundReport vs_cublas = check_bounds(ours, theirs, twice, s.n);
  EXPECT_TRUE(vs_cublas.ok()) << what << " against cuBLAS: " << vs_cublas.detail
                              << "; cuBLAS against the reference: "
                              << check_bounds(theirs, ref.c, bounds, s.n).detail
                              << "; seeds A=" << seed_a << " B=" << seed_b;
}

// Every shape the path can take on this device; the rest are left out (sm90 needs 16-byte
// rows).
void check_all_shapes(MatmulPath path, DType in, DType out) {
  const int arch = device_arch();
  int ran = 0;
  std::string skipped;
  for (const Shape& s : kShapes) {
    MatmulProblem p;
    p.a = p.b = p.c = reinterpret_cast<void*>(256);  // aligned stand-ins: only the checks look
    p.m = s.m;
    p.n = s.n;
    p.k = s.k;
    p.in = in;
    p.out = out;
    try {
      check_matmul_path(p, path, arch);
    } catch (const KernelError&) {
      skipped += " " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
      continue;
    }
    check(path, in, out, s);
    ++ran;
  }
  if (!skipped.empty()) {
    std::printf("  path=%s %s->%s: %d shapes ran; not taken by the path (check_matmul_path):%s\n",
                matmul_path_name(path), dtype_name(in), dtype_name(out), ran, skipped.c_str());
  }
  EXPECT_GT(ran, 0) << "no shape ran on path " << matmul_path_name(path);
}

void require_sm90() {
  if (device_arch() != 90)
    GTEST_SKIP() << "path sm90 needs an sm_90 device; this one is sm_" << device_arch();
}

TEST(Matmul, SimtFp32) {
  check_all_shapes(MatmulPath::simt, DType::f32, DType::f32);
}
TEST(Matmul, Sm80Tf32) {
  check_all_shapes(MatmulPath::sm80, DType::tf32, DType::f32);
}
TEST(Matmul, Sm80Bf16ToBf16) {
  check_all_shapes(MatmulPath::sm80, DType::bf16, DType::bf16);
}
TEST(Matmul, Sm80Bf16ToFp32) {
  check_all_shapes(MatmulPath::sm80, DType::bf16, DType::f32);
}
TEST(Matmul, Sm80Fp16ToFp16) {
  check_all_shapes(MatmulPath::sm80, DType::f16, DType::f16);
}
TEST(Matmul, Sm80Fp16ToFp32) {
  check_all_shapes(MatmulPath::sm80, DType::f16, DType::f32);
}

TEST(Matmul, Sm90Tf32) {
  require_sm90();
  check_all_shapes(MatmulPath::sm90, DType::tf32, DType::f32);
}
TEST(Matmul, Sm90Bf16ToBf16) {
  require_sm90();
  check_all_shapes(MatmulPath::sm90, DType::bf16, DType::bf16);
}
TEST(Matmul, Sm90Bf16ToFp32) {
  require_sm90();
  check_all_shapes(MatmulPath::sm90, DType::bf16, DType::f32);
}
TEST(Matmul, Sm90Fp16ToFp16) {
  require_sm90();
  check_all_shapes(MatmulPath::sm90, DType::f16, DType::f16);
}
TEST(Matmul, Sm90Fp16ToFp32) {
  require_sm90();
  check_all_shapes(MatmulPath::sm90, DType::f16, DType::f32);
}

TEST(Matmul, AutoFp32) {
  check_all_shapes(MatmulPath::automatic, DType::f32, DType::f32);
}
TEST(Matmul, AutoTf32) {
  check_all_shapes(MatmulPath::automatic, DType::tf32, DType::f32);
}
TEST(Matmul, AutoBf16ToBf16) {
  check_all_shapes(MatmulPath::automatic, DType::bf16, DType::bf16);
}
TEST(Matmul, AutoBf16ToFp32) {
  check_all_shapes(MatmulPath::automatic, DType::bf16, DType::f32);
}
TEST(Matmul, AutoFp16ToFp16) {
  check_all_shapes(MatmulPath::automatic, DType::f16, DType::f16);
}
TEST(Matmul, AutoFp16ToFp32) {
  check_all_shapes(MatmulPath::automatic, DType::f16, DType::f32);
}

// Base pointers one element off their allocation: A and B rows are then never 16-byte
// aligned (simt: 4-byte copies of B; sm80: 4-byte copies for tf32, register-staged
// 2-byte loads for 16-bit types) and C takes the scalar stores. Two 16-bit elements off:
// 4-byte aligned rows (sm80: 4-byte copies of element pairs).
TEST(Matmul, UnalignedPointers) {
  const Shape shapes[] = {{33, 31, 37}, {128, 128, 128}, {129, 65, 1000}, {300, 260, 64}};
  for (const Shape& s : shapes) {
    check(MatmulPath::simt, DType::f32, DType::f32, s, 1);
    check(MatmulPath::sm80, DType::tf32, DType::f32, s, 1);
    check(MatmulPath::sm80, DType::bf16, DType::bf16, s, 1);
    check(MatmulPath::sm80, DType::f16, DType::f32, s, 1);
    check(MatmulPath::automatic, DType::bf16, DType::f32, s, 1);
    check(MatmulPath::sm80, DType::bf16, DType::f32, s, 2);
    check(MatmulPath::automatic, DType::f16, DType::f16, s, 2);
  }
}

// Inputs whose products are large and of one sign (all in [1, 2)): catches a kernel
// that drops or repeats a k tile, which random signs can partly hide.
TEST(Matmul, OneSignedInputs) {
  for (DType in : {DType::f32, DType::tf32, DType::bf16}) {
    const Shape s{257, 263, 1031};
    const MatmulPath path = in == DType::f32 ? MatmulPath::simt : MatmulPath::sm80;
    SCOPED_TRACE(describe(path, in, DType::f32, s));
    DeviceBuffer a, b, c(static_cast<std::size_t>(s.m * s.n) * 4);
    const std::vector<double> ha = random_device_values(a, s.m * s.k, in, 1, 2);
    const std::vector<double> hb = random_device_values(b, s.k * s.n, in, 1, 2);
    MatmulProblem p;
    p.a = a.get();
    p.b = b.get();
    p.c = c.get();
    p.m = s.m;
    p.n = s.n;
    p.k = s.k;
    p.in = in;
    p.out = DType::f32;
    MatmulOptions options;
    options.path = path;
    poison_nan(c);
    matmul(p, options);
    FLOPLINE_CUDA_OK(cudaDeviceSynchronize());
    const MatmulReference ref = reference_matmul(ha, hb, s.m, s.n, s.k);
    const BoundReport r = check_bounds(download(c, s.m * s.n, DType::f32), ref.c,
                                       matmul_bounds(ref, s.k, DType::f32, true), s.n);
    EXPECT_TRUE(r.ok()) << describe(path, in, DType::f32, s) << ": " << r.detail;
  }
}

// tf32 from full fp32 values: each path rounds (or truncates) A and B to tf32, which
// the bound allows (2^-10 per operand) and the norm-wise error keeps small.
TEST(Matmul, Tf32RoundsFullFp32Inputs) {
  const Shape shapes[] = {{129, 264, 1000}, {1000, 1000, 520}};
  const bool hopper = device_arch() == 90;
  for (const Shape& s : shapes) {
    for (MatmulPath path : {MatmulPath::sm80, MatmulPath::sm90, MatmulPath::automatic}) {
      if (path == MatmulPath::sm90 && !hopper) continue;
      SCOPED_TRACE(describe(path, DType::tf32, DType::f32, s));
      DeviceBuffer a, b, c(static_cast<std::size_t>(s.m * s.n) * 4);
      const std::vector<double> ha = random_device_values(a, s.m * s.k, DType::f32);
      const std::vector<double> hb = random_device_values(b, s.k * s.n, DType::f32);
      MatmulOptions options;
      options.path = path;
      poison_nan(c);
      matmul(problem(a, b, c.get(), s.m, s.n, s.k, DType::tf32, DType::f32), options);
      FLOPLINE_CUDA_OK(cudaDeviceSynchronize());
      const std::vector<double> got = download(c, s.m * s.n, DType::f32);
      const MatmulReference ref = reference_matmul(ha, hb, s.m, s.n, s.k);
      const BoundReport r =
          check_bounds(got, ref.c, matmul_bounds(ref, s.k, DType::f32, false), s.n);
      EXPECT_TRUE(r.ok()) << r.detail << "; seed " << last_seed();
      EXPECT_LT(relative_error(got, ref.c), 1e-3) << "seed " << last_seed();
    }
  }
}

// ---------------------------------------------------------------------------------------
// Argument errors: KernelError before anything is launched (C stays NaN), message naming
// the argument.

struct ErrorSetup {
  DeviceBuffer a{4096}, b{4096}, c{4096};
  MatmulProblem valid(DType in = DType::f32, DType out = DType::f32) const {
    MatmulProblem p;
    p.a = a.get();
    p.b = b.get();
    p.c = c.get();
    p.m = p.n = p.k = 16;
    p.in = in;
    p.out = out;
    return p;
  }
};

// Expects matmul(p) to throw KernelError whose message contains each of `words`, and C
// (poisoned) to stay NaN.
void expect_rejected(const ErrorSetup& e, const MatmulProblem& p, MatmulPath path,
                     std::initializer_list<const char*> words) {
  poison_nan(e.c);
  FLOPLINE_CUDA_OK(cudaDeviceSynchronize());
  MatmulOptions options;
  options.path = path;
  std::string message;
  try {
    matmul(p, options);
    ADD_FAILURE() << "matmul did not throw (path " << matmul_path_name(path) << ", "
                  << dtype_name(p.in) << "->" << dtype_name(p.out) << ", m=" << p.m << " n=" << p.n
                  << " k=" << p.k << ")";
  } catch (const KernelError& ex) {
    message = ex.what();
  }
  for (const char* w : words)
    EXPECT_NE(message.find(w), std::string::npos)
        << "message \"" << message << "\" lacks \"" << w << "\"";
  FLOPLINE_CUDA_OK(cudaDeviceSynchronize());
  const std::vector<unsigned char> bytes = download_bytes(e.c);
  std::size_t written = 0;
  for (unsigned char v : bytes) written += v != 0xFF;
  EXPECT_EQ(written, 0u) << "a rejected call wrote to C (message: " << message << ")";
}

TEST(MatmulErrors, Shapes) {
  ErrorSetup e;
  for (std::int64_t bad : {std::int64_t{0}, std::int64_t{-3}, std::int64_t{1} << 31}) {
    MatmulProblem p = e.valid();
    p.m = bad;
    expect_rejected(e, p, MatmulPath::automatic, {"m = "});
    p = e.valid();
    p.n = bad;
    expect_rejected(e, p, MatmulPath::simt, {"n = "});
    p = e.valid(DType::bf16, DType::bf16);
    p.k = bad;
    expect_rejected(e, p, MatmulPath::sm80, {"k = "});
  }
}

TEST(MatmulErrors, NullPointers) {
  ErrorSetup e;
  MatmulProblem p = e.valid();
  p.a = nullptr;
  expect_rejected(e, p, MatmulPath::automatic, {"A", "null"});
  p = e.valid(DType::tf32);
  p.b = nullptr;
  expect_rejected(e, p, MatmulPath::sm80, {"B", "null"});
  p = e.valid(DType::bf16, DType::f32);
  p.c = nullptr;
  expect_rejected(e, p, MatmulPath::automatic, {"C", "null"});
}

TEST(MatmulErrors, Dtypes) {
  ErrorSetup e;
  expect_rejected(e, e.valid(DType::f32, DType::bf16), MatmulPath::automatic,
                  {"dtypes", "fp32 -> bf16"});
  expect_rejected(e, e.valid(DType::tf32, DType::tf32), MatmulPath::automatic,
                  {"dtypes", "tf32 -> tf32"});
  expect_rejected(e, e.valid(DType::bf16, DType::f16), MatmulPath::sm80,
                  {"dtypes", "bf16 -> fp16"});
  expect_rejected(e, e.valid(DType::f16, DType::bf16), MatmulPath::automatic,
                  {"dtypes", "fp16 -> bf16"});
}

TEST(MatmulErrors, PathDoesNotRunDtype) {
  ErrorSetup e;
  expect_rejected(e, e.valid(DType::bf16, DType::bf16), MatmulPath::simt, {"simt", "bf16"});
  expect_rejected(e, e.valid(DType::tf32, DType::f32), MatmulPath::simt, {"simt", "tf32"});
  expect_rejected(e, e.valid(DType::f32, DType::f32), MatmulPath::sm80, {"sm80", "fp32"});
  expect_rejected(e, e.valid(DType::f32, DType::f32), MatmulPath::sm90, {"sm90", "fp32"});
}

TEST(MatmulErrors, Sm90NeedsHopperAndAlignedRows) {
  ErrorSetup e;
  if (device_arch() != 90) {
    expect_rejected(e, e.valid(DType::bf16, DType::bf16), MatmulPath::sm90, {"sm90", "sm_90"});
    return;
  }
  MatmulProblem p = e.valid(DType::bf16, DType::bf16);
  p.k = 17;  // 34-byte rows of A
  expect_rejected(e, p, MatmulPath::sm90, {"sm90", "k"});
  p = e.valid(DType::tf32);
  p.n = 6;  // 24-byte rows of B
  expect_rejected(e, p, MatmulPath::sm90, {"sm90", "n"});
  p = e.valid(DType::bf16, DType::f32);
  p.a = static_cast<const unsigned char*>(e.a.get()) + 2;
  expect_rejected(e, p, MatmulPath::sm90, {"sm90", "aligned"});
}

// The architecture check itself (no device older than sm_80 here to run it on).
TEST(MatmulErrors, OldArchitecture) {
  ErrorSetup e;
  for (MatmulPath path : {MatmulPath::automatic, MatmulPath::simt, MatmulPath::sm80}) {
    try {
      check_matmul_path(e.valid(path == MatmulPath::sm80 ? DType::bf16 : DType::f32), path, 75);
      ADD_FAILURE() << "sm_75 accepted for path " << matmul_path_name(path);
    } catch (const KernelError& ex) {
      EXPECT_NE(std::string(ex.what()).find("compute capability"), std::string::npos) << ex.what();
    }
  }
}

}  // namespace
}  // namespace flopline::kernels::testing
