// The colour legend in the sidebar: what each colour stands for (names or categories,
// most time first), and the switch between colouring by name and by category.
#pragma once

#include <imgui.h>

#include "app_state.h"

namespace flopline::viewer {

// Draws into a child region of `size` at the current cursor.
void draw_legend(AppState& s, ImVec2 size);

}  // namespace flopline::viewer
