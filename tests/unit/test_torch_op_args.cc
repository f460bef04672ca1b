// FLOPs, bytes and precision of torch.profiler cpu_ops from their shape args
// (torch_op_args.h) and the formulas added for them (torch_ops.h). The args texts are
// in the form PyTorch 2.11 writes them (samples/traces/kineto_h200_matmul_softmax);
// every expected count is worked out by hand in the test.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "flopline/trace/torch_op_args.h"
#include "flopline/trace/torch_ops.h"

namespace flopline::trace {
namespace {

TorchOpCounts counts_of(std::string_view op, std::string_view args) {
  const auto a = parse_torch_op_args(args);
  EXPECT_TRUE(a) << args;
  return a ? torch_op_counts(op, *a) : TorchOpCounts{};
}

TEST(TorchOpArgs, ParsesDimsTypesAndConcreteInputs) {
  const auto a = parse_torch_op_args(
      R"({"External id": 3, "Concrete Inputs": ["", "", "[1, 1]", "1"], )"
      R"("Input type": ["float", "c10::BFloat16", "ScalarList", "Scalar"], )"
      R"("Input Strides": [[4096, 1], [4096, 1], [], []], )"
      R"("Input Dims": [[256, 128], [128, 192], [], [[2, 3], [4, 3]]], "Ev Idx": 2})");
  ASSERT_TRUE(a);
  ASSERT_EQ(a->dims.size(), 4u);
  EXPECT_EQ(a->dims[0], Shape({256, 128}));
  EXPECT_EQ(a->dims[1], Shape({128, 192}));
  EXPECT_EQ(a->dims[2], Shape{});
  EXPECT_FALSE(a->dims[3]);  // a tensor list: not one shape
  EXPECT_EQ(a->types, (std::vector<std::string>{"float", "c10::BFloat16", "ScalarList", "Scalar"}));
  EXPECT_EQ(a->concrete, (std::vector<std::string>{"", "", "[1, 1]", "1"}));
  EXPECT_FALSE(parse_torch_op_args(R"({"External id": 3})"));
  EXPECT_FALSE(parse_torch_op_args(R"({"Input Dims": "x"})"));
}

TEST(TorchOpArgs, MatmulFamilyFlopsBytesAndPrecision) {
  // mm [256,128] x [128,192] fp32: 2*256*192*128 FLOPs; (256*128 + 128*192 + 256*192) * 4 bytes.
  const TorchOpCounts mm = counts_of(
      "aten::mm", R"({"Input type": ["float", "float"], "Input Dims": [[256, 128], [128, 192]]})");
  EXPECT_EQ(mm.flops, 2.0 * 256 * 192 * 128);
  EXPECT_EQ(mm.bytes, (256.0 * 128 + 128 * 192 + 256 * 192) * 4);
  EXPECT_EQ(mm.precision, "fp32");
  // addmm bias [96], x [64,128], w^T [128,96] in bf16: 2*64*96*128 + 64*96.
  const TorchOpCounts addmm = counts_of(
      "aten::addmm",
      R"({"Input type": ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"],)"
      R"( "Input Dims": [[96], [64, 128], [128, 96], [], []]})");
  EXPECT_EQ(addmm.flops, 2.0 * 64 * 96 * 128 + 64 * 96);
  EXPECT_EQ(addmm.bytes, (96.0 + 64 * 128 + 128 * 96 + 64 * 96) * 2);
  EXPECT_EQ(addmm.precision, "bf16");
  // bmm [8,64,32] x [8,32,48]: 2*8*64*48*32.
  const TorchOpCounts bmm = counts_of(
      "aten::bmm",
      R"({"Input type": ["c10::Half", "c10::Half"], "Input Dims": [[8, 64, 32], [8, 32, 48]]})");
  EXPECT_EQ(bmm.flops, 2.0 * 8 * 64 * 48 * 32);
  EXPECT_EQ(bmm.precision, "fp16");
  // Shapes that do not fit give nothing.
  EXPECT_FALSE(counts_of("aten::mm", R"({"Input Dims": [[256, 128], [127, 192]]})").flops);
  EXPECT_FALSE(counts_of("aten::softmax", R"({"Input Dims": [[256, 128], [], []]})").flops);
}

TEST(TorchOpArgs, MatmulFollowsTorchMatmulShapes) {
  const std::vector<std::optional<Shape>> dot = {Shape{7}, Shape{7}};
  EXPECT_EQ(torch_op_flops("aten::matmul", dot), 2.0 * 7);
  const std::vector<std::optional<Shape>> mv = {Shape{5, 7}, Shape{7}};
  EXPECT_EQ(torch_op_flops("aten::matmul", mv), 2.0 * 5 * 7);
  EXPECT_EQ(torch_op_output_shape("aten::matmul", mv), Shape({5}));
  // [2, 1, 5, 7] x [3, 7, 4]: batch dims broadcast to [2, 3].
  const std::vector<std::optional<Shape>> bcast = {Shape{2, 1, 5, 7}, Shape{3, 7, 4}};
  EXPECT_EQ(torch_op_flops("aten::matmul", bcast), 2.0 * 2 * 3 * 5 * 4 * 7);
  EXPECT_EQ(torch_op_output_shape("aten::matmul", bcast), Shape({2, 3, 5, 4}));
  const std::vector<std::optional<Shape>> bad = {Shape{2, 5, 7}, Shape{3, 7, 4}};
  EXPECT_FALSE(torch_op_flops("aten::matmul", bad));
}

