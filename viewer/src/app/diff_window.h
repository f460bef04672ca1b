// The diff window (flopline-view --diff A B): `flopline diff A B`'s rows (core/
// diff_table.h), sorted by time impact or any column, filtered by name or change; a click
// on a row lights the row's instances in both runs and jumps to the longest.
#pragma once

#include <imgui.h>

#include "app_state.h"

namespace flopline::viewer {

// Draws the window when s.show_diff and a diff is open. `full`: fill the area given
// (headless --window diff) instead of a floating window.
void draw_diff_window(AppState& s, bool full, ImVec2 full_pos, ImVec2 full_size);

// The rows the window lists, in its order (its filter and sort; for the state dump).
std::vector<std::size_t> diff_rows_shown(const AppState& s);

}  // namespace flopline::viewer
