// The built-in kernels' plain C++ side, without a GPU: the FLOP/byte model on concrete
// numbers worked out by hand, dtype names and parsing, the argument checks (each refusal
// is a KernelError naming the argument) and the elementwise vector/scalar split.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "flopline/kernels/checks.h"
#include "flopline/kernels/cost.h"
#include "flopline/kernels/elementwise_plan.h"
#include "flopline/kernels/types.h"

namespace flopline::kernels {
namespace {

// Fake device addresses: the checks look at them, never through them.
const void* at(std::uintptr_t address) {
  return reinterpret_cast<const void*>(address);
}
void* at_mut(std::uintptr_t address) {
  return reinterpret_cast<void*>(address);
}
constexpr std::uintptr_t kA = 0x100000, kB = 0x200000, kC = 0x300000;

// --- cost model -------------------------------------------------------------------

TEST(KernelCost, MatmulIsTwoMnkFlopsAndEachMatrixOnce) {
  const OpCost c = matmul_cost(4096, 4096, 4096, DType::bf16, DType::bf16);
  EXPECT_DOUBLE_EQ(c.flops, 137438953472.0);  // 2 * 2^36
  EXPECT_DOUBLE_EQ(c.bytes, 100663296.0);     // 3 matrices * 2^24 elements * 2 bytes
  EXPECT_EQ(c.name, "matmul bf16 4096x4096x4096");
  EXPECT_EQ(c.precision, "bf16");

  const OpCost r = matmul_cost(3, 5, 7, DType::f32, DType::f32);
  EXPECT_DOUBLE_EQ(r.flops, 210.0);
  EXPECT_DOUBLE_EQ(r.bytes, (3 * 7 + 7 * 5) * 4.0 + 3 * 5 * 4.0);  // 224 + 60
  EXPECT_EQ(r.name, "matmul fp32 3x5x7");

  const OpCost mixed = matmul_cost(2, 3, 4, DType::bf16, DType::f32);  // inputs 2 bytes, output 4
  EXPECT_DOUBLE_EQ(mixed.bytes, (2 * 4 + 4 * 3) * 2.0 + 2 * 3 * 4.0);  // 40 + 24
  EXPECT_EQ(matmul_cost(8, 8, 8, DType::tf32, DType::f32).precision, "tf32");
  EXPECT_DOUBLE_EQ(matmul_cost(8, 8, 8, DType::tf32, DType::f32).bytes, 3 * 64 * 4.0);
}

TEST(KernelCost, MatmulSoftmaxAddsFiveFlopsPerScoreAndNoScoreTraffic) {
  const OpCost c = matmul_softmax_cost(4096, 4096, 4096, SoftmaxDim::rows, DType::tf32, DType::f32);
  EXPECT_DOUBLE_EQ(c.flops, 2.0 * 4096 * 4096 * 4096 + 5.0 * 4096 * 4096);
  EXPECT_DOUBLE_EQ(c.bytes, matmul_cost(4096, 4096, 4096, DType::tf32, DType::f32).bytes);
  EXPECT_EQ(c.name, "matmul_softmax_rows tf32 4096x4096x4096");
  EXPECT_EQ(c.precision, "tf32");

  const OpCost cols =
      matmul_softmax_cost(16384, 2048, 128, SoftmaxDim::cols, DType::bf16, DType::bf16);
  EXPECT_DOUBLE_EQ(cols.flops, 2.0 * 16384 * 2048 * 128 + 5.0 * 16384 * 2048);
  EXPECT_DOUBLE_EQ(cols.bytes, (16384.0 * 128 + 128.0 * 2048) * 2 + 16384.0 * 2048 * 2);
  EXPECT_EQ(cols.name, "matmul_softmax_cols bf16 16384x2048x128");
}

TEST(KernelCost, SoftmaxIsFiveFlopsAndOneReadOneWritePerElement) {
  const OpCost c = softmax_cost(4096, 2048, SoftmaxDim::cols, DType::bf16, DType::f32);
  EXPECT_DOUBLE_EQ(c.flops, 41943040.0);           // 5 * 2^23
  EXPECT_DOUBLE_EQ(c.bytes, 8388608.0 * (2 + 4));  // read bf16, write fp32
  EXPECT_EQ(c.name, "softmax_cols bf16 4096x2048");
  EXPECT_EQ(c.precision, "fp32");
  const OpCost r = softmax_cost(7, 17, SoftmaxDim::rows, DType::f32, DType::f32);
  EXPECT_DOUBLE_EQ(r.flops, 595.0);
  EXPECT_DOUBLE_EQ(r.bytes, 952.0);
  EXPECT_EQ(r.name, "softmax_rows fp32 7x17");
}

TEST(KernelCost, ElementwiseFlopsAndBytesPerOp) {
  struct Want {
    ElementwiseOp op;
    DType t;
    std::int64_t n;
    double flops, bytes;
    const char* name;
    const char* precision;
  };
  const Want wants[] = {
      {ElementwiseOp::add, DType::f32, 1000, 1000, 12000, "add fp32 n=1000", "fp32"},
      {ElementwiseOp::mul, DType::bf16, 10, 10, 60, "mul bf16 n=10", "fp32"},
      {ElementwiseOp::axpy, DType::f16, 4, 8, 24, "axpy fp16 n=4", "fp32"},
      {ElementwiseOp::relu, DType::f32, 5, 5, 40, "relu fp32 n=5", "fp32"},
      {ElementwiseOp::gelu, DType::bf16, 3, 24, 12, "gelu bf16 n=3", "fp32"},
      {ElementwiseOp::add, DType::f32, 0, 0, 0, "add fp32 n=0", "fp32"},
      {ElementwiseOp::add, DType::f32, std::int64_t{1} << 28, 268435456.0, 3221225472.0,
       "add fp32 n=268435456", "fp32"},
  };
  for (const Want& w : wants) {
    const OpCost c = elementwise_cost(w.op, w.n, w.t);
    EXPECT_DOUBLE_EQ(c.flops, w.flops) << w.name;
    EXPECT_DOUBLE_EQ(c.bytes, w.bytes) << w.name;
    EXPECT_EQ(c.name, w.name);
    EXPECT_EQ(c.precision, w.precision) << w.name;
  }
}

TEST(KernelCost, CustomElementwiseTakesTheCallersFlopsAndInputs) {
  const OpCost two = elementwise_cost(ElementwiseOp::custom, 10, DType::f32, 4, 2);
  EXPECT_DOUBLE_EQ(two.flops, 40);
  EXPECT_DOUBLE_EQ(two.bytes, 10 * 4 * 3);
  EXPECT_EQ(two.name, "custom fp32 n=10");
  const OpCost one = elementwise_cost(ElementwiseOp::custom, 10, DType::bf16, 1.5, 1);
  EXPECT_DOUBLE_EQ(one.flops, 15);
  EXPECT_DOUBLE_EQ(one.bytes, 10 * 2 * 2);
}

TEST(KernelCost, Names) {
  EXPECT_STREQ(softmax_dim_name(SoftmaxDim::rows), "rows");
  EXPECT_STREQ(softmax_dim_name(SoftmaxDim::cols), "cols");
  EXPECT_STREQ(elementwise_op_name(ElementwiseOp::add), "add");
  EXPECT_STREQ(elementwise_op_name(ElementwiseOp::mul), "mul");
  EXPECT_STREQ(elementwise_op_name(ElementwiseOp::axpy), "axpy");
  EXPECT_STREQ(elementwise_op_name(ElementwiseOp::relu), "relu");
  EXPECT_STREQ(elementwise_op_name(ElementwiseOp::gelu), "gelu");
  EXPECT_STREQ(elementwise_op_name(ElementwiseOp::custom), "custom");
  EXPECT_STREQ(matmul_path_name(MatmulPath::automatic), "auto");
  EXPECT_STREQ(matmul_path_name(MatmulPath::simt), "simt");
  EXPECT_STREQ(matmul_path_name(MatmulPath::sm80), "sm80");
  EXPECT_STREQ(matmul_path_name(MatmulPath::sm90), "sm90");
}

// --- dtypes -----------------------------------------------------------------------

TEST(KernelDType, NamesAndSizes) {
  EXPECT_STREQ(dtype_name(DType::f32), "fp32");
  EXPECT_STREQ(dtype_name(DType::tf32), "tf32");
  EXPECT_STREQ(dtype_name(DType::bf16), "bf16");
  EXPECT_STREQ(dtype_name(DType::f16), "fp16");
  EXPECT_EQ(dtype_bytes(DType::f32), 4u);
  EXPECT_EQ(dtype_bytes(DType::tf32), 4u);  // fp32 storage
  EXPECT_EQ(dtype_bytes(DType::bf16), 2u);
  EXPECT_EQ(dtype_bytes(DType::f16), 2u);
}

TEST(KernelDType, ParsesEverySpellingAndRoundTripsNames) {
  const std::pair<const char*, DType> spellings[] = {
      {"fp32", DType::f32},    {"f32", DType::f32},   {"float32", DType::f32},
      {"float", DType::f32},   {"FP32", DType::f32},  {"tf32", DType::tf32},
      {"TF32", DType::tf32},   {"bf16", DType::bf16}, {"bfloat16", DType::bf16},
      {"BF16", DType::bf16},   {"fp16", DType::f16},  {"f16", DType::f16},
      {"float16", DType::f16}, {"half", DType::f16},  {"Float16", DType::f16},
  };
  for (const auto& [text, want] : spellings) {
    DType got = DType::tf32 == want ? DType::f32 : DType::tf32;
    EXPECT_TRUE(parse_dtype(text, &got)) << text;
    EXPECT_EQ(got, want) << text;
  }
  for (DType t : {DType::f32, DType::tf32, DType::bf16, DType::f16}) {
    DType got = DType::f32;
    EXPECT_TRUE(parse_dtype(dtype_name(t), &got));
    EXPECT_EQ(got, t);
  }
}

TEST(KernelDType, RejectsUnknownNamesAndLeavesTheOutputAlone) {
  for (const char* text : {"", "fp8", "fp64", "bf32", "fp 32", " fp32", "int8"}) {
    DType got = DType::bf16;
    EXPECT_FALSE(parse_dtype(text, &got)) << "'" << text << "'";
    EXPECT_EQ(got, DType::bf16) << "'" << text << "'";
  }
}

// --- argument checks ----------------------------------------------------------------

// fn throws KernelError whose message contains every needle.
template <class Fn>
void expect_error(Fn fn, std::initializer_list<const char*> needles) {
  try {
    fn();
    ADD_FAILURE() << "no KernelError; expected one mentioning \"" << *needles.begin() << "\"";
  } catch (const KernelError& e) {
    for (const char* needle : needles) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
          << "message \"" << e.what() << "\" lacks \"" << needle << "\"";
    }
  }
}

MatmulProblem matmul_problem(std::int64_t m, std::int64_t n, std::int64_t k, DType in, DType out) {
  MatmulProblem p;
  p.a = at(kA);
  p.b = at(kB);
  p.c = at_mut(kC);
  p.m = m;
  p.n = n;
  p.k = k;
  p.in = in;
  p.out = out;
  return p;
}

TEST(KernelChecks, MatmulAcceptsEverySupportedDtypePair) {
  const std::pair<DType, DType> pairs[] = {{DType::f32, DType::f32},   {DType::tf32, DType::f32},
                                           {DType::bf16, DType::bf16}, {DType::bf16, DType::f32},
                                           {DType::f16, DType::f16},   {DType::f16, DType::f32}};
  for (const auto& in_out : pairs) {
    const DType in = in_out.first, out = in_out.second;
    EXPECT_NO_THROW(check_matmul(matmul_problem(1, 1, 1, in, out), 80))
        << dtype_name(in) << "->" << dtype_name(out);
    EXPECT_NO_THROW(check_matmul(matmul_problem(4097, 17, 1000, in, out), 90));
  }
}

TEST(KernelChecks, MatmulRefusesUnsupportedDtypePairs) {
  const std::pair<DType, DType> pairs[] = {{DType::f32, DType::bf16},  {DType::f32, DType::tf32},
                                           {DType::tf32, DType::bf16}, {DType::tf32, DType::tf32},
                                           {DType::bf16, DType::f16},  {DType::f16, DType::bf16}};
  for (const auto& in_out : pairs) {
    const DType in = in_out.first, out = in_out.second;
    const std::string pair = std::string(dtype_name(in)) + " -> " + dtype_name(out);
    expect_error([&] { check_matmul(matmul_problem(8, 8, 8, in, out), 90); },
                 {"matmul: unsupported dtypes", pair.c_str()});
  }
}

TEST(KernelChecks, MatmulNamesTheBadSize) {
  expect_error([] { check_matmul(matmul_problem(0, 8, 8, DType::f32, DType::f32), 90); },
               {"m = 0", ">= 1"});
  expect_error([] { check_matmul(matmul_problem(8, -1, 8, DType::f32, DType::f32), 90); },
               {"n = -1"});
  expect_error([] { check_matmul(matmul_problem(8, 8, 0, DType::f32, DType::f32), 90); },
               {"k = 0"});
  expect_error(
      [] { check_matmul(matmul_problem(8, 8, std::int64_t{1} << 31, DType::f32, DType::f32), 90); },
      {"k = 2147483648", "2^31-1"});
  EXPECT_NO_THROW(
      check_matmul(matmul_problem((std::int64_t{1} << 31) - 1, 1, 1, DType::f32, DType::f32), 90));
}

TEST(KernelChecks, MatmulNamesTheNullPointer) {
  MatmulProblem p = matmul_problem(8, 8, 8, DType::bf16, DType::bf16);
  p.a = nullptr;
  expect_error([&] { check_matmul(p, 90); }, {"A is a null pointer"});
  p = matmul_problem(8, 8, 8, DType::bf16, DType::bf16);
  p.b = nullptr;
  expect_error([&] { check_matmul(p, 90); }, {"B is a null pointer"});
  p = matmul_problem(8, 8, 8, DType::bf16, DType::bf16);
  p.c = nullptr;
  expect_error([&] { check_matmul(p, 90); }, {"C is a null pointer"});
}

TEST(KernelChecks, MatmulNeedsSm80) {
  expect_error([] { check_matmul(matmul_problem(8, 8, 8, DType::f32, DType::f32), 75); },
               {"compute capability 8.0", "sm_75"});
  EXPECT_NO_THROW(check_matmul(matmul_problem(8, 8, 8, DType::f32, DType::f32), 86));
  EXPECT_NO_THROW(check_matmul(matmul_problem(8, 8, 8, DType::f32, DType::f32), 100));
}

TEST(KernelChecks, MatmulPathLimits) {
  const MatmulProblem bf16 = matmul_problem(4096, 4096, 4096, DType::bf16, DType::bf16);
  const MatmulProblem f32 = matmul_problem(4096, 4096, 4096, DType::f32, DType::f32);
  EXPECT_NO_THROW(check_matmul_path(bf16, MatmulPath::automatic, 80));
  EXPECT_NO_THROW(check_matmul_path(f32, MatmulPath::simt, 80));
  EXPECT_NO_THROW(check_matmul_path(bf16, MatmulPath::sm80, 90));
  EXPECT_NO_THROW(check_matmul_path(bf16, MatmulPath::sm90, 90));
  expect_error([&] { check_matmul_path(bf16, MatmulPath::simt, 90); },
               {"simt", "fp32 only", "bf16"});
  expect_error([&] { check_matmul_path(f32, MatmulPath::sm80, 90); }, {"sm80", "not fp32"});
  expect_error([&] { check_matmul_path(f32, MatmulPath::sm90, 90); }, {"sm90", "not fp32"});
  expect_error([&] { check_matmul_path(bf16, MatmulPath::sm90, 80); },
               {"sm90", "sm_90 device", "sm_80"});
  // wgmma is sm_90a only: a newer GPU does not run the sm90 path.
  expect_error([&] { check_matmul_path(bf16, MatmulPath::sm90, 100); }, {"sm_90 device", "sm_100"});
  // The problem checks come first, whatever the path.
  expect_error(
      [&] {
        check_matmul_path(matmul_problem(0, 8, 8, DType::bf16, DType::bf16), MatmulPath::sm80, 90);
      },
      {"m = 0"});
}

TEST(KernelChecks, MatmulSm90NeedsSixteenByteStridesAndBases) {
  // k * 2 bytes = 8194: not a multiple of 16.
  expect_error(
      [] {
        check_matmul_path(matmul_problem(64, 64, 4097, DType::bf16, DType::bf16), MatmulPath::sm90,
                          90);
      },
      {"k*2 bytes", "k = 4097"});
  expect_error(
      [] {
        check_matmul_path(matmul_problem(64, 4, 64, DType::f16, DType::f16), MatmulPath::sm90, 90);
      },
      {"n*2 bytes", "n = 4"});
  // tf32: 4-byte elements, so k = 4 is enough (16 bytes).
  EXPECT_NO_THROW(
      check_matmul_path(matmul_problem(64, 4, 4, DType::tf32, DType::f32), MatmulPath::sm90, 90));
  expect_error(
      [] {
        check_matmul_path(matmul_problem(64, 6, 64, DType::tf32, DType::f32), MatmulPath::sm90, 90);
      },
      {"n*4 bytes", "n = 6"});
  MatmulProblem p = matmul_problem(64, 64, 64, DType::bf16, DType::bf16);
  p.a = at(kA + 8);
  expect_error([&] { check_matmul_path(p, MatmulPath::sm90, 90); }, {"16-byte aligned"});
  p = matmul_problem(64, 64, 64, DType::bf16, DType::bf16);
  p.b = at(kB + 2);
  expect_error([&] { check_matmul_path(p, MatmulPath::sm90, 90); }, {"16-byte aligned"});
}

TEST(KernelChecks, ChooseMatmulPath) {
  EXPECT_EQ(choose_matmul_path(matmul_problem(4096, 4096, 4096, DType::f32, DType::f32), 90),
            MatmulPath::simt);
  EXPECT_EQ(choose_matmul_path(matmul_problem(4096, 4096, 4096, DType::f32, DType::f32), 80),
            MatmulPath::simt);
  EXPECT_EQ(choose_matmul_path(matmul_problem(4096, 4096, 4096, DType::bf16, DType::bf16), 90),
            MatmulPath::sm90);
  EXPECT_EQ(choose_matmul_path(matmul_problem(4096, 4096, 4096, DType::tf32, DType::f32), 90),
            MatmulPath::sm90);
  EXPECT_EQ(choose_matmul_path(matmul_problem(4096, 4096, 4096, DType::bf16, DType::bf16), 80),
            MatmulPath::sm80);
  EXPECT_EQ(choose_matmul_path(matmul_problem(4096, 4096, 4096, DType::bf16, DType::bf16), 89),
            MatmulPath::sm80);
  EXPECT_EQ(choose_matmul_path(matmul_problem(4096, 4096, 4096, DType::bf16, DType::bf16), 100),
            MatmulPath::sm80);
  // On sm_90, shapes TMA cannot describe fall back to the portable tensor-core path.
  EXPECT_EQ(choose_matmul_path(matmul_problem(4096, 4096, 4097, DType::bf16, DType::bf16), 90),
            MatmulPath::sm80);
  EXPECT_EQ(choose_matmul_path(matmul_problem(1, 1, 1, DType::f16, DType::f32), 90),
            MatmulPath::sm80);
  MatmulProblem p = matmul_problem(4096, 4096, 4096, DType::bf16, DType::bf16);
  p.a = at(kA + 2);
  EXPECT_EQ(choose_matmul_path(p, 90), MatmulPath::sm80);
}

ElementwiseProblem elementwise_problem(bool with_y, std::int64_t n, DType t) {
  ElementwiseProblem p;
  p.x = at(kA);
  p.y = with_y ? at(kB) : nullptr;
  p.out = at_mut(kC);
  p.n = n;
  p.t = t;
  return p;
}

TEST(KernelChecks, ElementwiseAcceptsValidCalls) {
  for (DType t : {DType::f32, DType::bf16, DType::f16}) {
    for (ElementwiseOp op : {ElementwiseOp::add, ElementwiseOp::mul, ElementwiseOp::axpy}) {
      EXPECT_NO_THROW(check_elementwise(elementwise_problem(true, 1000, t), op, 90));
    }
    for (ElementwiseOp op : {ElementwiseOp::relu, ElementwiseOp::gelu}) {
      EXPECT_NO_THROW(check_elementwise(elementwise_problem(false, 1000, t), op, 80));
    }
    EXPECT_NO_THROW(
        check_elementwise(elementwise_problem(false, 7, t), ElementwiseOp::custom, 90, 1));
    EXPECT_NO_THROW(
        check_elementwise(elementwise_problem(true, 7, t), ElementwiseOp::custom, 90, 2));
  }
  // Odd element offsets are fine: only byte misalignment within an element is refused.
  ElementwiseProblem p = elementwise_problem(true, 5, DType::bf16);
  p.x = at(kA + 2);
  p.out = at_mut(kC + 6);
  EXPECT_NO_THROW(check_elementwise(p, ElementwiseOp::add, 90));
}

TEST(KernelChecks, ElementwiseZeroLengthChecksNoPointers) {
  ElementwiseProblem p;  // all null
  EXPECT_NO_THROW(check_elementwise(p, ElementwiseOp::add, 90));
  EXPECT_NO_THROW(check_elementwise(p, ElementwiseOp::gelu, 90));
  // ...but still refuses what can never run.
  p.t = DType::tf32;
  expect_error([&] { check_elementwise(p, ElementwiseOp::add, 90); }, {"add", "tf32"});
}

TEST(KernelChecks, ElementwiseNamesTheArgument) {
  expect_error(
      [] { check_elementwise(elementwise_problem(true, -1, DType::f32), ElementwiseOp::add, 90); },
      {"add: n = -1 is negative"});
  expect_error(
      [] {
        check_elementwise(elementwise_problem(false, 8, DType::tf32), ElementwiseOp::relu, 90);
      },
      {"relu: tf32"});
  expect_error(
      [] { check_elementwise(elementwise_problem(true, 8, DType::f32), ElementwiseOp::mul, 75); },
      {"mul: needs compute capability 8.0", "sm_75"});
  ElementwiseProblem p = elementwise_problem(true, 8, DType::f32);
  p.x = nullptr;
  expect_error([&] { check_elementwise(p, ElementwiseOp::axpy, 90); },
               {"axpy: x is a null pointer"});
  p = elementwise_problem(true, 8, DType::f32);
  p.y = nullptr;
  expect_error([&] { check_elementwise(p, ElementwiseOp::add, 90); }, {"add: y is a null pointer"});
  p = elementwise_problem(false, 8, DType::f32);
  p.out = nullptr;
  expect_error([&] { check_elementwise(p, ElementwiseOp::gelu, 90); },
               {"gelu: out is a null pointer"});
  expect_error(
      [] { check_elementwise(elementwise_problem(true, 8, DType::f32), ElementwiseOp::relu, 90); },
      {"relu: y must be null"});
  expect_error(
      [] {
        check_elementwise(elementwise_problem(false, 8, DType::f32), ElementwiseOp::custom, 90, 2);
      },
      {"custom: y is a null pointer"});
  expect_error(
      [] {
        check_elementwise(elementwise_problem(true, 8, DType::f32), ElementwiseOp::custom, 90, 3);
      },
      {"custom_inputs = 3"});
}

TEST(KernelChecks, ElementwisePointersMustBeElementAligned) {
  ElementwiseProblem p = elementwise_problem(true, 8, DType::f32);
  p.x = at(kA + 2);
  expect_error([&] { check_elementwise(p, ElementwiseOp::add, 90); },
               {"add: x is not aligned to its 4-byte fp32 element"});
  p = elementwise_problem(true, 8, DType::bf16);
  p.y = at(kB + 1);
  expect_error([&] { check_elementwise(p, ElementwiseOp::mul, 90); },
               {"mul: y is not aligned to its 2-byte bf16"});
  p = elementwise_problem(false, 8, DType::f16);
  p.out = at_mut(kC + 3);
  expect_error([&] { check_elementwise(p, ElementwiseOp::gelu, 90); },
               {"gelu: out is not aligned"});
}

SoftmaxProblem softmax_problem(std::int64_t m, std::int64_t n, DType in, DType out) {
  SoftmaxProblem p;
  p.x = at(kA);
  p.out = at_mut(kC);
  p.m = m;
  p.n = n;
  p.in = in;
  p.out_type = out;
  return p;
}

TEST(KernelChecks, SoftmaxAcceptsEverySupportedTypePair) {
  const std::pair<DType, DType> pairs[] = {{DType::f32, DType::f32},
                                           {DType::bf16, DType::bf16},
                                           {DType::bf16, DType::f32},
                                           {DType::f16, DType::f16},
                                           {DType::f16, DType::f32}};
  for (const auto& in_out : pairs) {
    const DType in = in_out.first, out = in_out.second;
    EXPECT_NO_THROW(check_softmax(softmax_problem(4096, 4097, in, out), 90))
        << dtype_name(in) << "->" << dtype_name(out);
  }
  // In place, and an empty matrix with no pointers.
  SoftmaxProblem p = softmax_problem(7, 17, DType::f32, DType::f32);
  p.out = at_mut(kA);
  EXPECT_NO_THROW(check_softmax(p, 80));
  EXPECT_NO_THROW(check_softmax(SoftmaxProblem{}, 90));
  // fp32 scores may be written as bf16 or fp16 (the unfused matmul_softmax does).
  EXPECT_NO_THROW(check_softmax(softmax_problem(8, 8, DType::f32, DType::bf16), 90));
  EXPECT_NO_THROW(check_softmax(softmax_problem(8, 8, DType::f32, DType::f16), 90));
}

TEST(KernelChecks, SoftmaxNamesTheArgument) {
  const std::pair<DType, DType> bad[] = {
      {DType::f32, DType::tf32}, {DType::bf16, DType::f16}, {DType::f16, DType::bf16}};
  for (const auto& in_out : bad) {
    const DType in = in_out.first, out = in_out.second;
    const std::string text =
        std::string("unsupported output type ") + dtype_name(out) + " for " + dtype_name(in);
    expect_error([&] { check_softmax(softmax_problem(8, 8, in, out), 90); },
                 {"softmax:", text.c_str()});
  }
  expect_error([] { check_softmax(softmax_problem(8, 8, DType::tf32, DType::f32), 90); },
               {"softmax: tf32"});
  expect_error([] { check_softmax(softmax_problem(-1, 8, DType::f32, DType::f32), 90); },
               {"softmax: m = -1 is negative"});
  expect_error([] { check_softmax(softmax_problem(8, -2, DType::f32, DType::f32), 90); },
               {"softmax: n = -2 is negative"});
  expect_error(
      [] { check_softmax(softmax_problem(std::int64_t{1} << 31, 1, DType::f32, DType::f32), 90); },
      {"m = 2147483648", "2^31-1"});
  expect_error([] { check_softmax(softmax_problem(8, 8, DType::f32, DType::f32), 70); },
               {"softmax", "sm_70"});
  SoftmaxProblem p = softmax_problem(8, 8, DType::f32, DType::f32);
  p.x = nullptr;
  expect_error([&] { check_softmax(p, 90); }, {"softmax: x is a null pointer"});
  p = softmax_problem(8, 8, DType::f32, DType::f32);
  p.out = nullptr;
  expect_error([&] { check_softmax(p, 90); }, {"softmax: out is a null pointer"});
  p = softmax_problem(8, 8, DType::bf16, DType::f32);
  p.out = at_mut(kC + 2);  // fine for bf16, not for the fp32 output
  expect_error([&] { check_softmax(p, 90); },
               {"softmax: out is not aligned to its 4-byte fp32 element"});
  p = softmax_problem(8, 8, DType::bf16, DType::f32);
  p.x = at(kA + 1);
  expect_error([&] { check_softmax(p, 90); },
               {"softmax: x is not aligned to its 2-byte bf16 element"});
}

// --- elementwise vector/scalar split ---------------------------------------------------

detail::ElementwisePlan plan3(std::uintptr_t x, std::uintptr_t y, std::uintptr_t out,
                              std::int64_t n, std::size_t es) {
  const void* pointers[3] = {at(x), at(out), at(y)};
  return detail::plan_elementwise(pointers, 3, n, es);
}

TEST(KernelElementwisePlan, AlignedPointersRunVectorsAndATail) {
  const detail::ElementwisePlan p = plan3(kA, kB, kC, 1003, 4);
  EXPECT_EQ(p.width, 4);
  EXPECT_EQ(p.head, 0);
  EXPECT_EQ(p.vectors, 250);
  EXPECT_EQ(p.tail, 3);
  const detail::ElementwisePlan b = plan3(kA, kB, kC, 1000, 2);
  EXPECT_EQ(b.width, 8);
  EXPECT_EQ(b.vectors, 125);
  EXPECT_EQ(b.tail, 0);
}

TEST(KernelElementwisePlan, SharedMisalignmentRunsAScalarHeadFirst) {
  // x + 1, y + 1, out + 1 in fp32: 3 scalars reach the 16-byte boundary.
  const detail::ElementwisePlan p = plan3(kA + 4, kB + 4, kC + 4, 100, 4);
  EXPECT_EQ(p.width, 4);
  EXPECT_EQ(p.head, 3);
  EXPECT_EQ(p.vectors, 24);
  EXPECT_EQ(p.tail, 1);
  // bf16 + 1 element: 7 scalars.
  const detail::ElementwisePlan b = plan3(kA + 2, kB + 2, kC + 2, 100, 2);
  EXPECT_EQ(b.head, 7);
  EXPECT_EQ(b.vectors, 11);
  EXPECT_EQ(b.tail, 5);
  // Shorter than the head: all scalar head.
  const detail::ElementwisePlan s = plan3(kA + 4, kB + 4, kC + 4, 2, 4);
  EXPECT_EQ(s.head, 2);
  EXPECT_EQ(s.vectors, 0);
  EXPECT_EQ(s.tail, 0);
}

TEST(KernelElementwisePlan, DifferentMisalignmentsRunScalar) {
  const detail::ElementwisePlan p = plan3(kA + 4, kB, kC + 12, 1000, 4);  // x + 1, out + 3
  EXPECT_EQ(p.width, 1);
  EXPECT_EQ(p.head, 0);
  EXPECT_EQ(p.vectors, 1000);
  EXPECT_EQ(p.tail, 0);
  // A one-input op only looks at x and out.
  const void* pointers[2] = {at(kA + 8), at(kC + 8)};
  const detail::ElementwisePlan u = detail::plan_elementwise(pointers, 2, 1000, 4);
  EXPECT_EQ(u.width, 4);
  EXPECT_EQ(u.head, 2);
}

// Every combination of small offsets and lengths: the three parts cover [0, n) exactly,
// and the vector body starts 16-byte aligned for every pointer.
TEST(KernelElementwisePlan, PartsCoverTheRangeAndVectorsAreAligned) {
  for (std::size_t es : {std::size_t{2}, std::size_t{4}}) {
    for (std::uintptr_t ox = 0; ox < 8; ++ox) {
      for (std::uintptr_t oy = 0; oy < 8; ++oy) {
        for (std::uintptr_t oo = 0; oo < 8; ++oo) {
          for (std::int64_t n = 0; n < 40; ++n) {
            const std::uintptr_t x = kA + ox * es, y = kB + oy * es, out = kC + oo * es;
            const detail::ElementwisePlan p = plan3(x, y, out, n, es);
            ASSERT_EQ(p.head + p.vectors * p.width + p.tail, n)
                << ox << " " << oy << " " << oo << " n=" << n;
            ASSERT_GE(p.head, 0);
            ASSERT_GE(p.tail, 0);
            if (p.width == 1) {
              ASSERT_EQ(p.head + p.tail, 0);
              continue;
            }
            ASSERT_EQ(p.width * es, 16u);
            ASSERT_LT(p.tail, p.width);
            for (std::uintptr_t base : {x, y, out}) {
              if (p.vectors == 0) break;  // n shorter than the head: nothing to align
              ASSERT_EQ((base + static_cast<std::uintptr_t>(p.head) * es) % 16, 0u)
                  << "vector body misaligned: " << ox << " " << oy << " " << oo << " n=" << n;
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace flopline::kernels
