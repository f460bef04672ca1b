// The NVTX count suffix grammar, the payload rule and the C++ API's formatter: valid
// forms give their counts and a stripped name; anything malformed is ignored whole.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "flopline/capture/nvtx_flops.h"

namespace flopline::capture {
namespace {

TEST(CaptureNvtxSuffix, PlainNumbersExponentsAndScales) {
  EXPECT_EQ(parse_count("0"), 0.0);
  EXPECT_EQ(parse_count("42"), 42.0);
  EXPECT_EQ(parse_count("1.37e11"), 1.37e11);
  EXPECT_EQ(parse_count("1E+3"), 1000.0);
  EXPECT_EQ(parse_count("2.5e-1"), 0.25);
  EXPECT_EQ(parse_count(".5"), 0.5);
  EXPECT_EQ(parse_count("5."), 5.0);
  EXPECT_EQ(parse_count("4k"), 4000.0);
  EXPECT_EQ(parse_count("4K"), 4000.0);
  EXPECT_EQ(parse_count("3M"), 3e6);
  EXPECT_EQ(parse_count("1.5G"), 1.5e9);
  EXPECT_EQ(parse_count("2T"), 2e12);
  EXPECT_EQ(parse_count("1P"), 1e15);
  EXPECT_EQ(parse_count("1e3k"), 1e6);
  EXPECT_EQ(parse_count("1Ki"), 1024.0);
  EXPECT_EQ(parse_count("2Mi"), 2.0 * 1024 * 1024);
  EXPECT_EQ(parse_count("1Gi"), 1073741824.0);
}

TEST(CaptureNvtxSuffix, MalformedNumbersAreRefused) {
  for (const char* bad : {"", "-1", "+1", "e5", "1e", "1e+", ".", "1.2.3", "1m", "1g", "1KB",
                          "1Kii", "1 k", "0x10", "nan", "inf", "1e999", "12a", "١"}) {
    EXPECT_FALSE(parse_count(bad).has_value()) << bad;
  }
}

TEST(CaptureNvtxSuffix, SuffixGivesCountsAndIsStripped) {
  const auto p = parse_range_message("matmul 4096 [flops=1.37e11 bytes=1.0e8]");
  EXPECT_TRUE(p.has_suffix);
  EXPECT_EQ(p.name, "matmul 4096");
  EXPECT_EQ(p.counts.flops, 1.37e11);
  EXPECT_EQ(p.counts.bytes, 1.0e8);

  const auto q = parse_range_message("attn\t[ BYTES = 2Gi ,  flops=3T ]  ");
  EXPECT_TRUE(q.has_suffix);
  EXPECT_EQ(q.name, "attn");
  EXPECT_EQ(q.counts.flops, 3e12);
  EXPECT_EQ(q.counts.bytes, 2.0 * 1073741824.0);

  const auto only_flops = parse_range_message("gemm[flops=5]");
  EXPECT_EQ(only_flops.name, "gemm");
  EXPECT_EQ(only_flops.counts.flops, 5.0);
  EXPECT_FALSE(only_flops.counts.bytes);

  // Only the last bracket is the suffix; an earlier one is part of the name.
  const auto nested = parse_range_message("layer[3] [bytes=8]");
  EXPECT_EQ(nested.name, "layer[3]");
  EXPECT_EQ(nested.counts.bytes, 8.0);

  const auto bare = parse_range_message("[flops=1]");
  EXPECT_TRUE(bare.has_suffix);
  EXPECT_EQ(bare.name, "");
}

TEST(CaptureNvtxSuffix, PrecisionIsAWordAndRoundTrips) {
  const auto p = parse_range_message("matmul [flops=2e9, precision=tf32 bytes=12]");
  ASSERT_TRUE(p.has_suffix);
  EXPECT_EQ(p.name, "matmul");
  EXPECT_EQ(p.counts.precision, "tf32");
  EXPECT_DOUBLE_EQ(*p.counts.flops, 2e9);
  EXPECT_DOUBLE_EQ(*p.counts.bytes, 12);
  const auto only = parse_range_message("softmax [precision=bfloat16]");
  ASSERT_TRUE(only.has_suffix);
  EXPECT_EQ(only.counts.precision, "bfloat16");
  EXPECT_FALSE(only.counts.flops.has_value());
  for (const char* bad : {"x [precision=]", "x [precision=tf-32]", "x [precision=a precision=b]",
                          "x [precision=tf32,]"}) {
    const auto b = parse_range_message(bad);
    EXPECT_FALSE(b.has_suffix) << bad;
    EXPECT_EQ(b.name, bad);
  }
  RangeCounts c;
  c.flops = 1e12;
  c.precision = "bf16";
  const auto back = parse_range_message(format_range_message("gemm", c));
  EXPECT_EQ(back.counts.precision, "bf16");
  EXPECT_DOUBLE_EQ(*back.counts.flops, 1e12);
  c.precision = "not a word";  // never written, so never misread
  EXPECT_EQ(format_range_message("gemm", c), "gemm [flops=1e+12]");
}

// A plan is a word like a precision: it reads back, and a bad one is no suffix at all.
TEST(CaptureNvtxSuffix, PlanIsAWordAndRoundTrips) {
  const auto p =
      parse_range_message("matmul_softmax_rows [flops=1e9 precision=tf32 plan=cluster_rows]");
  ASSERT_TRUE(p.has_suffix);
  EXPECT_EQ(p.name, "matmul_softmax_rows");
  EXPECT_EQ(p.counts.plan, "cluster_rows");
  EXPECT_EQ(p.counts.precision, "tf32");
  for (const char* bad : {"x [plan=]", "x [plan=a-b]", "x [plan=a plan=b]"}) {
    const auto b = parse_range_message(bad);
    EXPECT_FALSE(b.has_suffix) << bad;
  }
  RangeCounts c;
  c.bytes = 64;
  c.plan = "swapped_rows_scores_beside_pass";
  EXPECT_EQ(format_range_message("fused", c),
            "fused [bytes=64 plan=swapped_rows_scores_beside_pass]");
  EXPECT_EQ(parse_range_message(format_range_message("fused", c)).counts.plan, c.plan);
  c.plan = "two words";  // never written, so never misread
  EXPECT_EQ(format_range_message("fused", c), "fused [bytes=64]");
}

TEST(CaptureNvtxSuffix, MalformedSuffixesLeaveTheMessageWhole) {
  for (const char* msg : {"plain",
                          "layer[3]",
                          "x [flops=1",
                          "x flops=1]",
                          "x []",
                          "x [ ]",
                          "x [flops]",
                          "x [flops=]",
                          "x [=1]",
                          "x [flops=1 flops=2]",
                          "x [flops=-1]",
                          "x [flops=1e999]",
                          "x [flop=1]",
                          "x [flops=1 mem=2]",
                          "x [flops=1,]",
                          "x [,flops=1]",
                          "x [flops=1,,bytes=2]",
                          "x [flops=1] tail",
                          "x [flops=1;bytes=2]",
                          "x [flops=nan]",
                          "x [flops=1 2]",
                          "x [flops==1]",
                          "x [[flops=1]]"}) {
    const auto p = parse_range_message(msg);
    EXPECT_FALSE(p.has_suffix) << msg;
    EXPECT_EQ(p.name, msg);
    EXPECT_TRUE(p.counts.empty()) << msg;
  }
}

TEST(CaptureNvtxSuffix, ArbitraryBytesNeverCrash) {
  std::string s;
  for (int i = 0; i < 2000; ++i) {
    s.push_back(static_cast<char>((i * 37 + 11) % 256));
    if (i % 7 == 0) s += "[flops=";
    if (i % 11 == 0) s += "]";
    (void)parse_range_message(s);
    (void)parse_range_message(std::string_view(s).substr(s.size() / 2));
  }
  SUCCEED();
}

TEST(CaptureNvtxSuffix, FormatterRoundTripsThroughTheParser) {
  EXPECT_EQ(format_range_message("matmul", {}), "matmul");
  EXPECT_EQ(format_range_message("matmul", {1.37e11, 1e8, "", ""}),
            "matmul [flops=1.37e+11 bytes=1e+08]");
  EXPECT_EQ(format_range_message("m", {std::nullopt, 0.5, "", ""}), "m [bytes=0.5]");
  EXPECT_EQ(format_range_message("m", {-1.0, std::numeric_limits<double>::infinity(), "", ""}),
            "m");
  for (const double v : {0.0, 1.0, 3.0000000000000004, 1.2345678901234567e19, 6.02e23, 5e-7}) {
    const std::string msg = format_range_message("op", {v, v * 3, "", ""});
    const auto p = parse_range_message(msg);
    ASSERT_TRUE(p.has_suffix) << msg;
    EXPECT_EQ(p.name, "op");
    EXPECT_EQ(p.counts.flops, v) << msg;  // exact: shortest round-trip text
    EXPECT_EQ(p.counts.bytes, v * 3) << msg;
  }
}

TEST(CaptureNvtxPayload, IntegerAndDoublePayloadsMeanFlops) {
  EXPECT_EQ(payload_flops(PayloadKind::kUint64, 123, 0, 0), 123.0);
  EXPECT_EQ(payload_flops(PayloadKind::kInt64, 0, 456, 0), 456.0);
  EXPECT_EQ(payload_flops(PayloadKind::kDouble, 0, 0, 1.5e12), 1.5e12);
  EXPECT_FALSE(payload_flops(PayloadKind::kInt64, 0, -1, 0));
  EXPECT_FALSE(payload_flops(PayloadKind::kDouble, 0, 0, -2.0));
  EXPECT_FALSE(payload_flops(PayloadKind::kDouble, 0, 0, std::nan("")));
  EXPECT_FALSE(payload_flops(PayloadKind::kNone, 5, 5, 5));
  MarkerRecord m;
  m.payload_kind = PayloadKind::kUint64;
  m.payload_u64 = 9;
  EXPECT_EQ(payload_flops(m), 9.0);
}

}  // namespace
}  // namespace flopline::capture
