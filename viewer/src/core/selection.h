// The viewer's selection: one slice, a time range dragged on the ruler, and the name
// highlighted from the table. Plus "jump along flow": from a launch to its kernel and
// back, cycling through a slice's flows when it has several.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/flows.h"
#include "core/slice_handle.h"

namespace flopline::viewer {

struct TimeRange {
  std::int64_t begin_ns = 0;  // absolute ns, begin <= end
  std::int64_t end_ns = 0;
  friend bool operator==(const TimeRange&, const TimeRange&) = default;
};

struct Selection {
  SliceHandle slice;                            // invalid when nothing is selected
  std::vector<FlowLink> flows;                  // the selected slice's flows (outgoing first)
  std::size_t flow_cursor = 0;                  // which flow the next jump follows
  std::optional<TimeRange> range;               // ruler drag, for the range table
  std::optional<std::string> highlighted_name;  // table row whose instances are lit

  bool has_slice() const { return slice.valid(); }
  // Selects `s` and loads its flows from the index.
  void select(const SliceHandle& s, const FlowIndex& flows_index);
  void clear_slice();
  // Esc: clears the slice, the range and the highlight.
  void clear_all();
  // The slice at the other end of the next flow (launch -> kernel, kernel -> launch),
  // advancing the cursor; nullopt when the selection has no flow.
  std::optional<SliceHandle> next_flow_target();
};

// A range dragged from x_a to x_b (either order), as times.
TimeRange range_from_drag(double t_a_ns, double t_b_ns);

}  // namespace flopline::viewer
