// Operator attribution: which GPU work each NVTX range (operator) owns, its GPU extent
// per stream, and its GPU time.
//
// Rule: a range owns the launch calls made inside it on its own thread. A launch is the
// API record chosen by the flow source rule (launch_index.h); it is inside a range when
// range.start <= call.start and call.end <= range.end, on the range's thread. The
// innermost such range owns it ("self" work); every range enclosing that one includes it
// too, so an outer range's extent and GPU time cover its inner ranges' work. Ranges on
// other threads never own a thread's launches, and a launch inside no range belongs to
// no operator. The correlation ids of the owned launches name the GPU work: every
// kernel, copy and set with those ids (a graph launch owns all its kernels).
//
// GPU time of an operator: for each stream it touched, the union of the intervals of its
// GPU work there (overlapping kernels, as under programmatic dependent launch, count
// once), summed over the streams. kernel_time_ns is the plain sum of its kernel
// durations; self_gpu_time_ns is the GPU time of its self work only.
//
// Kineto's gpu_user_annotation: for a range with GPU work, one slice per stream it
// touched, from the first start to the last end of its work on that stream.
//
// Counted work: a range also sums the hardware-counted FLOPs and DRAM bytes of the
// kernels it owns (children included); a range without declared counts shows those.
// Precision: each GPU record takes the precision of the innermost range owning it that
// declared one, so a kernel's % of peak divides by the right peak.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "flopline/capture/launch_index.h"
#include "flopline/capture/nvtx_ranges.h"
#include "flopline/trace/builder.h"
#include "flopline/trace/counted_basis.h"

namespace flopline::capture {

struct StreamExtent {
  std::uint32_t device = 0;
  std::uint32_t stream = 0;
  TimeNs start = 0;           // first start of the operator's work on this stream (ns)
  TimeNs end = 0;             // last end (ns)
  TimeNs busy_ns = 0;         // union of its intervals on this stream
  std::uint32_t records = 0;  // kernels + copies + sets
};

// The hardware-counted work of one GPU record (a kernel with counter values).
struct WorkCount {
  double flops = 0;
  std::optional<double> bytes;  // DRAM bytes read + written
  // Measured, same work or estimated (kernel_counts.h).
  trace::CountedBasis basis = trace::CountedBasis::kMeasured;
};

struct OperatorSummary {
  std::uint32_t range = 0;  // index into PairedMarkers::ranges
  std::string name;
  std::uint32_t thread_id = 0;
  TimeNs cpu_start = 0;     // ns
  TimeNs cpu_end = 0;       // ns
  std::uint32_t depth = 0;  // ranges of its thread enclosing it
  trace::SliceMetrics metrics;
  std::uint32_t launches = 0;  // launch calls inside it, nested ranges' included
  std::uint32_t kernels = 0;
  std::uint32_t memcpys = 0;
  std::uint32_t memsets = 0;
  std::vector<StreamExtent> streams;  // sorted by (device, stream)
  TimeNs gpu_time_ns = 0;
  TimeNs kernel_time_ns = 0;
  TimeNs self_gpu_time_ns = 0;
  // Sums over its kernels that carry counted values (children included).
  std::uint32_t counted_kernels = 0;
  std::optional<double> counted_flops;
  std::optional<double> counted_bytes;
  // The weakest basis among them (measured < same work < estimated).
  trace::CountedBasis counted_basis = trace::CountedBasis::kNoCounts;
  bool has_gpu_work() const { return !streams.empty(); }
};

struct Attribution {
  std::vector<OperatorSummary> operators;  // one per range, in PairedMarkers::ranges order
  // Per LaunchIndex::gpu_work() entry: the innermost owning range, kNoId when none.
  std::vector<std::uint32_t> owner;
  // Per gpu_work() entry: the range whose counts describe exactly this record (the
  // innermost range with counts, when that range owns this one record and nothing
  // else); kNoId otherwise. Lets a lone kernel carry its operator's FLOPs.
  std::vector<std::uint32_t> counts_from;
  // Per gpu_work() entry: the innermost owning range that declared a precision; kNoId
  // when none did.
  std::vector<std::uint32_t> precision_from;
};

// `counted`: per LaunchIndex::gpu_work() entry, its counted work (empty: none at all).
Attribution attribute_operators(const RecordBatch& batch, const LaunchIndex& launches,
                                const PairedMarkers& markers,
                                std::span<const std::optional<WorkCount>> counted = {});

// Adds to `now` (a range's summary of the work of one append of a streaming capture) the
// summary of its work written by earlier appends: counts and sums add up, each stream's
// extent spans both, the weaker counted basis wins. Busy and GPU times add up too, which
// counts twice an overlap of work on one stream across an append boundary (work of one
// stream rarely overlaps; neither time is written into the trace).
void merge_earlier_work(OperatorSummary& now, const OperatorSummary& earlier);

// The trace pids of one captured process: its OS pid for CPU work, and one pid per GPU.
// GPU pids are the device ordinals (Kineto's convention) unless the OS pid is itself a
// small number that would collide with one (a container's pid 1), in which case the GPU
// pids move up by gpu_base.
struct TracePids {
  std::int64_t cpu = 0;
  std::int64_t gpu_base = 0;
  std::int64_t gpu(std::uint32_t device) const { return gpu_base + device; }
};

// Adds the ranges ("user_annotation" slices on their thread, with domain, category,
// color, payload and PyTorch fields in args), the instants, and the operators' GPU
// extents ("gpu_user_annotation" slices on each stream) with the ranges' metrics on
// both. Returns the metrics index of each range (kNone without counts). Ranges `held`
// marks (per range; null: none) are left out with their extents: a streaming capture
// writes them in a later append.
std::vector<std::uint32_t> emit_operators(const PairedMarkers& markers,
                                          const Attribution& attribution, const TracePids& pids,
                                          trace::TraceBuilder& builder,
                                          const std::vector<bool>* held = nullptr);

// Per-name totals for a summary table ("top operators by GPU time").
struct OperatorTotals {
  std::string name;
  std::uint64_t count = 0;
  TimeNs gpu_time_ns = 0;
  TimeNs kernel_time_ns = 0;
  std::optional<double> flops;   // summed over instances with FLOPs
  std::optional<double> bytes;   // summed over instances with bytes
  std::optional<double> tflops;  // flops / GPU time of those instances (TFLOP/s)
  std::optional<double> gbps;    // bytes / GPU time of those instances (GB/s, 1e9)
};

// Only operators with GPU work; sorted by gpu_time_ns descending, then name.
std::vector<OperatorTotals> operator_totals(const std::vector<OperatorSummary>& operators);

}  // namespace flopline::capture
