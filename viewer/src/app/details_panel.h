// The details panel beside the timeline: every arg of the selected slice, its FLOP
// and byte figures, its flows with a jump along each (launch -> kernel and back).
#pragma once

#include <imgui.h>

#include "app_state.h"

namespace flopline::viewer {

inline constexpr float kDetailsWidth = 380.0f;

// Draws into a child region at the current cursor of the current window.
void draw_details_panel(AppState& s, ImVec2 size);

// Follows the selection's next flow (key J and the panel's buttons).
void jump_along_flow(AppState& s);

}  // namespace flopline::viewer
