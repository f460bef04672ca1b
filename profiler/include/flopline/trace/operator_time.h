// Which GPU work each operator owns, and the operator's GPU time, for any trace:
// flopline's own (NVTX ranges), torch.profiler's (cpu_op, record_function ranges) and
// other tools' that follow Kineto's conventions. docs/STATS.md explains the rule with a
// worked example.
//
// Operators: slices on CPU threads whose category is cpu_op, user_annotation or
// operator (the 2021 Kineto schema's cpu_op). GPU work: kernels, copies and sets
// (kernel, gpu_memcpy, gpu_memset; Kernel, Memcpy, Memset). A GPU slice's launch is the
// CPU slice at the other end of a flow that reaches it (Kineto's and flopline's ac2g
// flows, from the cuda_runtime/cuda_driver call), or, for GPU work no flow reaches, the
// cuda_runtime/cuda_driver slice of the same trace with the same "correlation" arg.
//
// Rule: an operator owns the GPU work whose launch lies inside it on its own thread
// (op.start <= launch.start and launch.end <= op.end). The innermost such operator
// launched it directly: that is its self work. Every operator enclosing that one owns
// it too. Per operator instance:
//
//   self_ns         sum of the durations of its self work (PyTorch's key_averages()
//                   self_device_time_total)
//   device_total_ns sum of the durations of all its work, nested operators' included
//                   (PyTorch's device_time_total)
//   busy_ns         length of the union of the intervals of all its work, over every
//                   stream: the time the GPU was busy with it. Its GPU time; rates
//                   (TFLOP/s, GB/s) divide by this.
//   extent_ns       last end - first start of all its work
//
// A top-level range (a user_annotation operator no operator encloses on its thread: an
// NVTX range, torch.profiler's ProfilerStep#N) is also a time window of its process:
//
//   window_busy_ns  length of the union of the intervals of all GPU work whose launch
//                   lies inside the range on ANY thread of the range's process
//                   (op.start <= launch.start and launch.end <= op.end), owned by an
//                   operator or not. A training step's range then covers the backward
//                   kernels PyTorch launches from its autograd thread, which the range
//                   does not own. GPU work whose launch is unknown is not in it.
//
// FLOPs, bytes and precision of an operator: its own (flopline's metrics, a "flops"
// arg, a "precision" arg), else from its shapes (torch_op_args.h). Shape FLOPs follow
// PyTorch where PyTorch counts (aten::mm, addmm, bmm, baddbmm, conv2d always get
// theirs, as with_flops gives them); the other operators with a formula (linear,
// matmul, conv1d/3d, the convolution family, attention) get FLOPs only where no
// operator around or inside them has any, the outermost first, so conv2d > convolution
// > _convolution > cudnn_convolution counts once and linear > addmm counts on addmm.
// A user range (user_annotation: an NVTX range, a record_function) without counts of
// its own gets the FLOPs and bytes of the outermost operators inside it that have them,
// summed (source "nested"), and their precision when they share one.
// A total never counts FLOPs twice: it sums only operators with no enclosing operator
// that has FLOPs (flops_in_total). Precision: the "precision" arg, else the first
// floating tensor input's dtype; a float operator whose inputs are cast inside it
// (autocast: a nested operator of the same name takes another dtype, or a nested
// aten::copy_ writes one) takes that dtype; "fp32" becomes "tf32" when a kernel it
// launched says tf32 in its name (cuBLAS and cuDNN name their TF32 tensor-core kernels so).
//
// GPU work inherits: the precision of the innermost owning operator that has one, and
// a kernel the FLOPs and bytes of the innermost owning operator with counts when that
// operator's only kernel is this one (copies and sets aside: a lone kernel is its
// operator's computation; a cuBLAS workspace memset does not change that).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flopline/trace/model.h"

