#include "viewer_app.h"

#include <imgui.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "core/state_dump.h"
#include "core/viewport.h"
#include "details_panel.h"
#include "diff_window.h"
#include "flopline/trace/atomic_file.h"
#include "flopline/trace/device_peaks.h"
#include "frame_pacer.h"
#include "gl_includes.h"
#include "gl_window.h"
#include "help_overlay.h"
#include "legend_window.h"
#include "loading_panel.h"
#include "offscreen_target.h"
#include "png_writer.h"
#include "rank_window.h"
#include "timeline_view.h"
#include "view_keys.h"

namespace flopline::viewer {
namespace {

constexpr float kSidebarWidth = 380.0f;

std::string stem_of(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  for (const char* ext : {".gz", ".json"}) {
    if (name.ends_with(ext)) name.resize(name.size() - std::strlen(ext));
  }
  return name;
}

}  // namespace

std::string write_text_file(const std::string& path, const std::string& text) {
  std::string error;
  if (trace::write_file_atomic(path, text, false, 0, error)) return "";
  return path + ": " + error;
}

ViewerApp::ViewerApp(AppOptions options) : options_(std::move(options)) {}

ViewerApp::~ViewerApp() {
  load_.reset();  // cancels and joins
  table_.wait_idle();
}

LoadOptions ViewerApp::load_options(const std::vector<std::string>& paths) const {
  LoadOptions o;
  // Other tools' traces name their GPU without its peaks: the table and the rank
  // summary's utilization need them.
  o.prepare = [](trace::Trace& t) { trace::fill_missing_peaks(t); };
  if (options_.diff && paths == options_.traces) {
    o.diff = LoadOptions::DiffSides{.a_given = options_.diff_a,
                                    .b_given = options_.diff_b,
                                    .a_paths = options_.diff_a_files.size(),
                                    .by = options_.by.value_or(trace::GroupBy::kName)};
    for (const std::string& f : options_.diff_a_files)
      o.labels.push_back("A: " + std::filesystem::path(f).filename().string());
    for (const std::string& f : options_.diff_b_files)
      o.labels.push_back("B: " + std::filesystem::path(f).filename().string());
  }
  return o;
}

std::vector<std::string> ViewerApp::load_now(const std::vector<std::string>& paths,
                                             double* read_seconds) {
  table_.wait_idle();
  const auto t0 = std::chrono::steady_clock::now();
  LoadResult r = load_files(paths, load_options(paths));
  if (read_seconds)
    *read_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::vector<std::string> errors = r.errors;
  adopt_load_result(s_, std::move(r));
  return errors;
}

void ViewerApp::start_load(std::vector<std::string> paths, bool add) {
  if (paths.empty()) return;
  if (add) {
    // Adding re-reads the open files with the new ones, so one load builds the layout and
    // the flow index over all of them. (FlowIndex::append could join a load of only the
    // new files to the open index, sparing the re-read; the app does not use it.)
    std::vector<std::string> all;
    for (const auto& f : s_.files) all.push_back(f->path);
    all.insert(all.end(), paths.begin(), paths.end());
    paths = std::move(all);
  }
  load_.reset();
  loading_paths_ = paths;
  LoadOptions options = load_options(paths);
  load_ = std::make_unique<LoadJob>(std::move(paths), std::move(options));
}

bool ViewerApp::busy() const {
  return load_ != nullptr || table_.building();
}

void ViewerApp::poll_load() {
  if (!load_ || !load_->done()) return;
  table_.wait_idle();  // its worker reads the traces about to be replaced
  LoadResult r = load_->take();
  load_.reset();
  adopt_load_result(s_, std::move(r));
  if (!s_.empty()) {
    std::string title = "flopline-view: " + s_.files.front()->label;
    if (s_.files.size() > 1) title += " +" + std::to_string(s_.files.size() - 1);
    if (GLFWwindow* w = glfwGetCurrentContext()) glfwSetWindowTitle(w, title.c_str());
  }
  if (!view_options_applied_ && !s_.empty()) {
    const std::string err = apply_view_options();
    if (!err.empty()) s_.notices.push_back({.kind = Notice::Kind::kError, .text = err});
  }
}

std::string ViewerApp::apply_view_options() {
  view_options_applied_ = true;
  if (options_.range) {
    const std::int64_t b = s_.begin_ns + options_.range->begin.value_or(0);
    const std::int64_t e = options_.range->end ? s_.begin_ns + *options_.range->end : s_.end_ns;
    s_.viewport.fit(b, std::max(e, b + 1));
    s_.viewport.t0_ns = b;  // exactly the range asked for, no fit margin
    s_.viewport.t1_ns = std::max(e, b + 1);
    s_.fit_pending = false;
    // The table and the roofline aggregate the range.
    if (options_.window != ShotWindow::kTimeline)
      s_.selection.range = TimeRange{.begin_ns = b, .end_ns = e};
  }
  if (options_.by) s_.table_by_request = options_.by;
  std::string error;
  if (options_.select) {
    const SliceHandle h = longest_slice_named(s_.trace_list(), *options_.select);
    if (h.valid()) {
      // Zoomed to the selection, unless --range says what to show.
      select_slice(s_, h, !options_.range);
      if (!options_.range) s_.fit_pending = false;
    } else {
      error = "--select: no slice is named '" + *options_.select + "'";
    }
  }
  switch (options_.window) {
    case ShotWindow::kTimeline:
      break;
    case ShotWindow::kTable:
      s_.show_table = true;
      s_.table_to_front = options_.screenshot.has_value();
      break;
    case ShotWindow::kRoofline:
      s_.show_roofline = true;
      s_.roofline_to_front = options_.screenshot.has_value();
      break;
    case ShotWindow::kRanks:
      s_.show_ranks = true;
      s_.ranks_to_front = options_.screenshot.has_value();
      break;
    case ShotWindow::kDiff:
      s_.show_diff = true;
      s_.diff_to_front = options_.screenshot.has_value();
      break;
  }
  return error;
}

std::string ViewerApp::state_dump() const {
  const ViewerStateView view{.viewport = &s_.viewport,
                             .layout = &s_.layout,
                             .selection = &s_.selection,
                             .search = &s_.search,
                             .visible_items = s_.visible_items,
                             .counter_items = s_.counter_items,
                             .end_ns = s_.end_ns,
                             .origin_y_px = s_.ui.origin_y,
                             .roofline_points = roofline_.point_count(),
                             .ranks = &s_.rank_summary,
                             .ranks_shown = s_.show_ranks,
                             .diff = s_.diff ? &*s_.diff : nullptr,
                             .diff_shown = diff_rows_shown(s_)};
  return dump_state_json(s_.trace_list(), view);
}

void ViewerApp::write_state_dump_if_changed() {
  if (!options_.dump_state) return;
  std::string dump = state_dump();
  if (dump == last_dump_) return;
  // write_text_file renames a complete file into place: a reader never sees half a dump.
  const std::string err = write_text_file(*options_.dump_state, dump + "\n");
  if (!err.empty() && !dump_error_shown_) {
    s_.notices.push_back({.kind = Notice::Kind::kError, .text = "cannot dump the state: " + err});
    dump_error_shown_ = true;
  }
  last_dump_ = std::move(dump);
}

void ViewerApp::handle_dialog_result(const FileDialog::Result& r) {
  switch (r.action) {
    case FileDialog::Action::kOpen:
      start_load(r.paths, false);
      break;
    case FileDialog::Action::kAdd:
      start_load(r.paths, true);
      break;
    case FileDialog::Action::kSave: {
      const std::string err = write_text_file(r.paths.front(), table_.csv());
      s_.notices.push_back(err.empty() ? Notice{.kind = Notice::Kind::kInfo,
                                                .text = "table written to " + r.paths.front()}
                                       : Notice{.kind = Notice::Kind::kError, .text = err});
      break;
    }
  }
}

void ViewerApp::draw_menu_bar() {
  if (!ImGui::BeginMainMenuBar()) return;
  if (ImGui::BeginMenu("File")) {
    if (ImGui::MenuItem("Open...", "Ctrl+O")) s_.show_open_dialog = true;
    if (ImGui::MenuItem("Export table as CSV...", nullptr, false, table_.table() != nullptr)) {
      dialog_.show(FileDialog::Mode::kSave,
                   s_.empty() ? "table.csv" : stem_of(s_.files.front()->path) + ".table.csv");
    }
    if (ImGui::MenuItem("Close all", nullptr, false, !s_.empty())) {
      table_.wait_idle();
      close_all(s_);
    }
    ImGui::Separator();
    if (ImGui::MenuItem("Quit", "Ctrl+Q")) quit_requested_ = true;
    ImGui::EndMenu();
  }
  if (ImGui::BeginMenu("View")) {
    ImGui::MenuItem("FLOP/s table", "T", &s_.show_table);
    ImGui::MenuItem("Roofline", "R", &s_.show_roofline);
    ImGui::MenuItem("Rank summary", "G", &s_.show_ranks, !s_.rank_summary.bars.empty());
    ImGui::MenuItem("Diff A -> B", "X", &s_.show_diff, s_.diff.has_value());
    ImGui::MenuItem("Search", "/", &s_.show_search);
    if (ImGui::MenuItem("Fit", "F")) fit_selection_or_all(s_);
    if (ImGui::MenuItem("Colour by name", nullptr, s_.color_by == ColorBy::kName)) {
      s_.color_by = ColorBy::kName;
      rebuild_legend(s_);
    }
    if (ImGui::MenuItem("Colour by category", nullptr, s_.color_by == ColorBy::kCategory)) {
      s_.color_by = ColorBy::kCategory;
      rebuild_legend(s_);
    }
    if (ImGui::MenuItem("Collapse all processes")) s_.layout.collapse_all(true);
    if (ImGui::MenuItem("Expand all processes")) s_.layout.collapse_all(false);
    ImGui::EndMenu();
  }
  if (ImGui::MenuItem("Help")) s_.show_help = !s_.show_help;
  if (!s_.notices.empty()) {
    const std::string label =
        std::to_string(s_.notices.size()) + (s_.notices.size() == 1 ? " message" : " messages");
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.8f, 0.35f, 1.0f));
    if (ImGui::MenuItem(label.c_str())) s_.show_notices = !s_.show_notices;
    ImGui::PopStyleColor();
  }
  if (!s_.empty()) {
    char status[256];
    std::snprintf(status, sizeof status,
                  "%zu file%s, %llu slices | view %s | %llu items drawn | ? keys", s_.files.size(),
                  s_.files.size() == 1 ? "" : "s",
                  static_cast<unsigned long long>(s_.layout.slice_count()),
                  format_duration(s_.viewport.span_ns()).c_str(),
                  static_cast<unsigned long long>(s_.visible_items));
    ImGui::SameLine(ImGui::GetWindowWidth() - ImGui::CalcTextSize(status).x - 16);
    ImGui::TextDisabled("%s", status);
  }
  ImGui::EndMainMenuBar();
}

