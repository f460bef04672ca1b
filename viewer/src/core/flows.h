// Flow arrows (launch -> kernel, Kineto's ac2g, and any other flow) indexed by the
// slices at their ends, so the viewer finds a selected slice's arrows by binary search.
//
// Only joined flows (both ends bound to a slice) are kept. Each costs 32 bytes here
// plus 4 for the second sort order, against 80 for trace::Flow; after building the
// index the viewer releases Trace::flows (release_model_flows) to stay within its
// memory budget (docs/PERFORMANCE.md, "Viewer").
#pragma once

#include <cstdint>
#include <vector>

#include "core/slice_handle.h"

namespace flopline::viewer {

struct FlowLink {
  SliceHandle from;          // e.g. the cudaLaunchKernel call
  SliceHandle to;            // e.g. the kernel
  trace::StringId name = 0;  // flow name in the `from` trace ("ac2g")
};

class FlowIndex {
 public:
  FlowIndex() = default;
  // Indexes the joined flows of every trace (flows never cross traces).
  static FlowIndex build(TraceList traces);

  // Flows leaving / entering a slice, and both (outgoing first).
  std::vector<FlowLink> outgoing(const SliceHandle& s) const;
  std::vector<FlowLink> incoming(const SliceHandle& s) const;
  std::vector<FlowLink> links_of(const SliceHandle& s) const;
  // Adds the flows of an index built over other traces, whose trace indices become
  // index + trace_offset (files added to those already open: trace_offset = the
  // number of traces open). Kept sorted; cheap when the shifted traces come after
  // every trace already indexed (a concatenation), a full re-sort otherwise.
  void append(FlowIndex&& other, std::uint32_t trace_offset);
  std::size_t size() const { return links_.size(); }
  std::size_t resident_bytes() const;

 private:
  // Both ends of a flow are in the same trace: one trace index for the two.
  struct Packed {
    std::uint32_t trace;
    trace::StringId name;
    trace::SliceRef from, to;
  };
  FlowLink unpack(const Packed& p) const {
    return FlowLink{{p.trace, p.from}, {p.trace, p.to}, p.name};
  }
  std::vector<Packed> links_;         // sorted by `from`
  std::vector<std::uint32_t> by_to_;  // indices into links_, sorted by `to`
};

// Frees the model's flow list (the FlowIndex has what the viewer needs). Returns the
// bytes released.
std::size_t release_model_flows(trace::Trace& trace);

// Strict weak order on handles: trace, track, row, index.
bool handle_less(const SliceHandle& a, const SliceHandle& b);

}  // namespace flopline::viewer
