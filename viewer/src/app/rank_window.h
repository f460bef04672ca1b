// The rank summary window: per rank and GPU a stacked bar of compute, communication,
// memory and idle time (% of its window), each rank's wait at collectives and the rank
// the others wait for, and the collectives with the longest waits. A click on a bar or
// a collective moves the timeline there (core/rank_summary.h holds the model and the
// jump targets).
#pragma once

#include <imgui.h>

#include "app_state.h"

namespace flopline::viewer {

// Draws the window when s.show_ranks. `full`: fill the area given (headless
// --window ranks) instead of a floating window.
void draw_rank_window(AppState& s, bool full, ImVec2 full_pos, ImVec2 full_size);

}  // namespace flopline::viewer
