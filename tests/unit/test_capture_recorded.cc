// Traces flopline recorded on an H200 (scripts/gpu_check.sh, tests/data/README.md):
// the reader opens them, and what the capture promised is in them — launch flows that
// join, NVTX ranges nested per thread, operators with their FLOPs, the device with its
// peaks, no dropped records.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "flopline/trace/analysis.h"
#include "flopline/trace/chrome_reader.h"

namespace flopline::trace {
namespace {

Trace load(const std::string& name) {
  ReadResult r = read_chrome_trace_file(std::string(FLOPLINE_TEST_DATA_DIR) + "/" + name);
  EXPECT_TRUE(r.ok()) << (r.error ? r.error->message() : "");
  return std::move(r.trace);
}

struct Found {
  const Slice* slice = nullptr;
  const Track* track = nullptr;
};

std::vector<Found> slices(const Trace& t, std::string_view cat, std::string_view name_part) {
  std::vector<Found> v;
  for (const Track& tr : t.tracks) {
    for (const auto& row : tr.rows) {
      for (const Slice& s : row) {
        if (t.str(s.cat) == cat && t.str(s.name).find(name_part) != std::string_view::npos) {
          v.push_back({&s, &tr});
        }
      }
    }
  }
  return v;
}

std::size_t joined_flows_into(const Trace& t, std::string_view kernel_part) {
  std::size_t n = 0;
  for (const Flow& f : t.flows) {
    if (!f.joined()) continue;
    const Slice& to = t.tracks[f.to.slice.track].at(f.to.slice);
    const Slice& from = t.tracks[f.from.slice.track].at(f.from.slice);
    if (t.str(to.name).find(kernel_part) != std::string_view::npos && from.start <= to.start) ++n;
  }
  return n;
}

TEST(RecordedOnH200, TritonKernelsInTheirRangeWithFlops) {
  const Trace t = load("flopline_h200_triton_nvtx.json.gz");
  EXPECT_EQ(t.report.dropped_records, 0u);
  ASSERT_EQ(t.devices.size(), 1u);
  EXPECT_EQ(t.devices[0].name, "NVIDIA H200");
  EXPECT_EQ(t.devices[0].num_sms, 132);
  EXPECT_GT(t.devices[0].peak_flops_for("bf16"), 9e14);
  EXPECT_EQ(slices(t, "kernel", "flopline_add_kernel").size(), 11u);  // 1 warm-up + 10
  EXPECT_EQ(joined_flows_into(t, "flopline_add_kernel"), 11u);
  const auto op = slices(t, "gpu_user_annotation", "triton_add");
  ASSERT_EQ(op.size(), 1u);
  EXPECT_DOUBLE_EQ(t.metrics_of(*op[0].slice).flops, 10.0 * (1 << 24));
  // The operator table `flopline run` prints.
  StatsQuery q;
  q.by = GroupBy::kOperator;
  const StatsResult r = compute_stats(t, q);
  ASSERT_FALSE(r.rows.empty());
  bool found = false;
  for (const StatsRow& row : r.rows) {
    if (row.name != "triton_add") continue;
    found = true;
    ASSERT_TRUE(row.tflops.has_value());
    EXPECT_NEAR(*row.tflops, 10.0 * (1 << 24) / static_cast<double>(row.total_ns) / 1e3, 1e-9);
    ASSERT_TRUE(row.gbps.has_value());
    EXPECT_GT(*row.gbps, 1000.0);  // an add over 16M floats runs near the HBM bandwidth
  }
  EXPECT_TRUE(found);
  EXPECT_GE(slices(t, "kernel", "triton_").size(), 5u);  // torch.compile's kernels
}

TEST(RecordedOnH200, NvtxRangesNestPerThread) {
  const Trace t = load("flopline_h200_nvtx_threads.json.gz");
  for (const char* n : {"0", "1"}) {
    const auto outer = slices(t, "user_annotation", std::string("outer") + n);
    const auto inner = slices(t, "user_annotation", std::string("inner") + n);
    ASSERT_EQ(outer.size(), 1u);
    ASSERT_EQ(inner.size(), 1u);
    EXPECT_EQ(outer[0].track, inner[0].track);
    EXPECT_LE(outer[0].slice->start, inner[0].slice->start);
    EXPECT_GE(outer[0].slice->end(), inner[0].slice->end());
    EXPECT_DOUBLE_EQ(t.metrics_of(*outer[0].slice).flops, 1e9);
  }
  EXPECT_EQ(slices(t, "kernel", "flopline_empty_kernel").size(), 19u);
  EXPECT_EQ(joined_flows_into(t, "flopline_empty_kernel"), 19u);
}

TEST(RecordedOnH200, CublasAndDriverLaunchSites) {
  const Trace t = load("flopline_h200_cublas_driver.json.gz");
  EXPECT_EQ(joined_flows_into(t, "gemm"), 3u);
  EXPECT_EQ(joined_flows_into(t, "flopline_empty_kernel"), 5u);
  std::size_t from_driver = 0;
  for (const Flow& f : t.flows) {
    if (!f.joined()) continue;
    const Slice& from = t.tracks[f.from.slice.track].at(f.from.slice);
    if (t.str(from.name) == "cuLaunchKernel" && t.str(from.cat) == "cuda_driver") ++from_driver;
  }
  EXPECT_EQ(from_driver, 5u);
}

}  // namespace
}  // namespace flopline::trace
