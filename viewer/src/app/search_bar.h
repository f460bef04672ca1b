// The search bar (`/` or Ctrl+F): a name substring, the match count, next/previous
// (Enter / Shift+Enter, or the buttons). Each step selects the match and brings it
// into view.
#pragma once

#include <imgui.h>

#include "app_state.h"

namespace flopline::viewer {

class SearchBar {
 public:
  void draw(AppState& s);

 private:
  void run(AppState& s);
  char text_[256] = {};
  std::uint64_t searched_generation_ = 0;
};

// Moves to the next (or previous) match after the current one, selecting it.
void step_search(AppState& s, bool forward);

}  // namespace flopline::viewer
