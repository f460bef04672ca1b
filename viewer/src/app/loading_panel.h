// The loading progress window (bytes and events, file k of n, Cancel) and the
// notices window (reader errors with file, position and reason; warnings).
#pragma once

#include "app_state.h"
#include "core/load_job.h"

namespace flopline::viewer {

// Returns true when the user pressed Cancel.
bool draw_loading_panel(const LoadProgress& p, const std::vector<std::string>& paths);

void draw_notices(AppState& s);

}  // namespace flopline::viewer
