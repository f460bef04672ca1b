// The rank summary window's model: per rank and GPU, where its time goes
// (flopline/trace/time_breakdown.h) as the shares of one stacked bar; each rank's wait
// for the others at collectives and the rank they wait for
// (flopline/trace/collective_waits.h); the collectives with the longest waits; and where
// the timeline goes when a bar or a collective is clicked. The numbers are the trace
// library's, as `flopline stats --report breakdown` prints them: nothing is computed
// here but shares, order and labels.
//
// The analyses run while a file loads (rank_inputs): the breakdown splits idle time by
// the launch flows, which the viewer releases once its flow index is built.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/slice_handle.h"
#include "core/timeline_layout.h"
#include "flopline/trace/collective_waits.h"
#include "flopline/trace/time_breakdown.h"

namespace flopline::viewer {

// What the summary needs of one trace, taken while its flows and args are still there.
struct RankInputs {
  std::optional<std::int64_t> rank;                    // trace::trace_rank
  std::vector<trace::DeviceBreakdown> breakdown;       // per GPU, over its whole work
  std::vector<trace::CollectiveInstance> collectives;  // its NCCL kernels, by start
  std::string window_group;                            // trace::trace_window_group
  bool windowed = false;                               // trace::trace_recorded_in_windows
  std::string host;                                    // trace::trace_host
};
RankInputs rank_inputs(const trace::Trace& t);

// A breakdown as fractions of its window, in bar order; they add up to 1 (all 0 for an
// empty window).
struct BreakdownShares {
  double compute = 0;
  double communication = 0;
  double memory = 0;
  double idle = 0;
};
BreakdownShares shares_of(const trace::DeviceBreakdown& b);

// A bar `width` px wide from x0: compute, communication, memory, idle left to right,
// each starting where the one before ends (no gap, no overlap; the parts of an empty
// window are empty at x0).
struct BarSegment {
  float x0 = 0;
  float x1 = 0;
};
inline constexpr int kBarParts = 4;
const char* bar_part_name(int part);  // "compute", "communication", "memory", "idle"
std::array<BarSegment, kBarParts> bar_segments(const BreakdownShares& s, float x0, float width);
// The part under x, or -1 outside the bar.
int bar_part_at(const BreakdownShares& s, float x0, float width, float x);
// A part's time in a breakdown (compute_ns, communication_ns, memory_ns, idle_ns).
std::int64_t bar_part_ns(const trace::DeviceBreakdown& b, int part);

struct RankBar {
  std::uint32_t trace = 0;  // index into the TraceList
  std::optional<std::int64_t> rank;
  std::string label;  // "rank 1 GPU 1", or "FILE GPU 0" for a trace without a rank
  trace::DeviceBreakdown breakdown;
  BreakdownShares shares;
};

struct RankWaitRow {
  std::uint32_t trace = 0;
  std::string label;  // "rank 1", or the file
  trace::RankWaits waits;
  bool waited_for = false;  // the rank the others wait for (last to arrive most often)
};

// A matched collective, for the table of the longest waits.
struct CollectiveWaitRow {
  std::size_t matched = 0;  // index into RankSummary::waits->matched
  std::string label;        // "AllReduce #12"
  std::uint64_t message_bytes = 0;
  std::int64_t longest_wait_ns = 0;  // of any rank
  std::int64_t total_wait_ns = 0;    // over its ranks
  std::uint32_t longest_waiter = 0;  // trace of the rank that waited longest
  std::uint32_t last_to_arrive = 0;  // trace of the rank the others waited for
  std::int64_t begin_ns = 0;         // first arrival
  std::int64_t end_ns = 0;           // last kernel end
};

struct RankSummary {
  std::vector<RankBar> bars;                    // per trace, per GPU, in trace then device order
  std::optional<trace::CollectiveWaits> waits;  // with two or more traces with communicators
  std::vector<RankWaitRow> wait_rows;           // per trace, when waits are known
  std::vector<CollectiveWaitRow> longest;       // longest wait first, at most the limit asked
  // Worth a window of its own: two or more GPUs, or collectives matched across ranks.
  bool has_ranks() const { return bars.size() >= 2 || (waits && waits->collectives > 0); }
};

// `inputs` and `labels`: one per trace of the TraceList, in its order. `longest_limit`
// caps the table of collectives.
RankSummary build_rank_summary(std::span<const RankInputs* const> inputs,
                               std::span<const std::string> labels,
                               std::size_t longest_limit = 100);

// Where a click takes the timeline: a time span to fit, the process to open and scroll
// to, and a slice to select (invalid for none).
struct JumpTarget {
  std::int64_t begin_ns = 0;
  std::int64_t end_ns = 0;
  std::uint32_t layout_process = trace::kNone;  // index into TimelineLayout::processes()
  SliceHandle slice;
};

// A rank bar: its GPU's window, its GPU process.
JumpTarget jump_to_bar(const RankBar& bar, TraceList traces, const TimelineLayout& layout);
// A collective: from its first arrival to its last end with a margin on both sides, the
// kernel of the rank that waited longest selected.
JumpTarget jump_to_collective(const RankSummary& summary, const CollectiveWaitRow& row,
                              TraceList traces, const TimelineLayout& layout);

// The kernel slice on a GPU stream of `traces[trace]` that runs exactly [start, end), or
// an invalid handle.
SliceHandle gpu_slice_at(TraceList traces, std::uint32_t trace, std::int64_t start,
                         std::int64_t end);

}  // namespace flopline::viewer
