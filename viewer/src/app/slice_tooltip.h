// The hover tooltip of a slice: name, start, duration, FLOP/byte figures and the key
// args (grid, block, registers, shared memory, stream...). The details panel shows
// every arg of the selected slice.
#pragma once

#include <cstdint>

#include "app_state.h"

namespace flopline::viewer {

// `merged_count` > 1: the slice stands for a merged block of that many slices.
void show_slice_tooltip(AppState& s, const SliceHandle& h, std::uint32_t merged_count);

}  // namespace flopline::viewer
