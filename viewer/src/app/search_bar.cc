#include "search_bar.h"

#include <algorithm>

#include "gl_includes.h"

namespace flopline::viewer {
namespace {

// Searching is one pass over every slice; past this many, it waits for Enter instead
// of running on every keystroke.
constexpr std::uint64_t kLiveSearchSlices = 2'000'000;

void show_match(AppState& s, std::size_t i) {
  s.search_cursor = i;
  const SearchMatch& m = s.search.matches()[i];
  select_slice(s, m.slice, false);
  const trace::Slice& sl = slice_of(s.trace_list(), m.slice);
  if (s.viewport.ns_to_px(static_cast<double>(sl.dur)) < 2) {
    // Too thin to see at this zoom: zoom until it is a few pixels wide.
    const std::int64_t span = std::max<std::int64_t>(sl.dur * 50, 1000);
    const std::int64_t mid = sl.start + sl.dur / 2;
    s.viewport.fit(mid - span / 2, mid + span / 2);
  }
}

}  // namespace

void step_search(AppState& s, bool forward) {
  if (s.search.count() == 0) return;
  std::int64_t t = s.viewport.t0_ns;
  if (s.search_cursor && *s.search_cursor < s.search.count()) {
    t = s.search.matches()[*s.search_cursor].start_ns;
  } else if (s.selection.has_slice()) {
    t = slice_of(s.trace_list(), s.selection.slice).start;
  } else if (forward) {
    t = s.viewport.t0_ns - 1;
  }
  const auto i = forward ? s.search.next_after(t) : s.search.previous_before(t);
  if (i) show_match(s, *i);
}

void SearchBar::run(AppState& s) {
  s.search.run(s.trace_list(), text_);
  s.search_cursor.reset();
  searched_generation_ = s.generation;
}

void SearchBar::draw(AppState& s) {
  if (!s.show_search) return;
  if (searched_generation_ != s.generation && s.search.query() != text_) run(s);
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos({vp->WorkPos.x + vp->WorkSize.x - 10, vp->WorkPos.y + 34},
                          ImGuiCond_Always, {1.0f, 0.0f});
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize |
                                 ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoMove;
  if (ImGui::Begin("##search", nullptr, flags)) {
    ImGui::TextUnformatted("Search");
    ImGui::SameLine();
    if (s.focus_search) {
      ImGui::SetKeyboardFocusHere();
      s.focus_search = false;
    }
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 20);
    const bool big = s.layout.slice_count() > kLiveSearchSlices;
    const bool enter = ImGui::InputTextWithHint("##q", "slice name", text_, sizeof text_,
                                                ImGuiInputTextFlags_EnterReturnsTrue);
    const bool changed = s.search.query() != text_;
    if (changed && !big) run(s);
    if (enter) {
      if (s.search.query() != text_) run(s);
      step_search(s, !ImGui::GetIO().KeyShift);
      s.focus_search = true;  // keep the field active for the next Enter
    }
    if (ImGui::IsItemActive() || s.focus_search) s.search_field_frame = ImGui::GetFrameCount();
    // Esc in the field closes the bar (ImGui has already let go of the field).
    if (ImGui::IsItemDeactivated() && ImGui::IsKeyPressed(GLFW_KEY_ESCAPE)) s.show_search = false;
    ImGui::SameLine();
    if (s.search.query().empty() && text_[0] != 0 && big) {
      ImGui::TextDisabled("Enter to search");
    } else if (s.search_cursor) {
      ImGui::Text("%zu / %zu", *s.search_cursor + 1, s.search.count());
    } else {
      ImGui::Text("%zu matches", s.search.count());
    }
    ImGui::SameLine();
    if (ImGui::ArrowButton("##prev", ImGuiDir_Up)) step_search(s, false);
    ImGui::SameLine();
    if (ImGui::ArrowButton("##next", ImGuiDir_Down)) step_search(s, true);
    ImGui::SameLine();
    if (ImGui::SmallButton("x")) s.show_search = false;
  }
  ImGui::End();
}

}  // namespace flopline::viewer
