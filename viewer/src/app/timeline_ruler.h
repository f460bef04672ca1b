// The time ruler above the tracks: ticks with adaptive units (core/viewport.h), the
// dragged range, and the drag itself: dragging on the ruler selects a time range and
// opens the FLOP/s table for it.
#pragma once

#include <imgui.h>

#include "app_state.h"

namespace flopline::viewer {

void draw_ruler(AppState& s, ImVec2 pos, ImVec2 size);

}  // namespace flopline::viewer
