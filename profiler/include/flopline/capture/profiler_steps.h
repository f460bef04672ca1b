// torch.profiler's step markers for tools that split a trace into iterations (Holistic
// Trace Analysis reads `ProfilerStep#N`): with `flopline run --profiler-steps PATTERN`,
// each NVTX range whose name matches PATTERN and ends in a number N ("step 12",
// "iteration_12") gets a `ProfilerStep#N` slice over the same span on its thread, added
// before the range so that it encloses it (docs/CAPTURE.md, "Step markers for other
// tools"). The number comes from the name, so every rank gives one step the same N.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "flopline/capture/attribution.h"
#include "flopline/capture/nvtx_ranges.h"
#include "flopline/trace/builder.h"

namespace flopline::capture {

// The number a step range's name ends in ("step 12" -> 12, "iter_007" -> 7); none when
// it does not end in a digit or the number has more than 18 digits.
std::optional<std::int64_t> trailing_step_number(std::string_view name);

// Adds a "ProfilerStep#N" slice (cat "user_annotation", args {"NVTX range": name}) for
// each range of `markers` whose name matches the glob `pattern` and ends in a number,
// except those `held` marks (per range; null: none). Returns how many it added.
std::size_t emit_profiler_steps(const PairedMarkers& markers, const TracePids& pids,
                                std::string_view pattern, trace::TraceBuilder& builder,
                                const std::vector<bool>* held);

}  // namespace flopline::capture
