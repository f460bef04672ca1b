// What a kernel's counted FLOPs and bytes rest on: the values of its "flops source" arg
// that the capture writes and every reader classifies (docs/COUNTERS.md, "What each
// flops source promises"). One place for the words, so writer and readers agree.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "flopline/trace/model.h"

namespace flopline::trace {

// The "flops source" values of kernels and operators with hardware-counted values.
inline constexpr std::string_view kSourceMeasured = "counters";
// Inferred from a measured launch of the same work: the same function, grid, block,
// dynamic shared memory and arguments (addresses and learned per-launch values aside).
inline constexpr std::string_view kSourceSameWork = "counters (same work)";
// Values of a measured launch that may not be the same work; "counters note" says why.
inline constexpr std::string_view kSourceEstimated = "counters (estimated)";
// Written before flopline keyed inference by arguments (same function name, grid and
// block): read as estimated.
inline constexpr std::string_view kSourceSameSignature = "counters (same signature)";
// "not counted: communication", "not counted: excluded by --counters-exclude": kernels
// that were never measured and carry no counted values.
inline constexpr std::string_view kSourceNotCountedPrefix = "not counted: ";
inline constexpr std::string_view kSourceCommunication = "not counted: communication";
inline constexpr std::string_view kSourceExcluded = "not counted: excluded by --counters-exclude";
// The arg that says why a value is estimated.
inline constexpr std::string_view kCountersNoteArg = "counters note";

enum class CountedBasis : std::uint8_t {
  kNoCounts,    // no counted values and no word on why (counters off, or not reached)
  kMeasured,    // this launch was replayed and measured
  kSameWork,    // exactly inferred: a measured launch of the same work
  kEstimated,   // values of a measured launch that may differ
  kNotCounted,  // deliberately not measured (communication, excluded)
};

// The basis a "flops source" value names; kNone for declared sources ("suffix",
// "shapes", ...) and anything unknown.
CountedBasis counted_basis(std::string_view flops_source);
const char* to_string(CountedBasis b);  // "measured", "same work", "estimated", ...

// Kernel time by basis over a trace's kernel slices (ns).
struct CountedCoverage {
  std::int64_t kernel_ns = 0;
  std::int64_t measured_ns = 0;
  std::int64_t same_work_ns = 0;
  std::int64_t estimated_ns = 0;
  std::int64_t not_counted_ns = 0;
  std::int64_t none_ns = 0;  // kernels without counted values or a reason
  std::uint64_t kernels = 0;
  std::uint64_t measured = 0, same_work = 0, estimated = 0, not_counted = 0;
  bool any_counted() const { return measured + same_work + estimated + not_counted > 0; }
  void add(const CountedCoverage& o);
};
CountedCoverage counted_coverage(const Trace& t);
// "of 12.345 ms kernel time: 10.0% measured, 85.0% same work, 3.0% estimated, 2.0% not
// counted, 0.0% without counted values" (shares of kernel_ns).
std::string counted_coverage_line(const CountedCoverage& c);

}  // namespace flopline::trace
