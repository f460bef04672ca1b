#include "loading_panel.h"

#include <imgui.h>

#include <filesystem>

#include "slice_info.h"
#include "ui_colors.h"

namespace flopline::viewer {

bool draw_loading_panel(const LoadProgress& p, const std::vector<std::string>& paths) {
  bool cancel = false;
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(
      {vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.4f},
      ImGuiCond_Always, {0.5f, 0.5f});
  ImGui::SetNextWindowSize({std::min(560.0f, vp->WorkSize.x - 40), 0});
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings |
                                 ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize;
  if (ImGui::Begin("Loading###loading", nullptr, flags)) {
    const std::size_t i = std::min<std::size_t>(p.files_done, paths.empty() ? 0 : paths.size() - 1);
    if (!paths.empty()) {
      ImGui::Text("file %u of %u: %s", std::min(p.files_done + 1, p.files_total), p.files_total,
                  std::filesystem::path(paths[i]).filename().string().c_str());
    }
    char overlay[96];
    std::snprintf(overlay, sizeof overlay, "%s%sB of %sB%s", p.inflating ? "inflating: " : "",
                  format_si(static_cast<double>(p.bytes_done)).c_str(),
                  format_si(static_cast<double>(p.bytes_total)).c_str(),
                  p.inflating ? " compressed" : "");
    ImGui::ProgressBar(static_cast<float>(p.fraction()), {-1, 0}, overlay);
    ImGui::Text("%s events", format_si(static_cast<double>(p.events)).c_str());
    ImGui::SameLine(ImGui::GetWindowContentRegionMax().x - ImGui::CalcTextSize("Cancel").x -
                    ImGui::GetStyle().FramePadding.x * 2);
    if (ImGui::Button("Cancel")) cancel = true;
  }
  ImGui::End();
  return cancel;
}

void draw_notices(AppState& s) {
  if (s.notices.empty()) return;
  // Errors open the window by themselves; warnings and notes wait to be asked for
  // (the menu bar shows their count), so they never cover the timeline unasked.
  bool any_error = false;
  for (const Notice& n : s.notices) any_error |= n.kind == Notice::Kind::kError;
  if (!any_error && !s.show_notices) return;
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos({vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + 40},
                          ImGuiCond_Appearing, {0.5f, 0.0f});
  ImGui::SetNextWindowSizeConstraints({320, 0}, {vp->WorkSize.x - 40, vp->WorkSize.y * 0.6f});
  bool open = true;
  if (ImGui::Begin("Messages###notices", &open,
                   ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoSavedSettings)) {
    ImGui::PushTextWrapPos(std::min(900.0f, vp->WorkSize.x - 80));
    for (const Notice& n : s.notices) {
      switch (n.kind) {
        case Notice::Kind::kError:
          ImGui::PushStyleColor(ImGuiCol_Text, kErrorText);
          ImGui::TextUnformatted("error:");
          break;
        case Notice::Kind::kWarning:
          ImGui::PushStyleColor(ImGuiCol_Text, kWarningText);
          ImGui::TextUnformatted("warning:");
          break;
        case Notice::Kind::kInfo:
          ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetColorU32(ImGuiCol_Text));
          ImGui::TextUnformatted("note:");
          break;
      }
      ImGui::PopStyleColor();
      ImGui::SameLine();
      ImGui::TextUnformatted(n.text.c_str());
    }
    ImGui::PopTextWrapPos();
    if (ImGui::Button("Dismiss")) open = false;
  }
  ImGui::End();
  if (!open) {
    s.notices.clear();
    s.show_notices = false;
  }
}

}  // namespace flopline::viewer
