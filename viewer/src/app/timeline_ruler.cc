#include "timeline_ruler.h"

#include <algorithm>
#include <cmath>

#include "ui_colors.h"

namespace flopline::viewer {
namespace {

void draw_ticks(const AppState& s, ImDrawList* dl, ImVec2 pos, ImVec2 size) {
  const RulerTicks ticks = ruler_ticks(s.viewport, s.begin_ns);
  const float bottom = pos.y + size.y;
  for (const RulerTick& t : ticks.ticks) {
    const auto x = static_cast<float>(t.x_px);
    if (x < pos.x || x > pos.x + size.x) continue;
    dl->AddLine({x, bottom - (t.major ? 10.0f : 4.0f)}, {x, bottom}, kRulerTick);
    if (t.major && !t.label.empty()) dl->AddText({x + 3, pos.y + 2}, kRulerText, t.label.c_str());
  }
}

void draw_range(const AppState& s, ImDrawList* dl, ImVec2 pos, ImVec2 size) {
  if (!s.selection.range) return;
  const TimeRange r = *s.selection.range;
  const float x0 = std::max(pos.x, static_cast<float>(s.viewport.time_to_x(r.begin_ns)));
  const float x1 = std::min(pos.x + size.x, static_cast<float>(s.viewport.time_to_x(r.end_ns)));
  if (x1 <= x0) return;
  dl->AddRectFilled({x0, pos.y}, {x1, pos.y + size.y}, kRangeFill);
  const std::string label = format_duration(r.end_ns - r.begin_ns);
  const float w = ImGui::CalcTextSize(label.c_str()).x;
  if (w + 6 < x1 - x0)
    dl->AddText({(x0 + x1 - w) * 0.5f, pos.y + size.y - ImGui::GetFontSize() - 1}, kRangeEdge,
                label.c_str());
}

void handle_drag(AppState& s) {
  TimelineUi& ui = s.ui;
  const float mx = ImGui::GetIO().MousePos.x;
  if (ImGui::IsItemActivated()) {
    ui.ruler_dragging = true;
    ui.ruler_anchor_ns = s.viewport.x_to_time(mx);
  }
  if (ui.ruler_dragging && ImGui::IsItemActive()) {
    s.selection.range = range_from_drag(static_cast<double>(ui.ruler_anchor_ns),
                                        static_cast<double>(s.viewport.x_to_time(mx)));
  }
  if (ui.ruler_dragging && ImGui::IsItemDeactivated()) {
    ui.ruler_dragging = false;
    const TimeRange r = s.selection.range.value_or(TimeRange{});
    if (s.viewport.ns_to_px(static_cast<double>(r.end_ns - r.begin_ns)) < 3) {
      s.selection.range.reset();  // a click on the ruler clears the range
    } else {
      s.show_table = true;  // the aggregated table of the range
    }
  }
  if (ImGui::IsItemHovered()) {
    const ImGuiIO& io = ImGui::GetIO();
    if (io.MouseWheel != 0)
      s.viewport.zoom_around(std::pow(1.25, static_cast<double>(io.MouseWheel)), mx);
  }
}

}  // namespace

void draw_ruler(AppState& s, ImVec2 pos, ImVec2 size) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(pos, {pos.x + size.x, pos.y + size.y}, kRulerBg);
  ImGui::SetCursorScreenPos(pos);
  ImGui::InvisibleButton("##ruler", size);
  handle_drag(s);
  dl->PushClipRect(pos, {pos.x + size.x, pos.y + size.y}, true);
  draw_ticks(s, dl, pos, size);
  draw_range(s, dl, pos, size);
  dl->PopClipRect();
}

}  // namespace flopline::viewer
