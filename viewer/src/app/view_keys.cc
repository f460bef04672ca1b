#include "view_keys.h"

#include <imgui.h>

#include "details_panel.h"
#include "gl_includes.h"

namespace flopline::viewer {
namespace {

// Frames the search field may be inactive between an Enter and its refocus (ImGui 1.86
// applies SetKeyboardFocusHere a frame late, and io.WantTextInput lags one more).
constexpr int kSearchGapFrames = 3;

// ImGui 1.86 indexes keys by the GLFW key code (io.KeysDown), so GLFW codes work here.
bool pressed(int key, bool repeat = true) {
  return ImGui::IsKeyPressed(key, repeat);
}

}  // namespace

void handle_view_keys(AppState& s) {
  const ImGuiIO& io = ImGui::GetIO();
  if (pressed(GLFW_KEY_F12, false)) s.save_screenshot = true;  // also while typing
  if (io.WantTextInput) return;
  if (s.show_search && ImGui::GetFrameCount() - s.search_field_frame <= kSearchGapFrames) {
    // The field is between an Enter and its refocus: Esc closes the bar as it would in the
    // field, instead of clearing the selection the search just made.
    if (pressed(GLFW_KEY_ESCAPE, false)) s.show_search = false;
    return;
  }
  const bool ctrl = io.KeyCtrl;
  const bool shift = io.KeyShift;
  // '?' is Shift+'/' on US keyboards; F1 everywhere.
  if (pressed(GLFW_KEY_F1, false) || (shift && pressed(GLFW_KEY_SLASH, false))) {
    s.show_help = !s.show_help;
    return;
  }
  if ((ctrl && pressed(GLFW_KEY_F, false)) || (!shift && !ctrl && pressed(GLFW_KEY_SLASH, false))) {
    s.show_search = true;
    s.focus_search = true;
    return;
  }
  if (ctrl && pressed(GLFW_KEY_O, false)) {
    s.show_open_dialog = true;
    return;
  }
  if (pressed(GLFW_KEY_ESCAPE, false)) {
    if (s.show_help) {
      s.show_help = false;
    } else {
      s.selection.clear_all();
      set_highlight(s, std::nullopt);
      s.search_cursor.reset();
    }
    return;
  }
  if (ctrl || s.empty()) return;
  const float cx =
      s.ui.cursor_x >= 0 ? s.ui.cursor_x : s.viewport.x0_px + s.viewport.width_px * 0.5f;
  if (pressed(GLFW_KEY_W)) s.viewport.zoom_around(kKeyZoomFactor, cx);
  if (pressed(GLFW_KEY_S)) s.viewport.zoom_around(1.0 / kKeyZoomFactor, cx);
  if (pressed(GLFW_KEY_A))
    s.viewport.pan_pixels(static_cast<float>(s.viewport.width_px * kKeyPanShare));
  if (pressed(GLFW_KEY_D))
    s.viewport.pan_pixels(static_cast<float>(-s.viewport.width_px * kKeyPanShare));
  if (pressed(GLFW_KEY_F, false)) fit_selection_or_all(s);
  if (pressed(GLFW_KEY_J, false)) jump_along_flow(s);
  if (pressed(GLFW_KEY_T, false)) s.show_table = !s.show_table;
  if (pressed(GLFW_KEY_R, false)) s.show_roofline = !s.show_roofline;
  if (pressed(GLFW_KEY_G, false)) s.show_ranks = !s.show_ranks;
  if (pressed(GLFW_KEY_X, false) && s.diff) s.show_diff = !s.show_diff;
}

}  // namespace flopline::viewer
