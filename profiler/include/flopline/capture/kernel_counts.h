// Which hardware-counter values each kernel of a capture carries (docs/COUNTERS.md).
//
// The capture measures the first N launches of each work key (launch_work.h) and names,
// for every other launch, the measurement whose values it takes (InferredLaunch). The
// decoder gives each kernel:
//
//   measured     a counter record carries its correlation id (and names one kernel);
//   same work    its launch named a measurement of the same work key;
//   estimated    the values of a measured launch of the same name, grid, block and
//                dynamic shared memory, where the work may differ: kernels of CUDA
//                graphs (one correlation id for many kernels, their arguments never
//                seen), launches whose arguments could not be read or that no
//                measurement of their key covers; and a "same work" launch whose GPU
//                time is unlike the other launches of its work (unlike_its_work); and a
//                measured launch whose values miss some of its work (it did tensor work
//                outside its function's learned metrics: function_metrics.h);
//   not counted  kernels never replayed: communication, or --counters-exclude.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "flopline/capture/records.h"
#include "flopline/trace/counted_basis.h"

namespace flopline::capture {

// Why a kernel's values are estimated or absent: the "counters note" arg.
enum class CountNote : std::uint8_t {
  kNone,
  kGraph,            // a kernel of a CUDA graph
  kNoSameWork,       // no measurement of its work key
  kArgumentsUnread,  // the driver gave no parameter layout: the key was the shape alone
  kUnlikeItsWork,    // GPU time unlike the other launches of its work
  kIncomplete,       // measured, but its values miss some of its work
};
const char* to_string(CountNote n);

struct KernelCounts {
  std::uint32_t record = kNoId;  // index into RecordBatch::counter_records; kNoId: none
  bool measured = false;         // its own launch was measured (replayed)
  trace::CountedBasis basis = trace::CountedBasis::kNoCounts;
  CountNote note = CountNote::kNone;
  std::string_view not_counted;  // kNotCounted: CounterExclusion::why's words
  double time_ratio = 0;         // kUnlikeItsWork: its GPU time over its work's median
  std::string_view incomplete;   // kIncomplete: CounterRecord::incomplete
};

// Kernels of measured launches arrive without times (start = end = 0): the replay runs
// inside the launch call, after everything launched before it has finished, so each is
// placed at the later of its call's start and the end of the device's earlier work, with
// the duration its counters measured (gpu__time_duration; 0 when not collected), and
// marked replayed.
// Kernels without times that no counter record names (work still running at a forced
// flush) are dropped, as the converter drops them without counters.
void place_replayed_kernels(RecordBatch& batch);

// The same for one append of a streaming capture: `earlier_end` gives per device the
// latest end of the GPU work written by earlier appends (it ran before these launches),
// `written_calls` the launch calls written by earlier appends without their kernel (by
// correlation id), and a kernel whose counter record or launch
// call has not arrived yet stays unplaced (start = end = 0) for a later append instead
// of being dropped.
void place_replayed_kernels(RecordBatch& batch,
                            const std::unordered_map<std::uint32_t, TimeNs>& earlier_end,
                            const std::unordered_map<std::uint32_t, WrittenCall>& written_calls,
                            bool keep_unplaced);

// One entry per RecordBatch::kernels element.
std::vector<KernelCounts> assign_kernel_counts(const RecordBatch& batch);

// Counter records whose launch matches no single kernel record (indices): a kernel
// record lost (the buffer cap), or one launch that ran several kernels.
std::vector<std::uint32_t> unmatched_counter_records(const RecordBatch& batch);

// The after-the-fact check: a launch's GPU time `duration` against the median of the
// unreplayed launches of its work and their median absolute deviation (ns). Unlike when
// it differs by more than the larger of four robust standard deviations
// (4 x 1.4826 x MAD), a fifth of the median and 1 us.
bool unlike_its_work(TimeNs duration, TimeNs median, TimeNs mad);

}  // namespace flopline::capture
