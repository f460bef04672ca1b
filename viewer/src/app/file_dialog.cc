#include "file_dialog.h"

#include <imgui.h>

#include <algorithm>
#include <cstring>

#include "slice_info.h"

namespace flopline::viewer {
namespace {

void copy_to(char* dst, std::size_t n, const std::string& s) {
  std::strncpy(dst, s.c_str(), n - 1);
  dst[n - 1] = 0;
}

}  // namespace

void FileDialog::show(Mode mode, std::string default_name) {
  mode_ = mode;
  visible_ = true;
  just_opened_ = true;
  selected_.clear();
  browser_.refresh();
  copy_to(path_, sizeof path_, browser_.dir().string());
  copy_to(name_, sizeof name_, default_name);
}

void FileDialog::draw_entries(std::optional<Result>& result) {
  namespace fs = std::filesystem;
  const ImVec2 size{0, -ImGui::GetFrameHeightWithSpacing() * (mode_ == Mode::kSave ? 2.2f : 1.2f)};
  ImGui::BeginChild("##entries", size, true);
  if (ImGui::Selectable("..", false, ImGuiSelectableFlags_AllowDoubleClick) &&
      ImGui::IsMouseDoubleClicked(0)) {
    browser_.up();
    selected_.clear();
  }
  std::optional<fs::path> enter;
  for (const BrowserEntry& e : browser_.entries()) {
    const bool sel = std::find(selected_.begin(), selected_.end(), e.name) != selected_.end();
    std::string label = e.is_dir ? e.name + "/" : e.name;
    if (ImGui::Selectable(label.c_str(), sel, ImGuiSelectableFlags_AllowDoubleClick)) {
      if (e.is_dir) {
        if (ImGui::IsMouseDoubleClicked(0)) enter = browser_.dir() / e.name;
      } else if (mode_ == Mode::kSave) {
        copy_to(name_, sizeof name_, e.name);
      } else {
        if (!ImGui::GetIO().KeyCtrl) selected_.clear();
        if (sel && ImGui::GetIO().KeyCtrl) {
          selected_.erase(std::find(selected_.begin(), selected_.end(), e.name));
        } else {
          selected_.push_back(e.name);
        }
        if (ImGui::IsMouseDoubleClicked(0)) {
          result = Result{.action = Action::kOpen, .paths = {(browser_.dir() / e.name).string()}};
        }
      }
    }
    if (!e.is_dir) {
      ImGui::SameLine(ImGui::GetWindowContentRegionMax().x - ImGui::GetFontSize() * 6);
      ImGui::TextDisabled("%sB", format_si(static_cast<double>(e.size)).c_str());
    }
  }
  ImGui::EndChild();
  if (enter) {
    browser_.change_dir(*enter);
    selected_.clear();
    copy_to(path_, sizeof path_, browser_.dir().string());
  }
}

std::optional<FileDialog::Result> FileDialog::draw(bool traces_open) {
  if (!visible_) return std::nullopt;
  std::optional<Result> result;
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(
      {vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.5f},
      ImGuiCond_Appearing, {0.5f, 0.5f});
  ImGui::SetNextWindowSize(
      {std::min(720.0f, vp->WorkSize.x - 40), std::min(480.0f, vp->WorkSize.y - 40)},
      ImGuiCond_Appearing);
  if (just_opened_) ImGui::SetNextWindowFocus();
  just_opened_ = false;
  const char* title =
      mode_ == Mode::kOpen ? "Open traces###filedialog" : "Save table as CSV###filedialog";
  if (ImGui::Begin(title, &visible_,
                   ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings)) {
    ImGui::SetNextItemWidth(-ImGui::GetFontSize() * 8);
    if (ImGui::InputText("##path", path_, sizeof path_, ImGuiInputTextFlags_EnterReturnsTrue)) {
      std::error_code ec;
      if (mode_ == Mode::kOpen && std::filesystem::is_regular_file(path_, ec)) {
        result = Result{.action = Action::kOpen, .paths = {path_}};
      } else if (browser_.change_dir(path_)) {
        selected_.clear();
      }
    }
    ImGui::SameLine();
    bool all = browser_.show_all();
    if (ImGui::Checkbox("all files", &all)) browser_.set_show_all(all);
    if (!browser_.error().empty())
      ImGui::TextColored(ImVec4(1, 0.45f, 0.4f, 1), "%s", browser_.error().c_str());
    draw_entries(result);
    if (mode_ == Mode::kSave) {
      ImGui::SetNextItemWidth(-1);
      ImGui::InputTextWithHint("##name", "file name", name_, sizeof name_);
      if (ImGui::Button("Save") && name_[0] != 0) {
        result = Result{.action = Action::kSave, .paths = {(browser_.dir() / name_).string()}};
      }
    } else {
      ImGui::BeginDisabled(selected_.empty());
      auto chosen = [&](Action a) {
        Result r{.action = a, .paths = {}};
        for (const std::string& n : selected_) r.paths.push_back((browser_.dir() / n).string());
        return r;
      };
      if (ImGui::Button("Open")) result = chosen(Action::kOpen);
      if (traces_open) {
        ImGui::SameLine();
        if (ImGui::Button("Add to open traces")) result = chosen(Action::kAdd);
      }
      ImGui::EndDisabled();
      ImGui::SameLine();
      ImGui::TextDisabled("%zu selected (Ctrl+click for several)", selected_.size());
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) visible_ = false;
  }
  ImGui::End();
  if (result) visible_ = false;
  return result;
}

}  // namespace flopline::viewer
