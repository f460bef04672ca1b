#include "headless_modes.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "core/viewport.h"
#include "frame_stats.h"
#include "gl_includes.h"
#include "gl_window.h"
#include "offscreen_target.h"
#include "png_writer.h"
#include "viewer_app.h"

namespace flopline::viewer {
namespace {

// ImGui lays out auto-sized windows from the previous frame's sizes: a few frames
// settle them before the one captured.
constexpr int kSettleFrames = 4;

void print_error(const std::string& e) {
  std::fprintf(stderr, "flopline-view: %s\n", e.c_str());
}

// What the reader skipped or cut: the window shows it as notices; without a window the
// user must still hear of it.
void print_warnings(const AppState& s) {
  for (const Notice& n : s.notices) {
    if (n.kind == Notice::Kind::kWarning)
      std::fprintf(stderr, "flopline-view: warning: %s\n", n.text.c_str());
  }
}

std::unique_ptr<GlWindow> open_window(const AppOptions& o, bool visible, std::string& error) {
  auto w = GlWindow::create({.width = o.width,
                             .height = o.height,
                             .visible = visible,
                             .vsync = false,
                             .title = "flopline-view"},
                            error);
  if (w) w->set_headless(o.width, o.height);
  return w;
}

}  // namespace

int run_screenshot(const AppOptions& o) {
  std::string error;
  auto window = open_window(o, false, error);
  if (!window) {
    print_error(error);
    return 1;
  }
  OffscreenTarget target;
  error = target.create(o.width, o.height);
  if (!error.empty()) {
    print_error(error);
    return 1;
  }
  int rc = 0;
  ViewerApp app(o);
  for (const std::string& e : app.load_now(o.traces)) {
    print_error(e);
    rc = 1;
  }
  print_warnings(app.state());
  if (!app.state().empty()) {
    error = app.apply_view_options();
    if (!error.empty()) {
      print_error(error);
      rc = 1;
    }
  }
  if (o.window != ShotWindow::kTimeline || o.csv) app.table().build_now(app.state());
  target.bind();
  for (int i = 0; i < kSettleFrames; ++i) {
    window->begin_frame();
    app.frame();
    window->render_draw_data();
  }
  const std::vector<std::uint8_t> pixels = target.read_rgba();
  OffscreenTarget::unbind();
  error = write_png_rgba(*o.screenshot, o.width, o.height, pixels);
  if (!error.empty()) {
    print_error(error);
    return 1;
  }
  if (o.csv) {
    error = write_text_file(*o.csv, app.table().csv());
    if (!error.empty()) {
      print_error(error);
      rc = 1;
    }
  }
  if (o.dump_state) {
    error = write_text_file(*o.dump_state, app.state_dump() + "\n");
    if (!error.empty()) {
      print_error(error);
      rc = 1;
    }
  }
  return rc;
}

namespace {

using Clock = std::chrono::steady_clock;

struct Level {
  std::string phase;
  std::int64_t span_ns = 0;
  std::vector<double> ms;        // whole frame: UI, render, present, until shown
  std::vector<double> build_ms;  // building the UI (ImGui frame and the timeline's LOD pass)
  std::uint64_t max_items = 0;
};

class BenchDriver {
 public:
  BenchDriver(GlWindow& w, ViewerApp& app) : window_(w), app_(app) {}

