// Where the timeline's tracks are on screen this frame, for the code that draws them.
#pragma once

#include <imgui.h>

namespace flopline::viewer {

struct TimelineCanvas {
  ImDrawList* dl = nullptr;
  float x0 = 0, x1 = 0;       // timeline area, screen px
  float top = 0, bottom = 0;  // visible part of the tracks area, screen px
  float origin_y = 0;         // screen y of layout y = 0 (scroll applied)
  float content_y0 = 0;       // visible layout y range
  float content_y1 = 0;
};

}  // namespace flopline::viewer
