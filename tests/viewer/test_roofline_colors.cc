// Roofline points and ceilings, log-log mapping and picking; colours and the legend.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/colors.h"
#include "core/roofline.h"
#include "viewer_test_util.h"

namespace flopline::viewer {
namespace {

using testing::read_json;
using testing::trace_json;
using testing::x_event;

constexpr std::string_view kDevice =
    R"("deviceProperties":[{"id":0,"name":"Test GPU","peakFlops":{"fp32":1e14,"bf16":4e14},)"
    R"("peakBandwidthBytesPerSec":2e12}],)";

std::string ops() {
  return trace_json(
      {
          // 1e9 FLOPs, 1e7 bytes: intensity 100; 10 us: 100 TFLOP/s.
          x_event("matmul", "gpu_user_annotation", 0, 7, "0", "10",
                  R"({"flops":1e9,"bytes":1e7,"precision":"bf16"})"),
          // FLOPs without bytes: no intensity, not placed.
          x_event("fused", "gpu_user_annotation", 0, 7, "20", "10",
                  R"({"flops":1e8,"precision":"fp32"})"),
          // Bytes only: no FLOP/s, not placed.
          x_event("copy", "gpu_user_annotation", 0, 7, "40", "10", R"({"bytes":1e8})"),
      },
      kDevice);
}

TEST(Roofline, PointsAndCeilingsFromTheTrace) {
  const trace::Trace t = read_json(ops());
  const auto list = testing::list_of({&t});
  const OpTable table = build_op_table(list, OpTableQuery{});
  const Roofline r = build_roofline(list, table);
  EXPECT_EQ(r.device, "Test GPU");
  ASSERT_EQ(r.compute.size(), 2u);
  EXPECT_EQ(r.compute[0].precision, "fp32");
  EXPECT_DOUBLE_EQ(r.compute[0].tflops, 100.0);
  EXPECT_EQ(r.compute[1].precision, "bf16");
  EXPECT_DOUBLE_EQ(r.compute[1].tflops, 400.0);
  EXPECT_DOUBLE_EQ(r.bandwidth_gbps, 2000.0);
  ASSERT_EQ(r.points.size(), 1u);
  EXPECT_EQ(r.points[0].name, "matmul");
  EXPECT_DOUBLE_EQ(r.points[0].intensity, 100.0);
  EXPECT_NEAR(r.points[0].tflops, 100.0, 1e-9);
  EXPECT_EQ(r.points[0].precision, "bf16");
  EXPECT_EQ(table.rows()[r.points[0].table_row].stats.name, "matmul");
  EXPECT_EQ(r.rows_without_bytes, 1u);
  // Ridge: 400 TFLOP/s / 2 TB/s = 200 FLOPs per byte.
  EXPECT_DOUBLE_EQ(r.ridge_intensity(400.0), 200.0);
  EXPECT_DOUBLE_EQ(r.attainable_tflops(100.0, 400.0), 200.0);   // memory bound
  EXPECT_DOUBLE_EQ(r.attainable_tflops(1000.0, 400.0), 400.0);  // compute bound
}

TEST(Roofline, NoCeilingsWithoutDevicePeaks) {
  const trace::Trace t = read_json(trace_json(
      {x_event("mm", "gpu_user_annotation", 0, 7, "0", "10", R"({"flops":1e9,"bytes":1e7})")}));
  const auto list = testing::list_of({&t});
  const Roofline r = build_roofline(list, build_op_table(list, OpTableQuery{}));
  EXPECT_FALSE(r.has_ceilings());
  EXPECT_EQ(r.points.size(), 1u);
}

TEST(Roofline, LogLogMappingAndPick) {
  const trace::Trace t = read_json(ops());
  const auto list = testing::list_of({&t});
  const Roofline r = build_roofline(list, build_op_table(list, OpTableQuery{}));
  const LogLogMap m = LogLogMap::fit(r, 10, 20, 600, 400);
  // Fitted to the point (100, 100) and the ceilings (100, 400 TFLOP/s; ridges at 50 and
  // 200 FLOPs/byte): [50, 200] and [100, 400] with a margin of 1.5 on each side span
  // 0.954 decades, so each widens to one decade around its middle.
  const double x_mid = std::sqrt(50.0 * 200.0), y_mid = std::sqrt(100.0 * 400.0);
  EXPECT_NEAR(m.x_min, x_mid / std::sqrt(10.0), 1e-9);
  EXPECT_NEAR(m.x_max, x_mid * std::sqrt(10.0), 1e-9);
  EXPECT_NEAR(m.y_min, y_mid / std::sqrt(10.0), 1e-9);
  EXPECT_NEAR(m.y_max, y_mid * std::sqrt(10.0), 1e-9);
  EXPECT_FLOAT_EQ(m.x_of(m.x_min), 10.0f);
  EXPECT_FLOAT_EQ(m.x_of(m.x_max), 610.0f);
  EXPECT_FLOAT_EQ(m.y_of(m.y_min), 420.0f);  // bottom
  EXPECT_FLOAT_EQ(m.y_of(m.y_max), 20.0f);
  EXPECT_NEAR(m.intensity_at(m.x_of(123.0)), 123.0, 1e-3);
  EXPECT_NEAR(m.tflops_at(m.y_of(55.0)), 55.0, 1e-3);
  const float px = m.x_of(100.0), py = m.y_of(100.0);
  EXPECT_EQ(pick_point(r, m, px + 3, py - 2), std::optional<std::size_t>(0));
  EXPECT_FALSE(pick_point(r, m, px + 30, py));
}

// The legend names kernels by their base name, so two PyTorch kernels read apart.
TEST(Roofline, LegendNamesKernelsByTheirBaseName) {
  RooflinePoint p;
  p.name =
      "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous "
      "namespace)::TensorListMetadata<4>, float>(at::native::(anonymous "
      "namespace)::TensorListMetadata<4>, float)";
  EXPECT_EQ(legend_label(p, 3), "3  multi_tensor_apply_kernel");
  p.name =
      "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
      "std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)";
  EXPECT_EQ(legend_label(p, 1), "1  vectorized_elementwise_kernel");
  p.name = "aten::mm";  // an operator keeps its name
  EXPECT_EQ(legend_label(p, 2), "2  aten::mm");
  p.name = "triton_poi_fused_gelu_native_layer_norm_backward_1";  // no C++ signature: cut
  EXPECT_EQ(legend_label(p, 4, 20), "4  triton_poi_fused_...");   // 17 + "..."
}

TEST(Colors, StableAndDistinct) {
  // The same name gives the same colour in every run and on every machine: FNV-1a of the
  // bytes (not std::hash, which differs between standard libraries), hue from its low 16
  // bits, saturation and lightness from the next bytes. The values are that recipe worked
  // out apart from the code (Python's colorsys.hls_to_rgb, 0xAABBGGRR).
  EXPECT_EQ(color_for_key("ampere_sgemm_128x64_tn"), 0xff5c76d7u);
  EXPECT_EQ(color_for_key("aten::mm"), 0xff7fc8dau);
  EXPECT_EQ(color_for_key(std::string("x")), 0xff76a4cbu);
  EXPECT_NE(color_for_key("aten::mm"), color_for_key("aten::add"));
  const std::uint32_t c = color_for_key("x");
  EXPECT_EQ(c >> 24, 0xffu);  // opaque
  // Mid-tones: no channel pair near black.
  const int sum = static_cast<int>((c & 0xff) + ((c >> 8) & 0xff) + ((c >> 16) & 0xff));
  EXPECT_GT(sum, 200);
  EXPECT_EQ(lighten(0xff000000u, 1.0f), 0xffffffffu);
  EXPECT_EQ(darken(0xffffffffu, 1.0f), 0xff000000u);
  EXPECT_EQ(lighten(0x80102030u, 0.0f), 0x80102030u);
}

TEST(Colors, TableAndLegendMostTimeFirst) {
  const trace::Trace t = read_json(
      trace_json({x_event("short", "k", 1, 1, "0", "1"), x_event("long", "k", 1, 1, "2", "10"),
                  x_event("long", "k", 1, 1, "20", "10"), x_event("mid", "c", 1, 1, "40", "5")}));
  const auto list = testing::list_of({&t});
  const ColorTable table = ColorTable::build(t);
  EXPECT_EQ(table.of(t.strings.find("long")), color_for_key("long"));
  const auto legend = build_legend(list, ColorBy::kName);
  ASSERT_EQ(legend.size(), 3u);
  EXPECT_EQ(legend[0].label, "long");
  EXPECT_EQ(legend[0].total_ns, 20'000);
  EXPECT_EQ(legend[0].count, 2u);
  EXPECT_EQ(legend[2].label, "short");
  const auto two = build_legend(list, ColorBy::kName, 2);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[1].label, "other");
  EXPECT_EQ(two[1].total_ns, 6'000);
  const auto cats = build_legend(list, ColorBy::kCategory);
  ASSERT_EQ(cats.size(), 2u);
  EXPECT_EQ(cats[0].label, "k");
  EXPECT_EQ(cats[0].color, color_for_key("k"));
}

}  // namespace
}  // namespace flopline::viewer
