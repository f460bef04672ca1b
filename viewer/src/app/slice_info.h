// What the tooltip and the details panel say about one slice: name, category, track,
// start (after the trace's first event), duration, FLOPs, bytes, achieved TFLOP/s and
// GB/s, and the args. GL-free, unit-tested.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/si_format.h"
#include "core/slice_handle.h"
#include "flopline/trace/operator_time.h"

namespace flopline::viewer {

struct InfoLine {
  std::string key;
  std::string value;
};

struct SliceInfo {
  std::string name;  // full, unshortened
  std::string category;
  std::string start;              // "12.3 ms" after origin
  std::string duration;           // "1.50 ms"
  std::vector<InfoLine> metrics;  // FLOPs, bytes, TFLOP/s, GB/s (those known)
  std::vector<InfoLine> args;     // every arg in file order, values as JSON text
                                  // (strings decoded)
};

// `args_json` is the slice's args object (from ArgsSource); "{}" or "" when none.
SliceInfo describe_slice(TraceList traces, const SliceHandle& h, std::string_view args_json,
                         std::int64_t origin_ns);

// The args a tooltip shows: launch geometry and resources (grid, block, registers,
// shared memory, stream...) and FLOP/byte figures, in that order, when present.
std::vector<InfoLine> tooltip_args(const SliceInfo& info);

// What operator ownership says about a slice (flopline/trace/operator_time.h): for an
// operator (or a gpu_user_annotation standing for one), its GPU busy, self, total and
// extent times (a top-level range also its window's busy time: the GPU work any thread
// of its process launched while it was open), how much GPU work it owns, its FLOPs and where they
// came from, and its rate on busy time; for GPU work, the operator that launched it and what it
// inherits. `operators` is the trace's index (nullptr: nothing to say).
std::vector<InfoLine> operator_info(const trace::Trace& trace,
                                    const trace::OperatorIndex* operators,
                                    const trace::SliceRef& slice);

}  // namespace flopline::viewer
