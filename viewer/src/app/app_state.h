// What the viewer's windows share: the loaded traces and what is derived from them
// (layout, flows, colours), the view (viewport, vertical scroll), the selection, the
// search, and which windows are open. Windows read and change it; none owns it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/colors.h"
#include "core/counter_lod.h"
#include "core/diff_table.h"
#include "core/flows.h"
#include "core/load_job.h"
#include "core/lod.h"
#include "core/op_table.h"
#include "core/rank_summary.h"
#include "core/search.h"
#include "core/selection.h"
#include "core/timeline_layout.h"
#include "core/viewport.h"

namespace flopline::viewer {

// Messages for the user: reader errors (file, position, reason) and warnings.
struct Notice {
  enum class Kind { kError, kWarning, kInfo };
  Kind kind = Kind::kError;
  std::string text;
};

// The args text of one slice, read once (for .json.gz files reading costs inflating).
struct CachedArgs {
  SliceHandle slice;
  std::uint64_t generation = 0;
  std::string json;
};

// Mouse interaction of the timeline that spans frames.
struct TimelineUi {
  bool dragging = false;    // left button went down on the tracks
  bool drag_moved = false;  // ...and moved more than a few px: a pan, not a click
  float press_x = 0, press_y = 0;
  bool ruler_dragging = false;
  std::int64_t ruler_anchor_ns = 0;
  float tracks_height = 0;      // visible height of the tracks area, px
  float origin_y = 0;           // screen y of layout y = 0 (scroll applied), px
  float cursor_x = -1;          // mouse x over the timeline, -1 when elsewhere
  std::vector<DrawItem> items;  // scratch for the LOD pass, reused so frames do not allocate
  std::vector<CounterItem> counter_items;  // the same for counter tracks
};

struct AppState {
  // --- the traces -------------------------------------------------------------
  std::vector<std::unique_ptr<LoadedFile>> files;
  std::vector<const trace::Trace*> traces;  // files' traces, the TraceList every core call takes
  std::vector<const trace::OperatorIndex*> operators;  // files' operator indices, same order
  TimelineLayout layout;
  FlowIndex flows;
  std::vector<ColorTable> colors;  // one per trace
  ColorBy color_by = ColorBy::kName;
  std::vector<LegendEntry> legend;
  std::vector<std::string> legend_labels;  // legend[i]'s shortened name, distinct per name
  std::int64_t begin_ns = 0;               // time bounds over all traces; the ruler's zero
  std::int64_t end_ns = 0;
  RankSummary rank_summary;       // per rank and GPU: breakdown, waits (the load's)
  std::optional<DiffTable> diff;  // run A against run B, when opened with --diff
  std::uint64_t generation = 0;   // increases whenever the set of traces changes

  // --- the view ---------------------------------------------------------------
  Viewport viewport;
  float scroll_y = 0;              // px of timeline content scrolled off the top
  std::optional<float> scroll_to;  // a scroll the timeline applies on its next frame
  bool fit_pending = false;        // fit the view to begin/end once the area is known
  TimelineUi ui;
  std::uint64_t visible_items = 0;  // draw items in the last frame (state dump, bench)
  std::uint64_t counter_items = 0;  // counter track items in the last frame

  // --- selection, search ------------------------------------------------------
  Selection selection;
  SliceSearch search;
  std::optional<std::size_t> search_cursor;  // index into search.matches()
  // Per trace, the StringId of selection.highlighted_name (kNone when absent).
  std::vector<trace::StringId> highlight_ids;

  // --- windows ----------------------------------------------------------------
  bool show_table = false;
  bool show_roofline = false;
  bool show_help = false;
  bool show_legend = true;
  bool show_search = false;
  bool focus_search = false;  // put the keyboard in the search field next frame
  // ImGui frame in which the search field last held (or was about to take) the keyboard.
  // Enter makes ImGui 1.86 let go of the field for a frame or two before we refocus it;
  // keys in that gap still belong to the field, not to the timeline.
  int search_field_frame = -1000;
  bool show_open_dialog = false;
  bool table_to_front = false;  // headless --window table: table fills the window
  bool roofline_to_front = false;
  bool show_ranks = false;  // the rank summary
  bool ranks_to_front = false;
  bool show_diff = false;
  bool diff_to_front = false;
  // The diff window's filter and order (the state dump lists its rows in that order).
  std::string diff_filter;
  const trace::DiffColumn* diff_sort = trace::find_diff_column("delta_ns");
  bool diff_descending = true;
  // A grouping for the table, asked for by the roofline (its points are the table's
  // rows) or by --by.
  std::optional<trace::GroupBy> table_by_request;
  std::vector<Notice> notices;
  bool show_notices = false;     // warnings and notes are shown when asked for
  bool save_screenshot = false;  // F12: write the window as a PNG after this frame

  CachedArgs hover_args;
  CachedArgs selected_args;

  // Short display names of long kernel names, per (trace, name id).
  std::unordered_map<std::uint64_t, std::string> short_names;

  TraceList trace_list() const { return traces; }
  bool empty() const { return files.empty(); }
};

// Replaces the traces with those of a finished load (its errors and warnings become
// notices). When nothing loaded, what was open stays.
void adopt_load_result(AppState& s, LoadResult&& result);
// Drops every trace and everything derived.
void close_all(AppState& s);
// Rebuilds the colour legend after the traces or the colour rule changed.
void rebuild_legend(AppState& s);

// Selects a slice (loading its flows) and makes it visible: vertical scroll, and the
// view moves to it when it is off screen. `fit`: zoom to it as well.
void select_slice(AppState& s, const SliceHandle& h, bool fit);
// Sets or clears the highlighted name (table row click) and its per-trace ids.
void set_highlight(AppState& s, std::optional<std::string> name);
// A table row (or roofline point) was clicked: lights every instance of `name` under
// `query`'s grouping and jumps to the longest, with context on both sides.
void highlight_and_jump(AppState& s, const OpTableQuery& query, const std::string& name);
// A click in the rank summary: fits the view to the target, selects its slice, and opens
// and scrolls to its process.
void jump_to(AppState& s, const JumpTarget& target);
// Fits the view to the selected slice, or to the whole trace when nothing is selected.
void fit_selection_or_all(AppState& s);
// Scrolls vertically so the layout row `layout_row` is on screen (next frame).
void scroll_to_row(AppState& s, std::uint32_t layout_row, float view_height);

// The longest slice named exactly `name` over all traces (first of equals), or an
// invalid handle. For --select.
SliceHandle longest_slice_named(TraceList traces, std::string_view name);

// The args JSON of `h`, from `cache` when it already holds them.
const std::string& args_of(AppState& s, CachedArgs& cache, const SliceHandle& h);

// The name of a slice for display: long C++ kernel names shortened, cached.
const std::string& display_name(AppState& s, std::uint32_t trace, trace::StringId name);

}  // namespace flopline::viewer
