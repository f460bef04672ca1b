// PyTorch emit_nvtx(record_shapes=True) range names -> FLOPs. The names in the first
// tests are copied from a real run (PyTorch 2.11, H200; a small NVTX injection library
// logged every nvtxRangePushA); every FLOP expectation is worked out by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "flopline/capture/record_decoder.h"
#include "flopline/capture/torch_nvtx.h"
#include "record_test_util.h"

namespace flopline::capture {
namespace {

std::optional<double> flops_of(std::string_view message) {
  const auto n = parse_torch_nvtx_name(message);
  if (!n) return std::nullopt;
  return torch_op_flops(n->op, n->sizes);
}

TEST(CaptureTorchNvtx, ParsesEveryFieldOfARealName) {
  const auto n = parse_torch_nvtx_name(
      "aten::addmm, seq = 3, op_id = 14, sizes = [[32], [10, 64], [64, 32], [], []], "
      "input_op_ids = [(0,-1), (10,0), (11,0), (0,-1), (0,-1)]");
  ASSERT_TRUE(n);
  EXPECT_EQ(n->op, "aten::addmm");
  EXPECT_EQ(n->seq, 3);
  EXPECT_EQ(n->op_id, 14u);
  ASSERT_EQ(n->sizes.size(), 5u);
  EXPECT_EQ(n->sizes[0], Shape({32}));
  EXPECT_EQ(n->sizes[1], Shape({10, 64}));
  EXPECT_EQ(n->sizes[2], Shape({64, 32}));
  EXPECT_EQ(n->sizes[3], Shape{});
  EXPECT_EQ(n->sizes_text, "[[32], [10, 64], [64, 32], [], []]");
  ASSERT_EQ(n->input_op_ids.size(), 5u);
  EXPECT_EQ(n->input_op_ids[1], (std::pair<std::uint64_t, std::int64_t>{10, 0}));
  EXPECT_EQ(n->input_op_ids[0], (std::pair<std::uint64_t, std::int64_t>{0, -1}));
}

TEST(CaptureTorchNvtx, VariantsPyTorchWrites) {
  // No autograd (no seq); older PyTorch (no op_id / input_op_ids); no record_shapes.
  const auto no_seq = parse_torch_nvtx_name(
      "aten::mm, op_id = 40, sizes = [[128, 64], [64, 32]], input_op_ids = [(32,0), (36,0)]");
  ASSERT_TRUE(no_seq);
  EXPECT_FALSE(no_seq->seq);
  const auto old = parse_torch_nvtx_name("aten::mm, seq = 12, sizes = [[128, 64], [64, 32]]");
  ASSERT_TRUE(old);
  EXPECT_EQ(old->seq, 12);
  EXPECT_FALSE(old->has_input_op_ids);
  const auto no_shapes = parse_torch_nvtx_name("aten::mm, seq = 0, op_id = 1");
  ASSERT_TRUE(no_shapes);
  EXPECT_FALSE(no_shapes->has_sizes);
  const auto backward =
      parse_torch_nvtx_name("autograd::engine::evaluate_function: MmBackward0, op_id = 53");
  ASSERT_TRUE(backward);
  EXPECT_EQ(backward->op, "autograd::engine::evaluate_function: MmBackward0");
  // A nested list (a future form for tensor lists) is an unknown entry, not an error.
  const auto nested = parse_torch_nvtx_name("aten::cat, seq = 9, sizes = [[[2, 3], [4, 3]], []]");
  ASSERT_TRUE(nested);
  ASSERT_EQ(nested->sizes.size(), 2u);
  EXPECT_FALSE(nested->sizes[0]);
  // Keys a later PyTorch might add are skipped.
  const auto extra =
      parse_torch_nvtx_name("aten::mm, seq = 1, dtype = [float, float], sizes = [[2, 3], [3, 4]]");
  ASSERT_TRUE(extra);
  EXPECT_EQ(torch_op_flops(extra->op, extra->sizes), 2.0 * 2 * 4 * 3);
}

TEST(CaptureTorchNvtx, NonTorchAndMalformedNamesAreIgnored) {
  for (const char* msg :
       {"aten::mm", "matmul [flops=1e9]", "", ", seq = 1", "aten::mm, seq = x",
        "aten::mm, seq = 1, sizes = [[1, 2]", "aten::mm, sizes = [[1, a]]",
        "aten::mm, sizes = [1, 2]", "aten::mm, op_id = -3", "aten::mm, seq 1",
        "aten::mm, input_op_ids = [(1,0)", "aten::mm, sizes = [[1, 2]] trailing"}) {
    EXPECT_FALSE(parse_torch_nvtx_name(msg)) << msg;
  }
}

TEST(CaptureTorchNvtx, FlopsOfEachOperatorFromRealNames) {
  // mm [128,64] x [64,32]: 2*128*32*64
  EXPECT_EQ(flops_of("aten::mm, seq = 0, op_id = 1, sizes = [[128, 64], [64, 32]], input_op_ids = "
                     "[(0,-1), (0,-1)]"),
            2.0 * 128 * 32 * 64);
  // addmm: 2*128*32*64 + 128*32
  EXPECT_EQ(
      flops_of("aten::addmm, seq = 1, op_id = 2, sizes = [[32], [128, 64], [64, 32], [], []], "
               "input_op_ids = [(0,-1), (0,-1), (0,-1), (0,-1), (0,-1)]"),
      2.0 * 128 * 32 * 64 + 128 * 32);
  // bmm [4,16,8] x [4,8,5]: 2*4*16*5*8
  EXPECT_EQ(flops_of("aten::bmm, seq = 2, op_id = 3, sizes = [[4, 16, 8], [4, 8, 5]], input_op_ids "
                     "= [(0,-1), (0,-1)]"),
            2.0 * 4 * 16 * 5 * 8);
  // baddbmm: 2*4*16*5*8 + 4*16*5
  EXPECT_EQ(
      flops_of(
          "aten::baddbmm, seq = 2, op_id = 4, sizes = [[4, 16, 5], [4, 16, 8], [4, 8, 5], [], []], "
          "input_op_ids = [(0,-1), (0,-1), (0,-1), (0,-1), (0,-1)]"),
      2.0 * 4 * 16 * 5 * 8 + 4 * 16 * 5);
  // linear with a 3-D input [2,5,64], weight [32,64], bias [32]: batch 10
  EXPECT_EQ(flops_of("aten::linear, seq = 2, op_id = 9, sizes = [[2, 5, 64], [32, 64], [32]], "
                     "input_op_ids = [(6,0), (0,-1), (0,-1)]"),
            2.0 * 10 * 64 * 32 + 10 * 32);
  // linear without bias
  EXPECT_EQ(flops_of("aten::linear, seq = 5, op_id = 16, sizes = [[128, 64], [32, 64], []], "
                     "input_op_ids = [(0,-1), (0,-1), (0,-1)]"),
            2.0 * 128 * 64 * 32);
  // Not counted: other operators, and shapes that do not fit.
  EXPECT_FALSE(flops_of("aten::cat, seq = 9, op_id = 31, sizes = [[128, 64], [128, 64], []]"));
  EXPECT_FALSE(flops_of("aten::mm, sizes = [[128, 64], [32, 32]]"));
  EXPECT_FALSE(flops_of("aten::bmm, sizes = [[4, 16, 8], [3, 8, 5]]"));
  EXPECT_FALSE(flops_of("aten::linear, sizes = [[2, 5, 64], [32, 63], [32]]"));
  EXPECT_FALSE(flops_of("aten::addmm, sizes = [[32], [128, 64]]"));
}

TEST(CaptureTorchNvtx, ConvolutionNeedsItsOutputShape) {
  const std::vector<std::optional<Shape>> in = {Shape{2, 3, 32, 32}, Shape{16, 3, 3, 3}, Shape{16},
                                                Shape{}};
  EXPECT_FALSE(torch_op_flops("aten::conv2d", in));  // stride and padding unknown
  const Shape out = {2, 16, 16, 16};                 // stride 2, padding 1
  // 2 * N*Cout*Ho*Wo * Cin/g*kh*kw + bias N*Cout*Ho*Wo = 2*8192*27 + 8192
  EXPECT_EQ(torch_op_flops("aten::conv2d", in, &out), 2.0 * 8192 * 27 + 8192);
  // cudnn_convolution takes no bias input.
  const std::vector<std::optional<Shape>> cudnn = {Shape{2, 3, 32, 32}, Shape{16, 3, 3, 3},
                                                   Shape{}};
  EXPECT_EQ(torch_op_flops("aten::cudnn_convolution", cudnn, &out), 2.0 * 8192 * 27);
  // Grouped (depthwise) conv: Cin 32, weight [32, 1, 3, 3] -> groups 32.
  const std::vector<std::optional<Shape>> dw = {Shape{1, 32, 8, 8}, Shape{32, 1, 3, 3}, Shape{}};
  const Shape dw_out = {1, 32, 8, 8};
  EXPECT_EQ(torch_op_flops("aten::convolution", dw, &dw_out), 2.0 * 32 * 64 * 1 * 9);
  // Channels that do not divide, or an output with other channels: no count.
  const std::vector<std::optional<Shape>> bad = {Shape{1, 30, 8, 8}, Shape{32, 4, 3, 3}, Shape{}};
  EXPECT_FALSE(torch_op_flops("aten::convolution", bad, &dw_out));
  const Shape wrong_out = {1, 31, 8, 8};
  EXPECT_FALSE(torch_op_flops("aten::convolution", dw, &wrong_out));
  // conv1d and unbatched input
  const std::vector<std::optional<Shape>> c1 = {Shape{4, 10}, Shape{6, 4, 3}, Shape{}};
  const Shape c1_out = {6, 8};
  EXPECT_EQ(torch_op_flops("aten::conv1d", c1, &c1_out), 2.0 * 6 * 8 * 4 * 3);
}

// The whole conv2d call as PyTorch 2.11 named it (conv2d > convolution > _convolution >
// cudnn_convolution, then the bias add_ that consumed cudnn_convolution's output).
std::vector<std::string> conv_call_names() {
  return {
      "aten::conv2d, seq = 7, op_id = 22, sizes = [[2, 3, 32, 32], [16, 3, 3, 3], [16], [], [], "
      "[], []], "
      "input_op_ids = [(0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1)]",
      "aten::convolution, seq = 7, op_id = 23, sizes = [[2, 3, 32, 32], [16, 3, 3, 3], [16], [], "
      "[], [], [], [], []], "
      "input_op_ids = [(0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1)]",
      "aten::_convolution, op_id = 24, sizes = [[2, 3, 32, 32], [16, 3, 3, 3], [16], [], [], [], "
      "[], [], [], [], [], "
      "[], []], input_op_ids = [(0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), "
      "(0,-1), (0,-1), "
      "(0,-1), (0,-1), (0,-1)]",
      "aten::cudnn_convolution, op_id = 25, sizes = [[2, 3, 32, 32], [16, 3, 3, 3], [], [], [], "
      "[], [], [], []], "
      "input_op_ids = [(0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1), (0,-1)]",
      "aten::reshape, op_id = 26, sizes = [[16], []], input_op_ids = [(0,-1), (0,-1)]",
      "aten::add_, op_id = 28, sizes = [[2, 16, 16, 16], [1, 16, 1, 1], []], input_op_ids = "
      "[(25,0), (26,0), (0,-1)]",
  };
}

TEST(CaptureTorchNvtx, ConvolutionOutputFoundThroughItsConsumerAndSharedByTheNest) {
  const std::vector<std::string> names = conv_call_names();
  // Nesting on one thread: conv2d [0,100] > convolution [1,99] > _convolution [2,98] >
  // cudnn_convolution [3,50]; reshape [51,52] and add_ [53,60] inside _convolution.
  const std::vector<std::pair<TimeNs, TimeNs>> times = {{0, 100}, {1, 99},  {2, 98},
                                                        {3, 50},  {51, 52}, {53, 60}};
  std::vector<TorchRangeInput> in;
  for (std::size_t i = 0; i < names.size(); ++i)
    in.push_back({names[i], 1, times[i].first, times[i].second});
  const auto counts = torch_range_counts(in);
  ASSERT_EQ(counts.size(), names.size());
  const double n_out = 2.0 * 16 * 16 * 16;             // 8192 output points
  EXPECT_EQ(counts[0].flops, 2 * n_out * 27 + n_out);  // conv2d, with bias
  EXPECT_EQ(counts[1].flops, 2 * n_out * 27 + n_out);  // convolution
  EXPECT_EQ(counts[2].flops, 2 * n_out * 27 + n_out);  // _convolution
  EXPECT_EQ(counts[3].flops, 2 * n_out * 27);          // cudnn_convolution, no bias input
  EXPECT_EQ(counts[3].output, Shape({2, 16, 16, 16}));
  EXPECT_TRUE(counts[4].parsed);
  EXPECT_FALSE(counts[4].flops);

  // Without the consumer nothing tells the output size: no FLOPs, not a guess.
  in.pop_back();
  const auto without = torch_range_counts(in);
  for (std::size_t i = 0; i < 4; ++i) EXPECT_FALSE(without[i].flops) << names[i];
}

TEST(CaptureTorchNvtx, RangesFromEmitNvtxShowTheOperatorNameWithShapesInArgs) {
  RecordBatch b;
  b.process_id = 55;
  auto push = [&](std::uint32_t id, TimeNs ts, std::string name) {
    b.markers.push_back(thread_marker(id, ts, kMarkerStart, std::move(name), 0, 9));
  };
  auto pop = [&](std::uint32_t id, TimeNs ts) {
    b.markers.push_back(thread_marker(id, ts, kMarkerEnd, "", 0, 9));
  };
  const auto names = conv_call_names();
  push(1, 0, names[0]);
  push(2, 10, names[3]);
  pop(2, 20);
  push(3, 30, names[5]);
  pop(3, 40);
  pop(1, 50);
  push(4, 60,
       "aten::mm, seq = 0, op_id = 1, sizes = [[128, 64], [64, 32]], input_op_ids = [(0,-1), "
       "(0,-1)]");
  pop(4, 70);
  DecodeResult r;
  const trace::Trace t = decode_to_trace(b, {}, &r);
  ASSERT_EQ(r.markers.ranges.size(), 4u);
  const NvtxRange& conv = r.markers.ranges[0];
  EXPECT_EQ(conv.name, "aten::conv2d");
  EXPECT_TRUE(conv.from_torch);
  EXPECT_EQ(conv.torch_seq, 7);
  EXPECT_EQ(conv.torch_op_id, 22u);
  EXPECT_EQ(conv.torch_output, "[2, 16, 16, 16]");
  EXPECT_EQ(conv.count_source, CountSource::kTorchShapes);
  EXPECT_EQ(conv.metrics.flops, 2.0 * 8192 * 27 + 8192);
  EXPECT_FALSE(conv.metrics.has_bytes());  // dtypes are not in the names
  const NvtxRange& mm = r.markers.ranges[3];
  EXPECT_EQ(mm.name, "aten::mm");
  EXPECT_EQ(mm.metrics.flops, 2.0 * 128 * 32 * 64);
  for (const auto& track : t.tracks) {
    for (const auto& row : track.rows) {
      for (const auto& s : row) {
        if (t.str(s.name) != "aten::mm") continue;
        EXPECT_EQ(
            t.args.json(s.args),
            R"({"flops source":"emit_nvtx sizes","Sequence number":0,"op_id":1,"Input Dims":[[128, 64], [64, 32]],)"
            R"("Output Dims":[128, 32]})");
      }
    }
  }
}

TEST(CaptureTorchNvtx, BytesOnlyWithAKnownElementSize) {
  const std::vector<std::optional<Shape>> in = {Shape{128, 64}, Shape{64, 32}};
  const auto out = torch_op_output_shape("aten::mm", in);
  ASSERT_TRUE(out);
  EXPECT_EQ(*out, Shape({128, 32}));
  EXPECT_EQ(torch_op_bytes(in, *out, 2), (128.0 * 64 + 64 * 32 + 128 * 32) * 2);
  EXPECT_FALSE(torch_op_bytes(in, *out, 0));
  const std::vector<std::optional<Shape>> linear = {Shape{2, 5, 64}, Shape{32, 64}};
  EXPECT_EQ(torch_op_output_shape("aten::linear", linear), Shape({2, 5, 32}));
  const std::vector<std::optional<Shape>> baddbmm = {Shape{4, 16, 5}, Shape{4, 16, 8},
                                                     Shape{4, 8, 5}};
  EXPECT_EQ(torch_op_output_shape("aten::baddbmm", baddbmm), Shape({4, 16, 5}));
}

}  // namespace
}  // namespace flopline::capture
