// The timeline: the time ruler on top, then processes -> tracks -> rows of slices,
// with hover tooltips, selection, flow arrows, search and table highlights, and the
// mouse interaction (wheel zoom, drag pan, click select, ruler drag for a range).
// Per-frame cost follows pixels: only visible rows are visited, and each through the
// core's level-of-detail pass (core/lod.h).
#pragma once

#include <imgui.h>

#include "app_state.h"

namespace flopline::viewer {

// Fills the rectangle [pos, pos + size) (screen px) of the current ImGui window.
void draw_timeline(AppState& s, ImVec2 pos, ImVec2 size);

// Height of the time ruler, px.
inline constexpr float kRulerHeight = 26.0f;

}  // namespace flopline::viewer
