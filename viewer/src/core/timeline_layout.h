// Vertical layout of the timeline: processes -> tracks -> rows, each with a y offset
// and height in px, built from one or more traces (one per file or rank).
//
// Order: traces in load order; in a trace, processes by (sort_index, pid) from the
// trace's process_sort_index metadata; in a process, CPU threads, then GPU streams,
// then async tracks, each by (sort_index, tid). Names come from process_name /
// thread_name metadata, with the pid/tid when no name was given. Each process of each
// trace is its own entry, so two files with the same pids stay apart.
//
// Every row of every track (nesting depths, then the model's overlap rows) gets a
// LayoutRow: no slice is left out of the layout. Every counter series gets a counter
// track of its own (a graph band under a header, no rows), first in its process, in the
// order of Trace::counters: GPU metrics sit right under their GPU's header. A process
// with counters and no slice tracks gets an entry too. Collapsing hides rows, never drops
// them from rows(). Tracks that hold no content start collapsed (folded to their
// header): no slices (only instants, like Kineto's "Iteration Start" on pid Traces),
// or only Kineto's bookkeeping (cat overhead: "Activity Buffer Request" on pid -1; cat
// Trace: the profiler's span on pid Spans); a process of such tracks only starts
// collapsed too.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/slice_handle.h"

namespace flopline::viewer {

struct LayoutParams {
  float process_header_px = 22;  // process title bar
  float track_header_px = 16;    // track title (thread or stream name)
  float row_px = 18;             // one slice row
  float counter_px = 34;         // the graph band of a counter track
  float row_gap_px = 1;          // between rows of one track
  float track_gap_px = 4;        // after each track
  float process_gap_px = 6;      // after each process
};

struct LayoutRow {
  std::uint32_t trace = 0;         // index into the TraceList
  std::uint32_t track = 0;         // index into that trace's tracks
  std::uint32_t row = 0;           // index into Track::rows
  std::uint32_t layout_track = 0;  // index into TimelineLayout::tracks()
  bool overlap_row = false;        // an extra row (overlapping, non-nesting slices)
  bool visible = true;             // false when its track or process is collapsed
  float y = 0;                     // top, px from the top of the timeline content (scrolling aside)
  float height = 0;                // px; 0 when hidden
};

struct LayoutTrack {
  std::uint32_t trace = 0;
  std::uint32_t track = 0;               // index into that trace's tracks; kNone for a counter
  std::uint32_t counter = trace::kNone;  // index into that trace's counters, for a counter track
  std::uint32_t layout_process = 0;      // index into TimelineLayout::processes()
  std::string name;                      // "thread 1262 (python)", "stream 7", ...
  trace::TrackKind kind = trace::TrackKind::kThread;
  std::uint32_t first_row = 0;  // its rows are rows()[first_row, first_row + row_count)
  std::uint32_t row_count = 0;
  std::uint64_t slice_count = 0;
  std::uint64_t point_count = 0;  // a counter track's points
  bool collapsed = false;
  bool visible = true;     // false when its process is collapsed
  float y = 0;             // top of the header
  float height = 0;        // header + rows (or graph) + gap; 0 when hidden
  float graph_y = 0;       // a counter track's graph band: top...
  float graph_height = 0;  // ...and height; 0 when hidden or collapsed
  bool is_counter() const { return counter != trace::kNone; }
};

struct LayoutProcess {
  std::uint32_t trace = 0;
  std::uint32_t process = 0;  // index into that trace's processes
  std::string name;  // "python (pid 1102)", "GPU 0 (pid 0)"; "[file] ..." with several traces
  bool is_gpu = false;
  std::uint32_t first_track = 0;  // tracks()[first_track, first_track + track_count)
  std::uint32_t track_count = 0;
  bool collapsed = false;
  float y = 0;
  float height = 0;  // header + tracks + gap
};

class TimelineLayout {
 public:
  TimelineLayout() = default;
  // labels: one per trace, used to prefix process names when there are several
  // traces (e.g. file names); may be empty.
  static TimelineLayout build(TraceList traces, std::span<const std::string> labels = {},
                              const LayoutParams& params = {});

  const std::vector<LayoutProcess>& processes() const { return processes_; }
  const std::vector<LayoutTrack>& tracks() const { return tracks_; }
  const std::vector<LayoutRow>& rows() const { return rows_; }
  const LayoutParams& params() const { return params_; }

  void set_process_collapsed(std::uint32_t layout_process, bool collapsed);
  void toggle_process(std::uint32_t layout_process);
  void set_track_collapsed(std::uint32_t layout_track, bool collapsed);
  void toggle_track(std::uint32_t layout_track);
  void collapse_all(bool collapsed);  // every process
  // Recomputes every y and height (the setters above call it).
  void recompute();

  float total_height() const { return total_height_; }
  // Indices into rows() of the visible rows intersecting [y0, y1), in y order: a
  // binary search, so off-screen tracks cost nothing per frame.
  std::span<const std::uint32_t> visible_rows_in(float y0, float y1) const;
  // The visible row whose band [y, y + height) holds y, or kNone.
  std::uint32_t row_at_y(float y) const;
  // The layout row of a slice's row (for selection highlight and flows), or kNone.
  std::uint32_t layout_row_of(std::uint32_t trace, std::uint32_t track, std::uint32_t row) const;
  // Slices over all rows laid out; equals the sum of the traces' slice_count().
  std::uint64_t slice_count() const;
  // Indices into tracks() of the counter tracks, in layout order.
  const std::vector<std::uint32_t>& counter_tracks() const { return counter_tracks_; }
  // The counter track whose shown graph band holds layout y, or kNone.
  std::uint32_t counter_track_at_y(float y) const;

 private:
  LayoutParams params_;
  std::vector<LayoutProcess> processes_;
  std::vector<LayoutTrack> tracks_;
  std::vector<LayoutRow> rows_;
  std::vector<std::uint32_t> visible_rows_;    // rows_ indices of visible rows, by y
  std::vector<std::uint32_t> counter_tracks_;  // tracks_ indices of counter tracks
  // Per trace, per track: the index of its LayoutTrack (for layout_row_of).
  std::vector<std::vector<std::uint32_t>> track_index_;
  float total_height_ = 0;
};

}  // namespace flopline::viewer