void ViewerApp::draw_empty_hint(ImVec2 pos, ImVec2 size) {
  const char* lines[] = {
      "No trace open.",
      "File > Open (Ctrl+O), or drop .json / .json.gz trace files on this window.",
      "Traces from flopline, PyTorch's profiler (Kineto), HTA, Chrome and Perfetto JSON.",
      "? or F1 lists the keys.",
  };
  float y = pos.y + size.y * 0.4f;
  for (const char* l : lines) {
    const float w = ImGui::CalcTextSize(l).x;
    ImGui::GetWindowDrawList()->AddText({pos.x + (size.x - w) * 0.5f, y},
                                        ImGui::GetColorU32(ImGuiCol_Text), l);
    y += ImGui::GetTextLineHeightWithSpacing() * 1.3f;
  }
}

void ViewerApp::draw_main_area() {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(vp->WorkPos);
  ImGui::SetNextWindowSize(vp->WorkSize);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, {0, 0});
  ImGui::PushStyleVar(ImGuiStyleVar_WindowBorderSize, 0);
  // No background: glClear already paints it, and under llvmpipe every full-window
  // quad costs milliseconds of fill (docs/PERFORMANCE.md, "Viewer").
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                 ImGuiWindowFlags_NoBringToFrontOnFocus |
                                 ImGuiWindowFlags_NoSavedSettings |
                                 ImGuiWindowFlags_NoScrollWithMouse | ImGuiWindowFlags_NoNavFocus |
                                 ImGuiWindowFlags_NoBackground;
  ImGui::Begin("##main", nullptr, flags);
  ImGui::PopStyleVar(2);
  const ImVec2 pos = vp->WorkPos;
  const ImVec2 size = vp->WorkSize;
  if (s_.empty()) {
    if (!load_) draw_empty_hint(pos, size);
  } else {
    const float sidebar = std::min(kSidebarWidth, size.x * 0.35f);
    draw_timeline(s_, pos, {size.x - sidebar, size.y});
    ImGui::SetCursorScreenPos({pos.x + size.x - sidebar, pos.y});
    const float details_h = std::floor(size.y * 0.55f);
    draw_details_panel(s_, {sidebar, details_h});
    ImGui::SetCursorScreenPos({pos.x + size.x - sidebar, pos.y + details_h});
    draw_legend(s_, {sidebar, size.y - details_h});
  }
  ImGui::End();
}

