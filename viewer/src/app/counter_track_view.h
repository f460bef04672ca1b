// Counter tracks on the timeline: each series' graph in its track's band (a filled step
// graph, or per pixel column the min-max of the samples there, core/counter_lod.h), the
// highest value in view labelled with the unit its name states, and a tooltip with the
// value under the mouse and where the numbers come from.
#pragma once

#include <imgui.h>

#include "app_state.h"
#include "timeline_canvas.h"

namespace flopline::viewer {

// Draws the graphs of the counter tracks shown in the canvas; counts their items in
// s.counter_items.
void draw_counter_tracks(AppState& s, const TimelineCanvas& c);

// When the mouse is over a counter track's graph: marks the value there and shows the
// tooltip. False when it is over none.
bool hover_counter_track(AppState& s, const TimelineCanvas& c, ImVec2 mouse);

}  // namespace flopline::viewer
