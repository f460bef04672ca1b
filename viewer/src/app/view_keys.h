// Keyboard shortcuts of the main view (help_overlay.cc lists them). Ignored while a
// text field has the keyboard.
#pragma once

#include "app_state.h"

namespace flopline::viewer {

// Zoom factor of one W/S press and pan share of one A/D press.
inline constexpr double kKeyZoomFactor = 1.25;
inline constexpr double kKeyPanShare = 0.15;

void handle_view_keys(AppState& s);

}  // namespace flopline::viewer
