// Peak FLOP/s and memory bandwidth of a GPU from a per-architecture table, for the "% of
// peak" columns: below both capture (which describes the devices it records) and the
// readers (which fill the peaks of traces that have none, such as torch.profiler's). docs/PEAKS.md
// gives the formula and the source of every entry.
//
//   peak FLOP/s (precision) = SMs x clock x dense FLOPs per clock per SM (precision)
//   peak bandwidth          = bus width / 8 x memory clock x 2
//
// The FLOPs per clock per SM are per compute capability (arch_rates). The clock: for
// the datacenter parts NVIDIA publishes figures for (V100, A100, H100 SXM and PCIe,
// H200, B200) the table holds the clocks those figures imply, one for CUDA-core
// precisions (fp64, fp32) and one for tensor-core precisions (tf32, bf16, fp16, fp8),
// since NVIDIA's tensor figures assume a lower clock than the driver's maximum. Other
// GPUs use the driver's maximum SM clock for every precision. The memory clock the
// driver reports (cudaDevAttrMemoryClockRate) is half the data rate for HBM and GDDR6
// alike, hence the x2 (checked against published bandwidths in docs/PEAKS.md). When
// the driver gives no memory clock or bus width, a known part's published bandwidth is
// used.
#pragma once

#include <cstdint>
#include <optional>

#include "flopline/trace/model.h"

namespace flopline::trace {

// Dense FLOPs per clock per SM; 0 where the architecture has no such path. fp64 and fp32
// are the best of the CUDA cores and (fp64 on 8.0, 9.0) the tensor cores.
struct ArchRates {
  std::int32_t compute_major = 0;
  std::int32_t compute_minor = 0;
  const char* architecture = "";  // "Hopper"
  double fp64 = 0, fp32 = 0, tf32 = 0, bf16 = 0, fp16 = 0, fp8 = 0;
};

// A part whose published figures fix the clocks.
struct KnownPart {
  const char* label = "";  // "H100 SXM"
  std::int32_t compute_major = 0;
  std::int32_t compute_minor = 0;
  double core_clock_mhz = 0;       // clock behind the published fp64 / fp32 figures
  double tensor_clock_mhz = 0;     // clock behind the published tf32 / bf16 / fp16 / fp8 figures
  double published_bandwidth = 0;  // bytes/s
};

// Exact compute capability; nothing for architectures not in the table.
const ArchRates* arch_rates(std::int32_t major, std::int32_t minor);
// The part a device is, by name and compute capability; nothing when not in the table.
const KnownPart* known_part(const DeviceProperties& device);

// bus width / 8 x memory clock x 2; nothing without both figures.
std::optional<double> memory_bandwidth_from_clock(const DeviceProperties& device);

// The device's peaks from the table (peak_source "table"), from its name, compute
// capability, SM count and clocks; unchanged when the architecture is not in the table.
void add_table_peaks(DeviceProperties& device);

// Peaks for the devices a trace describes without them: torch.profiler writes Kineto's
// deviceProperties (name, compute capability, SM count) but no peak FLOP/s or bandwidth.
// Devices that carry peaks (flopline's own traces) are left alone.
void fill_missing_peaks(Trace& trace);

}  // namespace flopline::trace