TEST(TorchOpArgs, AttentionCountsBothMatmuls) {
  // q [2, 8, 128, 64], k [2, 8, 256, 64], v [2, 8, 256, 32]:
  // QK^T 2*16*128*256*64, PV 2*16*128*256*32.
  const std::vector<std::optional<Shape>> in = {Shape{2, 8, 128, 64}, Shape{2, 8, 256, 64},
                                                Shape{2, 8, 256, 32}, Shape{}};
  for (const char* op :
       {"aten::scaled_dot_product_attention", "aten::_scaled_dot_product_flash_attention"}) {
    EXPECT_EQ(torch_op_flops(op, in), 2.0 * 16 * 128 * 256 * 64 + 2.0 * 16 * 128 * 256 * 32) << op;
  }
  EXPECT_EQ(torch_op_output_shape("aten::scaled_dot_product_attention", in),
            Shape({2, 8, 128, 32}));
  const std::vector<std::optional<Shape>> mismatch = {Shape{2, 8, 128, 64}, Shape{2, 8, 256, 60},
                                                      Shape{2, 8, 256, 32}};
  EXPECT_FALSE(torch_op_flops("aten::scaled_dot_product_attention", mismatch));
}

TEST(TorchOpArgs, ConvolutionOutputFromConcreteInputs) {
  // conv2d x [4,16,32,32], w [32,16,3,3], bias, stride 1, padding 1, dilation 1:
  // out [4,32,32,32]; 2*4*32*(32*32)*16*9 + 4*32*32*32 (bias).
  const TorchOpCounts conv = counts_of(
      "aten::conv2d",
      R"({"Concrete Inputs": ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "1"],)"
      R"( "Input type": ["float", "float", "float", "ScalarList", "ScalarList", "ScalarList", "Scalar"],)"
      R"( "Input Dims": [[4, 16, 32, 32], [32, 16, 3, 3], [32], [], [], [], []]})");
  EXPECT_EQ(conv.output, Shape({4, 32, 32, 32}));
  EXPECT_EQ(conv.flops, 2.0 * 4 * 32 * 1024 * 16 * 9 + 4.0 * 32 * 1024);
  // Stride 2, no padding, dilation 2: (32 - 2*2 - 1) / 2 + 1 = 14.
  const TorchOpCounts strided = counts_of(
      "aten::convolution",
      R"({"Concrete Inputs": ["", "", "", "[2, 2]", "[0, 0]", "[2, 2]", "False", "[0, 0]", "1"],)"
      R"( "Input Dims": [[4, 16, 32, 32], [32, 16, 3, 3], [], [], [], [], [], [], []]})");
  EXPECT_EQ(strided.output, Shape({4, 32, 14, 14}));
  EXPECT_EQ(strided.flops, 2.0 * 4 * 32 * 14 * 14 * 16 * 9);
  // cudnn_convolution: padding comes before stride, and no bias.
  const TorchOpCounts cudnn = counts_of(
      "aten::cudnn_convolution",
      R"({"Concrete Inputs": ["", "", "[1, 1]", "[1, 1]", "[1, 1]", "1", "False", "False", "True"],)"
      R"( "Input Dims": [[4, 16, 32, 32], [32, 16, 3, 3], [], [], [], [], [], [], []]})");
  EXPECT_EQ(cudnn.flops, 2.0 * 4 * 32 * 1024 * 16 * 9);
  // padding='same' keeps the size; a transposed convolution and missing values give nothing.
  const TorchOpCounts same =
      counts_of("aten::conv1d", R"({"Concrete Inputs": ["", "", "", "[1]", "'same'", "[1]", "1"],)"
                                R"( "Input Dims": [[2, 8, 100], [16, 8, 5], [], [], [], [], []]})");
  EXPECT_EQ(same.output, Shape({2, 16, 100}));
  EXPECT_FALSE(
      counts_of(
          "aten::convolution",
          R"({"Concrete Inputs": ["", "", "", "[1, 1]", "[0, 0]", "[1, 1]", "True", "[0, 0]", "1"],)"
          R"( "Input Dims": [[4, 16, 32, 32], [16, 32, 3, 3], [], [], [], [], [], [], []]})")
          .flops);
  EXPECT_FALSE(
      counts_of("aten::conv2d", R"({"Input Dims": [[4, 16, 32, 32], [32, 16, 3, 3], [32]]})")
          .flops);
}

TEST(TorchOpArgs, DtypesAndIntLists) {
  EXPECT_EQ(precision_of_torch_dtype("float"), "fp32");
  EXPECT_EQ(precision_of_torch_dtype("c10::BFloat16"), "bf16");
  EXPECT_EQ(precision_of_torch_dtype("c10::Float8_e4m3fn"), "fp8");
  EXPECT_EQ(precision_of_torch_dtype("long int"), "");
  EXPECT_EQ(torch_dtype_bytes("double"), 8);
  EXPECT_EQ(torch_dtype_bytes("c10::Float8_e5m2"), 1);
  EXPECT_EQ(torch_dtype_bytes("Scalar"), 0);
  EXPECT_EQ(parse_int_list_text("[1, 2, 3]"), (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_EQ(parse_int_list_text("7"), (std::vector<std::int64_t>{7}));
  EXPECT_FALSE(parse_int_list_text("[1, x]"));
  EXPECT_FALSE(parse_int_list_text(""));
  EXPECT_FALSE(parse_int_list_text("1 2"));
}

}  // namespace
}  // namespace flopline::trace
