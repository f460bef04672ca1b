// The flopline-view command line: traces to open and the headless modes
// (--screenshot, --bench, --dump-state). Parsing is separate from main() so it is
// unit-tested without a display.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli_parse.h"
#include "flopline/trace/analysis.h"

namespace flopline::viewer {

// Which window a screenshot shows in front.
enum class ShotWindow { kTimeline, kTable, kRoofline, kRanks, kDiff };

struct AppOptions {
  std::vector<std::string> traces;
  int width = 1600;  // window or screenshot size in pixels
  int height = 900;
  bool size_given = false;
  std::optional<std::string> screenshot;  // PNG path: render, write, exit
  ShotWindow window = ShotWindow::kTimeline;
  // --range T0:T1: times after the first event, as `flopline stats --range` reads them.
  std::optional<cli::RelativeRange> range;
  std::optional<std::string> select;      // slice name to select (the longest instance)
  std::optional<std::string> dump_state;  // state dump path (headless: written at exit;
                                          // interactive: written on every change)
  std::optional<std::string> csv;         // with --screenshot: also export the table as CSV
  // --by: the rows of the table and the points of the roofline, as `flopline stats --by`
  // (default: operators, or kernels when the traces have no operators).
  std::optional<trace::GroupBy> by;
  // --diff: the two traces (files or run directories) are runs A and B; a window shows
  // what changed (`flopline diff A B`'s rows), grouped by --by name (default) or op.
  bool diff = false;
  // With --diff, once main() has expanded directories: A and B as given, their files.
  std::string diff_a, diff_b;
  std::vector<std::string> diff_a_files, diff_b_files;
  bool bench = false;
  int bench_frames = 100;  // frames per zoom level (--bench-frames)
  bool bench_frames_given = false;
  bool help = false;
  bool version = false;
};

struct ParsedOptions {
  AppOptions options;
  std::string error;  // non-empty: what is wrong, for the user
  bool ok() const { return error.empty(); }
};

// `args` excludes the program name.
ParsedOptions parse_app_options(std::span<const std::string> args);

// Parses "WxH" with both sides in [64, 16384].
std::optional<std::pair<int, int>> parse_size(std::string_view text);

std::string app_usage();

}  // namespace flopline::viewer
