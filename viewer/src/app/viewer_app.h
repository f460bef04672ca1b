// The viewer application: owns the state, the windows and the background loading,
// and builds one frame of UI at a time. main.cc drives it interactively; the headless
// modes (screenshot, bench) drive it frame by frame.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "app_options.h"
#include "app_state.h"
#include "core/load_job.h"
#include "file_dialog.h"
#include "roofline_window.h"
#include "search_bar.h"
#include "table_window.h"

namespace flopline::viewer {

class GlWindow;

class ViewerApp {
 public:
  explicit ViewerApp(AppOptions options);
  ~ViewerApp();
  ViewerApp(const ViewerApp&) = delete;
  ViewerApp& operator=(const ViewerApp&) = delete;

  // Interactive: loads argv's traces in the background and runs until the window
  // closes. Returns the exit code.
  int run(GlWindow& window);

  // Headless: loads on this thread. Returns the reader errors (empty when all loaded).
  // `read_seconds`: set to the time the core's load_files took (reading, layout, flow
  // index), the rest being the app's own setup (colours, legend).
  std::vector<std::string> load_now(const std::vector<std::string>& paths,
                                    double* read_seconds = nullptr);
  // Applies --range, --select and --window once traces are loaded. Returns "" or why
  // an option could not be applied (e.g. no slice has the --select name).
  std::string apply_view_options();
  // Builds one frame of UI (between GlWindow::begin_frame and end_frame).
  void frame();
  // Starts loading in the background (replacing what is open when `add` is false).
  void start_load(std::vector<std::string> paths, bool add);
  bool busy() const;

  AppState& state() { return s_; }
  TableWindow& table() { return table_; }
  // The core's state dump of the current view (core/state_dump.h).
  std::string state_dump() const;

 private:
  // How to load `paths`: device peaks filled in; with --diff, which files are run A's.
  LoadOptions load_options(const std::vector<std::string>& paths) const;
  void poll_load();
  void draw_menu_bar();
  void draw_main_area();
  void draw_empty_hint(ImVec2 pos, ImVec2 size);
  void handle_dialog_result(const FileDialog::Result& r);
  void write_state_dump_if_changed();
  void save_window_png(GlWindow& window);

  AppOptions options_;
  AppState s_;
  std::unique_ptr<LoadJob> load_;
  std::vector<std::string> loading_paths_;
  bool view_options_applied_ = false;
  bool quit_requested_ = false;
  TableWindow table_;
  RooflineWindow roofline_;
  SearchBar search_;
  FileDialog dialog_;
  std::string last_dump_;
  bool dump_error_shown_ = false;  // a failing --dump-state is said once, not every frame
};

// Writes `text` to `path` whole or not at all (a temporary file renamed into place).
// Returns "" or why not, naming the path.
std::string write_text_file(const std::string& path, const std::string& text);

}  // namespace flopline::viewer
