#include "app_options.h"

#include <charconv>
#include <cstdint>

#include "flopline/trace/stats_schema.h"

namespace flopline::viewer {
namespace {

constexpr cli::OptionSpec kSpecs[] = {
    {.name = "--help", .takes_value = false, .alias = "-h"},
    {.name = "--version", .takes_value = false, .alias = {}},
    {.name = "--screenshot", .takes_value = true, .alias = {}},
    {.name = "--size", .takes_value = true, .alias = {}},
    {.name = "--range", .takes_value = true, .alias = {}},
    {.name = "--select", .takes_value = true, .alias = {}},
    {.name = "--window", .takes_value = true, .alias = {}},
    {.name = "--csv", .takes_value = true, .alias = {}},
    {.name = "--by", .takes_value = true, .alias = {}},
    {.name = "--dump-state", .takes_value = true, .alias = {}},
    {.name = "--diff", .takes_value = false, .alias = {}},
    {.name = "--bench", .takes_value = false, .alias = {}},
    {.name = "--bench-frames", .takes_value = true, .alias = {}},
};

constexpr std::int64_t kMaxSizePixels = 8192LL * 8192;

std::optional<int> parse_dimension(std::string_view text) {
  int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  if (v < 64 || v > 16384) return std::nullopt;
  return v;
}

}  // namespace

std::optional<std::pair<int, int>> parse_size(std::string_view text) {
  const auto x = text.find('x');
  if (x == std::string_view::npos) return std::nullopt;
  const auto w = parse_dimension(text.substr(0, x));
  const auto h = parse_dimension(text.substr(x + 1));
  if (!w || !h) return std::nullopt;
  // The picture is held several times over (GL framebuffer, read-back, PNG rows): at
  // 16384x16384 that was 4.3 GB for one event. 8192x8192 pixels at most, any shape.
  if (static_cast<std::int64_t>(*w) * *h > kMaxSizePixels) return std::nullopt;
  return std::pair{*w, *h};
}

ParsedOptions parse_app_options(std::span<const std::string> args) {
  ParsedOptions r;
  auto split = cli::split_args(args, kSpecs);
  if (!split.ok()) {
    r.error = split.error;
    return r;
  }
  AppOptions& o = r.options;
  o.traces = split.value->positional;
  for (const auto& [name, value] : split.value->options) {
    if (name == "--help") {
      o.help = true;
    } else if (name == "--version") {
      o.version = true;
    } else if (name == "--screenshot") {
      o.screenshot = value;
    } else if (name == "--size") {
      const auto s = parse_size(value);
      if (!s) {
        r.error = cli::concat("--size '", value,
                              "' is not WxH with sides from 64 to 16384 and at most 8192x8192 "
                              "pixels in all (e.g. 1600x900)");
        return r;
      }
      o.width = s->first;
      o.height = s->second;
      o.size_given = true;
    } else if (name == "--range") {
      auto range = cli::parse_range(value, "--range");
      if (!range.ok()) {
        r.error = range.error;
        return r;
      }
      o.range = *range.value;
    } else if (name == "--select") {
      if (value.empty()) {
        r.error = "--select needs a slice name";
        return r;
      }
      o.select = value;
    } else if (name == "--window") {
      if (value == "timeline") {
        o.window = ShotWindow::kTimeline;
      } else if (value == "table") {
        o.window = ShotWindow::kTable;
      } else if (value == "roofline") {
        o.window = ShotWindow::kRoofline;
      } else if (value == "ranks") {
        o.window = ShotWindow::kRanks;
      } else if (value == "diff") {
        o.window = ShotWindow::kDiff;
      } else {
        r.error = cli::concat("--window '", value,
                              "' is not one of timeline, table, roofline, ranks, diff");
        return r;
      }
    } else if (name == "--csv") {
      o.csv = value;
    } else if (name == "--by") {
      const trace::GroupingMatch m = trace::find_stats_grouping(value);
      if (m.grouping == nullptr) {
        r.error = m.error;
        return r;
      }
      o.by = m.grouping->by;
    } else if (name == "--dump-state") {
      o.dump_state = value;
    } else if (name == "--diff") {
      o.diff = true;
    } else if (name == "--bench") {
      o.bench = true;
    } else if (name == "--bench-frames") {
      int v = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
      if (ec != std::errc() || end != value.data() + value.size() || v < 1 || v > 10000) {
        r.error =
            cli::concat("--bench-frames '", value, "' is not a number of frames from 1 to 10000");
        return r;
      }
      o.bench_frames = v;
      o.bench_frames_given = true;
    }
  }
  if (o.help || o.version) return r;
  if (o.bench && o.screenshot) {
    r.error = "--bench and --screenshot cannot be used together";
  } else if (o.bench && o.traces.empty()) {
    r.error = "--bench needs a trace to open";
  } else if (o.bench_frames_given && !o.bench) {
    r.error = "--bench-frames goes with --bench";
  } else if (o.csv && !o.screenshot) {
    r.error = "--csv is written with --screenshot (use the table window's Export button otherwise)";
  } else if (o.diff && o.traces.size() != 2) {
    r.error = cli::concat("--diff compares two runs, A and B (files or run directories), got ",
                          std::to_string(o.traces.size()));
  } else if (o.diff && o.by && *o.by != trace::GroupBy::kName &&
             *o.by != trace::GroupBy::kOperator) {
    r.error = cli::concat("--diff compares kernels (--by name) or operators (--by op), not ",
                          trace::stats_grouping(*o.by).label);
  } else if (o.window == ShotWindow::kDiff && !o.diff) {
    r.error = "--window diff needs --diff A B";
  }
  return r;
}

std::string app_usage() {
  return R"(usage: flopline-view [TRACE...] [options]
       flopline-view --diff A B [options]

Opens Chrome/Kineto trace files (.json or .json.gz; several files are shown as
separate processes; a directory stands for the traces in it) in a timeline with
FLOP/s tables and a roofline; with several ranks or GPUs, a rank summary (time
breakdown per GPU, waits at collectives).

options:
  --screenshot OUT.png   render once the traces are loaded, write a PNG, exit
  --size WxH             window or screenshot size in pixels (default 1600x900; sides
                         64..16384, at most 8192x8192 pixels in all)
  --range T0:T1          show this time range: times after the first event, with
                         units ns (default), us, ms, s; either side may be empty
  --select NAME          select the longest slice named NAME
  --window W             bring W to the front: timeline (default), table, roofline,
                         ranks (the rank summary), diff (with --diff)
  --diff                 the two traces given are runs A and B (each a file or a run
                         directory): a window lists what changed, as 'flopline diff A B'
                         (kernels by name; operators with --by op)
  --csv OUT.csv          with --screenshot: also write the FLOP/s table as CSV
  --by GROUPING          rows of the table and points of the roofline, as for
                         'flopline stats --by': )" +
         trace::stats_grouping_names() + R"( (default:
                         operators, or names when the traces have none)
  --dump-state OUT.json  write the viewer state as JSON (headless: at exit;
                         interactive: whenever it changes)
  --bench                scripted fit / zoom to 1 us / pan / zoom out; prints frame
                         time median and p99 and the resident memory, then exits
  --bench-frames N       frames per zoom level of --bench (default 100: a level's
                         p99 is its 99th-slowest frame, not its slowest)
  -h, --help             this text
  --version              the version

keys: wheel zoom, W/S zoom, A/D pan, drag pan, F fit, Esc clear, / or Ctrl+F search,
      T table, R roofline, G rank summary, X diff, Ctrl+O open, ? or F1 help
)";
}

}  // namespace flopline::viewer
