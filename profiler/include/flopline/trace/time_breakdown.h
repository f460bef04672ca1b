// Where a GPU's time goes over a window: computation, communication, memory, idle, as
// Holistic Trace Analysis defines them (docs/STATS.md, "Time breakdown"), on exact
// nanoseconds, with the share of communication hidden under computation and the
// counted FLOPs' rate against the device's peaks, and the model FLOPs' beside them.
//
// Every kernel, copy and set on a device's streams is GPU work; a kernel is
// communication when is_communication_kernel() says so, copies and sets are memory,
// every other kernel computation. Over the window, per device:
//   compute        the union of computation kernels;
//   communication  the union of communication kernels outside compute (exposed);
//   memory         the union of copies and sets outside both;
//   idle           the window outside all GPU work.
// The four add up to the window. HTA's compute_time is `compute`, its non_compute_time
// `communication + memory`, its idle_time `idle` (HTA's window is the first to the last
// kernel).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "flopline/trace/model.h"
#include "flopline/trace/types.h"

namespace flopline::trace {

struct DeviceBreakdown {
  std::int32_t device = 0;
  TimeNs window_begin = 0;
  TimeNs window_end = 0;
  std::int64_t compute_ns = 0;
  std::int64_t communication_ns = 0;  // exposed: not under computation
  std::int64_t memory_ns = 0;         // exposed: under neither
  std::int64_t idle_ns = 0;
  // Idle split by what the next GPU work was doing (its launch call, from the launch
  // flows): not launched yet (waiting for the host), launched but not started (a stream
  // or event dependency, or launch latency), or unknown (no launch flow; the idle end
  // of the window). The three add up to idle_ns.
  std::int64_t idle_host_ns = 0;
  std::int64_t idle_queued_ns = 0;
  std::int64_t idle_other_ns = 0;
  std::int64_t communication_total_ns = 0;   // the union of communication kernels
  std::int64_t communication_hidden_ns = 0;  // of it, while computation ran
  std::uint64_t kernels = 0;
  // Counted FLOPs of the kernels (their part inside the window, by time), and the time
  // they would take at the device's peak of each one's precision: over the window, the
  // measured model-FLOPs utilization. Unset without counted FLOPs or peaks.
  std::optional<double> flops;
  std::optional<double> peak_time_ns;  // sum over kernels of flops / peak(precision)
  // Model FLOPs: those the operators declare or their shapes give (operator_time.h's
  // totals, counters' sums left out), each operator's part inside the window by the
  // time its GPU work was busy there, on the device of its first GPU work. Beside the
  // counted (hardware) FLOPs above: recomputation, padding and fused extra work make
  // those larger. Unset without such operators; peak time unset without every peak.
  std::optional<double> model_flops;
  std::optional<double> model_peak_time_ns;
  std::int64_t window_ns() const { return sub_saturating(window_end, window_begin); }
};

class OperatorIndex;

// Per GPU device of the trace, over [begin, end); without a window, the first to the
// last GPU work of that device. `operators`: the trace's operator index, for the model
// FLOPs (a caller with many windows of one trace builds it once); built here when null.
std::vector<DeviceBreakdown> time_breakdown(const Trace& t, std::optional<TimeNs> begin = {},
                                            std::optional<TimeNs> end = {},
                                            const OperatorIndex* operators = nullptr);

}  // namespace flopline::trace