void ViewerApp::frame() {
  poll_load();
  handle_view_keys(s_);
  if (ImGui::GetIO().KeyCtrl && ImGui::IsKeyPressed(GLFW_KEY_Q, false)) quit_requested_ = true;
  if (s_.show_open_dialog) {
    dialog_.show(FileDialog::Mode::kOpen);
    s_.show_open_dialog = false;
  }
  draw_menu_bar();
  draw_main_area();
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  table_.draw(s_, s_.table_to_front, vp->WorkPos, vp->WorkSize);
  roofline_.draw(s_, table_.table(), table_.version(), s_.roofline_to_front, vp->WorkPos,
                 vp->WorkSize);
  draw_rank_window(s_, s_.ranks_to_front, vp->WorkPos, vp->WorkSize);
  draw_diff_window(s_, s_.diff_to_front, vp->WorkPos, vp->WorkSize);
  if (table_.take_export_request()) {
    dialog_.show(FileDialog::Mode::kSave,
                 s_.empty() ? "table.csv" : stem_of(s_.files.front()->path) + ".table.csv");
  }
  search_.draw(s_);
  draw_help_overlay(s_);
  if (auto r = dialog_.draw(!s_.empty())) handle_dialog_result(*r);
  if (load_ && draw_loading_panel(load_->progress(), loading_paths_)) load_->cancel();
  draw_notices(s_);
}

