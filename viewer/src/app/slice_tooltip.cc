#include "slice_tooltip.h"

#include <imgui.h>

#include "slice_info.h"
#include "ui_colors.h"

namespace flopline::viewer {

void show_slice_tooltip(AppState& s, const SliceHandle& h, std::uint32_t merged_count) {
  const std::string& args = args_of(s, s.hover_args, h);
  const SliceInfo info = describe_slice(s.trace_list(), h, args, s.begin_ns);
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 45);
  if (merged_count > 1) {
    ImGui::TextColored(ImVec4(1, 0.8f, 0.4f, 1),
                       "%u slices merged here (zoom in); the longest:", merged_count);
  }
  ImGui::TextUnformatted(info.name.c_str());
  ImGui::PopTextWrapPos();
  ImGui::Separator();
  ImGui::Text("start     %s", info.start.c_str());
  ImGui::Text("duration  %s", info.duration.c_str());
  if (!info.category.empty()) ImGui::Text("category  %s", info.category.c_str());
  for (const InfoLine& m : info.metrics) ImGui::Text("%-9s %s", m.key.c_str(), m.value.c_str());
  const std::vector<InfoLine> key_args = tooltip_args(info);
  if (!key_args.empty()) {
    ImGui::Separator();
    for (const InfoLine& a : key_args) ImGui::Text("%s: %s", a.key.c_str(), a.value.c_str());
  }
  ImGui::TextDisabled("click to select, all args in the details panel");
  ImGui::EndTooltip();
}

}  // namespace flopline::viewer
