// Peak FLOP/s and bandwidth from the tables against NVIDIA's published dense figures.
// Device inputs are what each driver reports (H100 SXM and H200 read on the machines;
// the others from the clocks and bus widths NVIDIA documents for them).
#include <gtest/gtest.h>

#include <string>

#include "flopline/capture/peaks.h"
#include "flopline/trace/device_peaks.h"

namespace flopline::capture {
namespace {

DeviceInfo device(std::string name, int major, int minor, int sms, std::int64_t clock_khz,
                  std::int64_t memory_clock_khz, int bus_width) {
  DeviceInfo d;
  d.name = std::move(name);
  d.compute_major = major;
  d.compute_minor = minor;
  d.sm_count = sms;
  d.clock_khz = clock_khz;
  d.memory_clock_khz = memory_clock_khz;
  d.memory_bus_width = bus_width;
  return d;
}

// |got / want - 1| <= tolerance
void expect_near_rel(double got, double want, double tolerance, const char* what) {
  EXPECT_NEAR(got / want, 1.0, tolerance) << what << ": got " << got << ", published " << want;
}

void expect_peak(const trace::DeviceProperties& p, const char* precision, double published,
                 double tol = 0.01) {
  const double got = p.peak_flops_for(precision);
  ASSERT_GT(got, 0) << precision;
  expect_near_rel(got, published, tol, precision);
}

TEST(CapturePeaks, H100Sxm) {
  const auto p = fill_peaks(device("NVIDIA H100 80GB HBM3", 9, 0, 132, 1980000, 2619000, 5120));
  EXPECT_EQ(p.peak_source, "table");
  expect_peak(p, "fp64", 67e12);  // FP64 Tensor Core
  expect_peak(p, "fp32", 67e12);
  expect_peak(p, "tf32", 494.7e12);  // 989 with sparsity
  expect_peak(p, "bf16", 989.4e12);
  expect_peak(p, "fp16", 989.4e12);
  expect_peak(p, "fp8", 1978.9e12);
  expect_near_rel(p.peak_bytes_per_s, 3.35e12, 0.005, "bandwidth");
  EXPECT_EQ(p.num_sms, 132);
  EXPECT_EQ(p.name, "NVIDIA H100 80GB HBM3");
}

TEST(CapturePeaks, H200UsesItsReportedBusWidth) {
  // The H200 reports a 6016-bit bus at 3201 MHz: 752 B * 6.402 GT/s = 4.81 TB/s.
  const auto p = fill_peaks(device("NVIDIA H200", 9, 0, 132, 1980000, 3201000, 6016));
  expect_near_rel(p.peak_bytes_per_s, 4.8e12, 0.01, "bandwidth");
  expect_peak(p, "bf16", 989.4e12);
  expect_peak(p, "fp64", 67e12);
  ASSERT_NE(trace::known_part(fill_peaks(device("NVIDIA H200", 9, 0, 132, 0, 0, 0))), nullptr);
  EXPECT_STREQ(trace::known_part(fill_peaks(device("NVIDIA H200", 9, 0, 132, 0, 0, 0)))->label,
               "H200 SXM");
}

TEST(CapturePeaks, H100Pcie) {
  const auto p = fill_peaks(device("NVIDIA H100 PCIe", 9, 0, 114, 1755000, 0, 0));
  expect_peak(p, "fp64", 51e12);
  expect_peak(p, "fp32", 51e12);
  expect_peak(p, "tf32", 378e12);
  expect_peak(p, "bf16", 756e12);
  expect_peak(p, "fp8", 1513e12);
  expect_near_rel(p.peak_bytes_per_s, 2.0e12, 0.001, "published bandwidth (no clock given)");
}

TEST(CapturePeaks, A100Sxm80GB) {
  const auto p = fill_peaks(device("NVIDIA A100-SXM4-80GB", 8, 0, 108, 1410000, 1593000, 5120));
  expect_peak(p, "fp64", 19.5e12);  // FP64 Tensor Core
  expect_peak(p, "fp32", 19.5e12);
  expect_peak(p, "tf32", 156e12);
  expect_peak(p, "bf16", 312e12);
  expect_peak(p, "fp16", 312e12);
  EXPECT_EQ(p.peak_flops_for("fp8"), 0);  // Ampere has no fp8
  expect_near_rel(p.peak_bytes_per_s, 2.039e12, 0.005, "bandwidth");
}

TEST(CapturePeaks, V100Sxm2) {
  const auto p = fill_peaks(device("Tesla V100-SXM2-16GB", 7, 0, 80, 1530000, 877000, 4096));
  expect_peak(p, "fp64", 7.8e12);
  expect_peak(p, "fp32", 15.7e12);
  expect_peak(p, "fp16", 125e12);
  EXPECT_EQ(p.peak_flops_for("bf16"), 0);
  EXPECT_EQ(p.peak_flops_for("tf32"), 0);
  expect_near_rel(p.peak_bytes_per_s, 900e9, 0.005, "bandwidth");
}

TEST(CapturePeaks, B200) {
  const auto p = fill_peaks(device("NVIDIA B200", 10, 0, 148, 1965000, 0, 0));
  expect_peak(p, "bf16", 2.25e15);
  expect_peak(p, "fp16", 2.25e15);
  expect_peak(p, "fp8", 4.5e15);
  expect_peak(p, "tf32", 1.1e15, 0.03);  // published rounded to 1.1 (2.2 with sparsity)
  expect_peak(p, "fp64", 37e12, 0.02);
  expect_peak(p, "fp32", 75e12);
  expect_near_rel(p.peak_bytes_per_s, 8e12, 0.001, "published bandwidth");
}

TEST(CapturePeaks, FallbackByComputeCapabilityUsesTheReportedClock) {
  // RTX 4090 (Ada, 8.9): 128 SMs at 2520 MHz, 384-bit GDDR6X reported at 10501 MHz.
  const auto p = fill_peaks(device("NVIDIA GeForce RTX 4090", 8, 9, 128, 2520000, 10501000, 384));
  EXPECT_EQ(trace::known_part(fill_peaks(device("NVIDIA GeForce RTX 4090", 8, 9, 128, 0, 0, 0))),
            nullptr);
  expect_peak(p, "fp32", 82.6e12);
  expect_peak(p, "fp16", 330.3e12);  // dense, fp16 accumulate
  expect_near_rel(p.peak_bytes_per_s, 1008e9, 0.001, "bandwidth");
  // H100 NVL is not a table part: the reported clock is used.
  EXPECT_EQ(trace::known_part(fill_peaks(device("NVIDIA H100 NVL", 9, 0, 132, 0, 0, 0))), nullptr);
}

TEST(CapturePeaks, UnknownArchitectureHasNoFlopPeaks) {
  const auto p = fill_peaks(device("Xavier", 7, 2, 8, 1377000, 0, 0));
  EXPECT_TRUE(p.peak_flops.empty());
  EXPECT_EQ(p.peak_bytes_per_s, 0);
  EXPECT_EQ(p.peak_source, "");
  EXPECT_EQ(trace::arch_rates(7, 2), nullptr);
  ASSERT_NE(trace::arch_rates(12, 0), nullptr);
  EXPECT_FALSE(trace::memory_bandwidth_from_clock(trace::DeviceProperties{}));
}

// A trace read from another tool (torch.profiler: deviceProperties without peaks) gets
// the table's peaks; a device that carries its own keeps them.
TEST(CapturePeaks, FillMissingPeaksLeavesDevicesThatHaveThem) {
  trace::Trace t;
  trace::DeviceProperties kineto;
  kineto.name = "NVIDIA H100 80GB HBM3";
  kineto.compute_major = 9;
  kineto.num_sms = 132;
  kineto.clock_khz = 1980000;
  kineto.memory_clock_khz = 2619000;
  kineto.memory_bus_width = 5120;
  trace::DeviceProperties own = kineto;
  own.id = 1;
  own.peak_flops = {{"bf16", 1e15}};
  own.peak_source = "measured";
  t.devices = {kineto, own};
  trace::fill_missing_peaks(t);
  EXPECT_EQ(t.devices[0].peak_source, "table");
  expect_peak(t.devices[0], "bf16", 989.4e12);
  expect_near_rel(t.devices[0].peak_bytes_per_s, 3.35e12, 0.005, "bandwidth");
  EXPECT_EQ(t.devices[1].peak_source, "measured");
  ASSERT_EQ(t.devices[1].peak_flops.size(), 1u);
  EXPECT_EQ(t.devices[1].peak_flops[0].second, 1e15);
}

}  // namespace
}  // namespace flopline::capture