void ViewerApp::save_window_png(GlWindow& window) {
  s_.save_screenshot = false;
  const auto [w, h] = window.framebuffer_size();
  char name[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(name, sizeof name, "flopline-view-%Y%m%d-%H%M%S.png", std::localtime(&now));
  const std::string path = (std::filesystem::current_path() / name).string();
  const std::string err = write_png_rgba(path, w, h, read_back_buffer_rgba(w, h));
  s_.notices.push_back(err.empty()
                           ? Notice{.kind = Notice::Kind::kInfo, .text = "window saved as " + path}
                           : Notice{.kind = Notice::Kind::kError, .text = err});
}

int ViewerApp::run(GlWindow& window) {
  if (!options_.traces.empty()) start_load(options_.traces, false);
  FramePacer pacer;
  FramePacer::Decision next{.wait = FramePacer::Wait::kPoll, .timeout_s = 0};
  while (!window.should_close() && !quit_requested_) {
    switch (next.wait) {
      case FramePacer::Wait::kPoll:
        glfwPollEvents();
        break;
      case FramePacer::Wait::kWaitTimeout:
        glfwWaitEventsTimeout(next.timeout_s);
        break;
      case FramePacer::Wait::kWaitEvents:
        glfwWaitEvents();
        break;
    }
    pacer.observe_events(window.event_count());
    std::vector<std::string> dropped = window.take_dropped_files();
    if (!dropped.empty()) start_load(std::move(dropped), !s_.empty());
    const std::uint64_t generation = s_.generation;
    const bool was_busy = busy();
    window.begin_frame();
    frame();
    window.render_draw_data();
    if (s_.save_screenshot) save_window_png(window);
    window.present();
    write_state_dump_if_changed();
    // A load or a table that finished changes what is drawn without any input.
    if (generation != s_.generation || was_busy != busy()) pacer.request_frames();
    next = pacer.after_frame(busy());
  }
  return 0;
}

}  // namespace flopline::viewer
