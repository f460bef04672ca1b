// The in-app file dialog, drawn with Dear ImGui (no toolkit dependency): browse
// folders, pick one or more trace files to open (or add to what is open), or name a
// file to save the CSV table to.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "file_browser.h"

namespace flopline::viewer {

class FileDialog {
 public:
  enum class Mode { kOpen, kSave };
  enum class Action { kOpen, kAdd, kSave };
  struct Result {
    Action action = Action::kOpen;
    std::vector<std::string> paths;  // absolute
  };

  void show(Mode mode, std::string default_name = {});
  bool visible() const { return visible_; }
  // Draws the dialog when visible; returns what the user chose, once.
  std::optional<Result> draw(bool traces_open);

 private:
  void draw_entries(std::optional<Result>& result);
  FileBrowser browser_;
  Mode mode_ = Mode::kOpen;
  bool visible_ = false;
  bool just_opened_ = false;
  std::vector<std::string> selected_;  // names in browser_.dir()
  char path_[1024] = {};               // typed folder or file path
  char name_[256] = {};                // save: file name
};

}  // namespace flopline::viewer
