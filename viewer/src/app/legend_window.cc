#include "legend_window.h"

#include "core/viewport.h"

namespace flopline::viewer {

void draw_legend(AppState& s, ImVec2 size) {
  ImGui::BeginChild("##legend", size, true);
  ImGui::TextUnformatted("Colour");
  ImGui::SameLine();
  int by = s.color_by == ColorBy::kName ? 0 : 1;
  bool changed = ImGui::RadioButton("by name", &by, 0);
  ImGui::SameLine();
  changed |= ImGui::RadioButton("by category", &by, 1);
  if (changed) {
    s.color_by = by == 0 ? ColorBy::kName : ColorBy::kCategory;
    rebuild_legend(s);
  }
  const float sw = ImGui::GetFontSize();
  const float time_x = ImGui::GetContentRegionAvail().x - ImGui::GetFontSize() * 4.5f;
  for (std::size_t i = 0; i < s.legend.size(); ++i) {
    const LegendEntry& e = s.legend[i];
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::GetWindowDrawList()->AddRectFilled(p, {p.x + sw, p.y + sw}, e.color);
    ImGui::Dummy({sw, sw});
    ImGui::SameLine();
    const std::string& label = i < s.legend_labels.size() ? s.legend_labels[i] : e.label;
    // Long names stop short of the time column (SameLine offsets are from the window's left).
    ImGui::PushClipRect(ImGui::GetCursorScreenPos(),
                        {ImGui::GetWindowPos().x + time_x - 8, p.y + sw + 2}, true);
    ImGui::TextUnformatted(label.c_str());
    ImGui::PopClipRect();
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("%s\n%llu slices", e.label.c_str(),
                        static_cast<unsigned long long>(e.count));
    ImGui::SameLine(time_x);
    ImGui::TextDisabled("%s", format_duration(e.total_ns).c_str());
  }
  ImGui::EndChild();
}

}  // namespace flopline::viewer
