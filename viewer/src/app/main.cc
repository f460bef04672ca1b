// flopline-view: parses the command line, checks the trace files exist, and runs the
// interactive viewer or one of the headless modes.
#include <cstdio>
#include <filesystem>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "app_options.h"
#include "flopline/trace/atomic_file.h"
#include "flopline/trace/trace_paths.h"
#include "gl_window.h"
#include "headless_modes.h"
#include "viewer_app.h"

#ifndef FLOPLINE_VERSION
#define FLOPLINE_VERSION "unknown"
#endif

namespace {

int run(int argc, char** argv) {
  using namespace flopline::viewer;
  const std::vector<std::string> args(argv + 1, argv + argc);
  const ParsedOptions parsed = parse_app_options(args);
  if (!parsed.ok()) {
    std::fprintf(stderr, "flopline-view: %s\nRun 'flopline-view --help' for usage.\n",
                 parsed.error.c_str());
    return 2;
  }
  AppOptions o = parsed.options;
  if (o.help) {
    std::fputs(app_usage().c_str(), stdout);
    return 0;
  }
  if (o.version) {
    std::printf("flopline-view %s\n", FLOPLINE_VERSION);
    return 0;
  }
  // A directory stands for the traces in it (every file of one `flopline run`); with
  // --diff, each side on its own, so that the load knows which files are run A's.
  if (o.diff) {
    o.diff_a = o.traces[0];
    o.diff_b = o.traces[1];
    for (std::size_t side = 0; side < 2; ++side) {
      std::string dir_error;
      std::vector<std::string>& files = side == 0 ? o.diff_a_files : o.diff_b_files;
      files = flopline::trace::expand_trace_paths({o.traces[side]}, &dir_error);
      if (files.empty()) {
        std::fprintf(stderr, "flopline-view: %s\n", dir_error.c_str());
        return 1;
      }
    }
    o.traces = o.diff_a_files;
    o.traces.insert(o.traces.end(), o.diff_b_files.begin(), o.diff_b_files.end());
  } else if (!o.traces.empty()) {
    std::string dir_error;
    o.traces = flopline::trace::expand_trace_paths(o.traces, &dir_error);
    if (o.traces.empty()) {
      std::fprintf(stderr, "flopline-view: %s\n", dir_error.c_str());
      return 1;
    }
  }
  // A missing file is a usage error before any window opens; an unreadable one is
  // reported by the reader (in the window, or on stderr in the headless modes).
  for (const std::string& path : o.traces) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
      std::fprintf(stderr, "flopline-view: %s: %s\n", path.c_str(),
                   std::filesystem::exists(path, ec) ? "not a regular file" : "no such file");
      return 1;
    }
  }
  // Outputs are checked before loading and rendering, so a bad name fails at once.
  for (const std::optional<std::string>* out : {&o.screenshot, &o.csv}) {
    if (!*out) continue;
    if (const std::string problem = flopline::trace::output_path_problem(**out); !problem.empty()) {
      std::fprintf(stderr, "flopline-view: cannot write %s\n", problem.c_str());
      return 1;
    }
  }
  if (o.screenshot) return run_screenshot(o);
  if (o.bench) return run_bench(o);

  std::string error;
  auto window = GlWindow::create({.width = o.width,
                                  .height = o.height,
                                  .visible = true,
                                  .vsync = true,
                                  .title = "flopline-view"},
                                 error);
  if (!window) {
    std::fprintf(stderr, "flopline-view: %s\n", error.c_str());
    return 1;
  }
  ViewerApp app(o);
  return app.run(*window);
}

}  // namespace

int main(int argc, char** argv) {
  // Running out of memory is a message and exit status 1, not an abort: the reader and
  // the loading thread report it with the file; this catches what is left.
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "flopline-view: out of memory\n");
  }
  return 1;
}
