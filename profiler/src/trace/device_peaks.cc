// The peak tables; each entry's source is in docs/PEAKS.md.
#include "flopline/trace/device_peaks.h"

#include <array>
#include <string>
#include <string_view>

namespace flopline::trace {
namespace {

// Dense FLOPs per clock per SM. See docs/PEAKS.md for the derivation of each row.
// clang-format off
constexpr std::array<ArchRates, 8> kArchRates = {{
    // cc     architecture           fp64  fp32  tf32  bf16  fp16    fp8
    {7, 0,  "Volta",                  64,  128,     0,    0, 1024,     0},
    {7, 5,  "Turing",                  4,  128,     0,    0, 1024,     0},
    {8, 0,  "Ampere (GA100)",        128,  128,  1024, 2048, 2048,     0},
    {8, 6,  "Ampere (GA10x)",          4,  256,   512, 1024, 1024,     0},
    {8, 9,  "Ada Lovelace",            4,  256,   512, 1024, 1024,  2048},
    {9, 0,  "Hopper",                256,  256,  2048, 4096, 4096,  8192},
    {10, 0, "Blackwell (B200)",      128,  256,  4096, 8192, 8192, 16384},
    {12, 0, "Blackwell (GB20x)",       4,  256,   512, 1024, 1024,  2048},
}};
// clang-format on

// In kParts order.
enum class Part {
  kV100Sxm,
  kV100Pcie,
  kV100S,
  kA100_40,
  kA100Sxm80,
  kA100Pcie80,
  kH100Sxm,
  kH100Pcie,
  kH200,
  kB200
};

// Clocks implied by NVIDIA's published figures; bandwidth as published (bytes/s).
constexpr std::array<KnownPart, 10> kParts = {{
    {"V100 SXM2", 7, 0, 1530, 1530, 900e9},
    {"V100 PCIe", 7, 0, 1380, 1380, 900e9},
    {"V100S PCIe", 7, 0, 1601, 1601, 1134e9},
    {"A100 40GB", 8, 0, 1410, 1410, 1555e9},
    {"A100 SXM4 80GB", 8, 0, 1410, 1410, 2039e9},
    {"A100 PCIe 80GB", 8, 0, 1410, 1410, 1935e9},
    {"H100 SXM", 9, 0, 1980, 1830, 3.35e12},
    {"H100 PCIe", 9, 0, 1755, 1620, 2.0e12},
    {"H200 SXM", 9, 0, 1980, 1830, 4.8e12},
    {"B200", 10, 0, 1980, 1856, 8.0e12},
}};

std::string upper(std::string_view s) {
  std::string u(s);
  for (char& c : u) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return u;
}

bool has(const std::string& name, std::string_view token) {
  return name.find(token) != std::string::npos;
}

std::optional<Part> part_of(const DeviceProperties& d) {
  const std::string n = upper(d.name);
  if (d.compute_major == 7 && d.compute_minor == 0 && has(n, "V100")) {
    if (has(n, "V100S")) return Part::kV100S;
    if (has(n, "SXM")) return Part::kV100Sxm;
    if (has(n, "PCIE")) return Part::kV100Pcie;
    return std::nullopt;
  }
  if (d.compute_major == 8 && d.compute_minor == 0 && has(n, "A100")) {
    if (has(n, "80GB")) return has(n, "PCIE") ? Part::kA100Pcie80 : Part::kA100Sxm80;
    return Part::kA100_40;
  }
  if (d.compute_major == 9 && d.compute_minor == 0) {
    // The NVL parts run other clocks; they fall back to the driver's clock.
    if (has(n, "NVL")) return std::nullopt;
    if (has(n, "H200")) return Part::kH200;
    if (has(n, "H100")) return has(n, "PCIE") ? Part::kH100Pcie : Part::kH100Sxm;
    return std::nullopt;
  }
  if (d.compute_major == 10 && d.compute_minor == 0 && has(n, "B200") && !has(n, "GB200"))
    return Part::kB200;
  return std::nullopt;
}

}  // namespace

const ArchRates* arch_rates(std::int32_t major, std::int32_t minor) {
  for (const ArchRates& r : kArchRates) {
    if (r.compute_major == major && r.compute_minor == minor) return &r;
  }
  return nullptr;
}

const KnownPart* known_part(const DeviceProperties& device) {
  const auto p = part_of(device);
  return p ? &kParts[static_cast<std::size_t>(*p)] : nullptr;
}

std::optional<double> memory_bandwidth_from_clock(const DeviceProperties& device) {
  if (device.memory_bus_width <= 0 || device.memory_clock_khz <= 0) return std::nullopt;
  return device.memory_bus_width / 8.0 * static_cast<double>(device.memory_clock_khz) * 1e3 * 2.0;
}

void add_table_peaks(DeviceProperties& device) {
  const KnownPart* part = known_part(device);
  const auto bandwidth = memory_bandwidth_from_clock(device);
  if (bandwidth) {
    device.peak_bytes_per_s = *bandwidth;
  } else if (part != nullptr) {
    device.peak_bytes_per_s = part->published_bandwidth;
  }

  const ArchRates* rates = arch_rates(device.compute_major, device.compute_minor);
  const double reported_hz = static_cast<double>(device.clock_khz) * 1e3;
  const double core_hz = part != nullptr ? part->core_clock_mhz * 1e6 : reported_hz;
  const double tensor_hz = part != nullptr ? part->tensor_clock_mhz * 1e6 : reported_hz;
  if (rates != nullptr && device.num_sms > 0 && core_hz > 0) {
    const double sms = device.num_sms;
    auto add = [&](const char* precision, double per_clock, double hz) {
      if (per_clock > 0) device.peak_flops.emplace_back(precision, sms * hz * per_clock);
    };
    add("fp64", rates->fp64, core_hz);
    add("fp32", rates->fp32, core_hz);
    add("tf32", rates->tf32, tensor_hz);
    add("bf16", rates->bf16, tensor_hz);
    add("fp16", rates->fp16, tensor_hz);
    add("fp8", rates->fp8, tensor_hz);
  }
  if (!device.peak_flops.empty() || device.peak_bytes_per_s > 0) device.peak_source = "table";
}

void fill_missing_peaks(Trace& trace) {
  for (DeviceProperties& d : trace.devices) {
    if (d.peak_bytes_per_s > 0 || !d.peak_flops.empty()) continue;
    add_table_peaks(d);
  }
}

}  // namespace flopline::trace
