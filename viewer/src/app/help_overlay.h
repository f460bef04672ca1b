// The help overlay (`?` or F1): every key and mouse action of the viewer.
#pragma once

#include "app_state.h"

namespace flopline::viewer {

void draw_help_overlay(AppState& s);

}  // namespace flopline::viewer
