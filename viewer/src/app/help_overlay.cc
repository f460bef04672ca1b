#include "help_overlay.h"

#include <imgui.h>

namespace flopline::viewer {
namespace {

struct KeyHelp {
  const char* keys;
  const char* action;
};

constexpr KeyHelp kKeys[] = {
    {.keys = "mouse wheel", .action = "zoom around the cursor"},
    {.keys = "Shift + wheel", .action = "scroll tracks up and down"},
    {.keys = "W / S", .action = "zoom in / out"},
    {.keys = "A / D", .action = "pan left / right"},
    {.keys = "drag", .action = "pan (and scroll)"},
    {.keys = "click", .action = "select a slice (details panel, flow arrows)"},
    {.keys = "double-click", .action = "zoom to the selected slice"},
    {.keys = "click a header", .action = "collapse or expand a process or track"},
    {.keys = "drag on the ruler", .action = "select a time range: the table aggregates it"},
    {.keys = "F", .action = "fit the selection, or the whole trace"},
    {.keys = "J", .action = "jump along the selection's flow (launch <-> kernel)"},
    {.keys = "Esc", .action = "clear selection, range and highlight"},
    {.keys = "/ or Ctrl+F", .action = "search slice names"},
    {.keys = "Enter / Shift+Enter", .action = "next / previous match (in the search field)"},
    {.keys = "T", .action = "FLOP/s table"},
    {.keys = "R", .action = "roofline"},
    {.keys = "G", .action = "rank summary: time breakdown per GPU, waits at collectives"},
    {.keys = "X", .action = "diff of run A and run B (flopline-view --diff A B)"},
    {.keys = "Ctrl+O", .action = "open trace files"},
    {.keys = "F12", .action = "save the window as a PNG in the current folder"},
    {.keys = "? or F1", .action = "this help"},
};

}  // namespace

void draw_help_overlay(AppState& s) {
  if (!s.show_help) return;
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(
      {vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.5f},
      ImGuiCond_Always, {0.5f, 0.5f});
  ImGui::SetNextWindowBgAlpha(0.95f);
  const ImGuiWindowFlags flags = ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoMove |
                                 ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings;
  if (ImGui::Begin("Keys###help", &s.show_help, flags)) {
    if (ImGui::BeginTable("##keys", 2, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg)) {
      for (const KeyHelp& k : kKeys) {
        ImGui::TableNextRow();
        ImGui::TableSetColumnIndex(0);
        ImGui::TextColored(ImVec4(1.0f, 0.85f, 0.4f, 1.0f), "%s", k.keys);
        ImGui::TableSetColumnIndex(1);
        ImGui::TextUnformatted(k.action);
      }
      ImGui::EndTable();
    }
    ImGui::TextDisabled("Files: drop .json / .json.gz files on the window, or File > Open.");
  }
  ImGui::End();
}

}  // namespace flopline::viewer