  void frames(const std::string& phase, int n, bool record = true) {
    Level level{.phase = phase,
                .span_ns = app_.state().viewport.span_ns(),
                .ms = {},
                .build_ms = {},
                .max_items = 0};
    for (int i = 0; i < n; ++i) {
      const auto t0 = Clock::now();
      window_.begin_frame();
      app_.frame();
      window_.finish_ui();
      level.build_ms.push_back(
          std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      window_.end_frame(true);
      window_.wait_until_shown();  // llvmpipe's threads and the X server's copy count too
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      level.ms.push_back(ms);
      level.max_items = std::max(level.max_items, app_.state().visible_items);
      glfwPollEvents();
    }
    if (record) levels_.push_back(std::move(level));
  }
  const std::vector<Level>& levels() const { return levels_; }

 private:
  GlWindow& window_;
  ViewerApp& app_;
  std::vector<Level> levels_;
};

std::uint64_t file_bytes(const std::vector<std::string>& paths) {
  std::uint64_t n = 0;
  for (const auto& p : paths) {
    std::error_code ec;
    n += std::filesystem::file_size(p, ec);
  }
  return n;
}

}  // namespace

int run_bench(const AppOptions& o) {
  std::string error;
  auto window = open_window(o, true, error);
  if (!window) {
    print_error(error);
    return 1;
  }
  ViewerApp app(o);
  const std::uint64_t rss_empty = resident_bytes();  // window, GL driver, ImGui: no trace yet
  const auto t_load = Clock::now();
  double read_s = 0;
  const std::vector<std::string> errors = app.load_now(o.traces, &read_s);
  const double load_s = std::chrono::duration<double>(Clock::now() - t_load).count();
  for (const std::string& e : errors) print_error(e);
  print_warnings(app.state());
  if (!errors.empty() || app.state().empty()) return 1;
  AppState& s = app.state();
  std::uint64_t events = 0;
  for (const trace::Trace* t : s.traces) events += t->report.events_loaded;
  const std::uint64_t bytes = file_bytes(o.traces);
  std::printf("flopline-view --bench: %s, %dx%d, %s\n", o.traces.front().c_str(), o.width, o.height,
              gl_renderer_name().c_str());
  std::printf(
      "load: %.2f s for %.1f MB = %.1f MB/s: %llu events, %llu slices; load_files (reader, layout, "
      "flows) %.2f s = %.1f MB/s, then colours and legend %.2f s\n",
      load_s, static_cast<double>(bytes) / 1e6, static_cast<double>(bytes) / 1e6 / load_s,
      static_cast<unsigned long long>(events),
      static_cast<unsigned long long>(s.layout.slice_count()), read_s,
      static_cast<double>(bytes) / 1e6 / read_s, load_s - read_s);

  BenchDriver d(*window, app);
  d.frames("warm-up", 5, false);
  fit_selection_or_all(s);
  // Per zoom level: o.bench_frames (a level's p99 is its nearest-rank 99th percentile:
  // with fewer than 100 frames that is the level's slowest frame, which one scheduler
  // stall of the 2-vCPU test machine decides).
  const int per_level = o.bench_frames;
  d.frames("fit all", std::max(20, per_level));
  const float cx = s.viewport.x0_px + s.viewport.width_px * 0.5f;
  while (s.viewport.span_ns() > 1000) {
    s.viewport.zoom_around(2.0, cx);
    d.frames("zoom in", per_level);
  }
  for (int i = 0; i < 10; ++i) {
    s.viewport.pan_pixels(-s.viewport.width_px * 0.2f);
    d.frames("pan", std::max(4, per_level / 2));
  }
  const double extent = static_cast<double>(s.end_ns) - static_cast<double>(s.begin_ns);
  while (static_cast<double>(s.viewport.span_ns()) < extent) {
    const std::int64_t before = s.viewport.span_ns();
    s.viewport.zoom_around(0.5, cx);
    if (s.viewport.span_ns() == before) break;  // clamped
    d.frames("zoom out", per_level);
  }

  std::vector<double> all;
  double worst_p99 = 0;
  std::string worst;
  std::printf("%-9s %12s %7s %10s %10s %10s %9s %9s %9s\n", "phase", "view span", "frames",
              "median ms", "p99 ms", "max ms", "UI ms", "UI max", "items");
  for (const Level& l : d.levels()) {
    const FrameStats st = frame_stats(l.ms);
    const FrameStats ui = frame_stats(l.build_ms);
    std::printf("%-9s %12s %7zu %10.2f %10.2f %10.2f %9.2f %9.2f %9llu\n", l.phase.c_str(),
                format_duration(l.span_ns).c_str(), st.frames, st.median_ms, st.p99_ms, st.max_ms,
                ui.median_ms, ui.max_ms, static_cast<unsigned long long>(l.max_items));
    all.insert(all.end(), l.ms.begin(), l.ms.end());
    if (st.p99_ms > worst_p99) {
      worst_p99 = st.p99_ms;
      worst = l.phase + " at " + format_duration(l.span_ns);
    }
  }
  const FrameStats total = frame_stats(all);
  const std::uint64_t rss = resident_bytes();
  std::printf(
      "frames: %zu, median %.2f ms, p99 %.2f ms, max %.2f ms; worst level p99 %.2f ms (%s)\n",
      total.frames, total.median_ms, total.p99_ms, total.max_ms, worst_p99, worst.c_str());
  const double traced = static_cast<double>(rss > rss_empty ? rss - rss_empty : 0);
  std::printf(
      "resident memory (VmRSS): %.1f MB; %.1f MB before loading (window, GL, ImGui); the traces "
      "add "
      "%.1f bytes per event, %.1f per slice\n",
      static_cast<double>(rss) / 1e6, static_cast<double>(rss_empty) / 1e6,
      events ? traced / static_cast<double>(events) : 0.0,
      s.layout.slice_count() ? traced / static_cast<double>(s.layout.slice_count()) : 0.0);
  return 0;
}

}  // namespace flopline::viewer