namespace flopline::trace {

enum class FlopsSource : std::uint8_t {
  kNoFlops,
  kTrace,     // the trace's own count (flopline's metrics, a "flops" arg)
  kShapes,    // computed from "Input Dims" / "Input type"
  kNested,    // a range without counts of its own: the sum of the operators inside it
  kCounters,  // hardware counters (a "flops source" arg "counters ..." beside the count)
};
const char* to_string(FlopsSource s);  // "", "trace", "shapes", "nested", "counters"

// Where the FLOPs a slice carries itself came from: kCounters when its "flops source"
// arg says counters (flopline run --counters), else kTrace.
FlopsSource own_flops_source(const Trace& trace, const Slice& s);

// The FLOPs the counters measured for a slice that declared its own as well (flopline's
// "counted flops" arg on a range with declared FLOPs); nullopt when it carries none.
std::optional<double> counted_flops_beside_declared(const Trace& trace, const Slice& s);

struct OperatorTime {
  SliceRef slice;                // the operator's slice on its CPU thread
  std::uint32_t parent = kNone;  // the enclosing operator on its thread (index), kNone
  std::uint32_t depth = 0;       // operators enclosing it
  std::uint32_t self_items = 0;  // GPU slices it launched directly
  std::uint32_t items = 0;       // GPU slices it owns, nested operators' included
  std::uint32_t kernels = 0;     // of which kernels
  TimeNs self_ns = 0;            // see the file comment
  TimeNs device_total_ns = 0;
  TimeNs busy_ns = 0;
  TimeNs extent_ns = 0;
  // A top-level range: its window's GPU busy time (window_busy_ns); nullopt otherwise.
  std::optional<TimeNs> window_busy_ns;
  TimeNs gpu_start = 0;             // first start of its work (valid when items > 0)
  TimeNs gpu_end = 0;               // last end
  std::uint32_t gpu_track = kNone;  // the track of its first GPU slice (for its device)
  SliceMetrics metrics;             // FLOPs and bytes used for rates (-1: unknown)
  FlopsSource flops_source = FlopsSource::kNoFlops;
  bool flops_in_total = false;  // has FLOPs and no enclosing operator has any
  std::string precision;        // normalized ("bf16"), "" when unknown
};

// What a GPU slice inherits from its operators (see the file comment).
struct InheritedCounts {
  std::uint32_t owner = kNone;  // the innermost operator owning it, kNone when none
  SliceMetrics metrics;         // the lone-kernel operator's FLOPs and bytes, or unknown
  FlopsSource source = FlopsSource::kNoFlops;  // where those FLOPs came from
  std::string_view precision;                  // "" when no owning operator has one
};

class OperatorIndex {
 public:
  OperatorIndex();
  OperatorIndex(OperatorIndex&&) noexcept;
  OperatorIndex& operator=(OperatorIndex&&) noexcept;
  ~OperatorIndex();

  // Needs the trace's flows (or "correlation" args) and, for shape FLOPs, the args text
  // of the operators with a formula. Never fails: a trace without operators or GPU work
  // gives an index with no owned work. The index refers to `trace`, which must outlive
  // it and stay where it is.
  static OperatorIndex build(const Trace& trace);

  const std::vector<OperatorTime>& operators() const;
  // True when some operator owns GPU work: only then is an operator's time its GPU time.
  bool owns_gpu_work() const;
  // The operator whose slice `op_slice` is, kNone when it is not one.
  std::uint32_t operator_at(SliceRef op_slice) const;
  // The operator a gpu_user_annotation slice stands for: the operator of the same name
  // whose work on that stream starts when the slice starts (its CPU twin); kNone.
  std::uint32_t twin_of(SliceRef gpu_annotation) const;
  // What GPU slice `gpu_slice` inherits; owner kNone when nothing owns it.
  InheritedCounts inherited(SliceRef gpu_slice) const;
  // Length of the union of operator `op`'s work intervals clipped to [begin, end) (ns).
  TimeNs busy_within(std::uint32_t op, TimeNs begin, TimeNs end) const;
  // The same for the window of top-level range `op` (window_busy_ns); 0 for others.
  TimeNs window_busy_within(std::uint32_t op, TimeNs begin, TimeNs end) const;
  // Sum of the FLOPs of the operators counted in totals (flops_in_total).
  double total_flops() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace flopline::trace
