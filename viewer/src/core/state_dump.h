// A JSON dump of the viewer's state, for the end-to-end test that drives the real
// window (and for bug reports). One object on one line:
//   {"viewport":{"t0_ns":..,"t1_ns":..,"x0_px":..,"width_px":..,"origin_y_px":..},
//    "selection":{"trace":..,"track":..,"row":..,"index":..,"name":"..","start_ns":..,
//                 "dur_ns":..,"flows":N} | null,
//    "range":{"begin_ns":..,"end_ns":..} | null,
//    "highlighted":"name" | null,
//    "search":{"query":"..","matches":N},
//    "collapsed":["process name", "process name/track name", ...],
//    "processes":N,"tracks":N,"rows":N,"visible_items":N,"slices":N,
//    "counter_items":N,"roofline_points":N | null,
//    "counter_tracks":[{"name":"process name/track name","unit":"%","points":N,
//                       "shown":bool,"y":..,"height":..,"visible_points":N,
//                       "visible_min":x|null,"visible_max":x|null}, ...],
//    "ranks":{"bars":[{"trace":..,"label":"..","rank":N|null,"device":..,"window_ns":..,
//                      "compute_ns":..,"communication_ns":..,"memory_ns":..,"idle_ns":..,
//                      "shares":{"compute":x,"communication":x,"memory":x,"idle":x}}],
//             "waits":{"collectives":N,"unmatched":N,"waited_for_trace":N|null,
//                      "ranks":[{"trace":..,"rank":N|null,"matched":N,"kernel_ns":..,
//                                "wait_ns":..,"last_arrivals":N,"waited_for":bool}]} | null,
//             "longest":[{"label":"..","longest_wait_ns":..,"total_wait_ns":..,
//                         "longest_waiter":trace,"last_to_arrive":trace,"begin_ns":..,
//                         "end_ns":..}],
//             "shown":bool} | null,
//    "diff":{"by":"name"|"op","a":{"given":"..","files":N,"total_ns":..},"b":{...},
//            "rows":[{the `flopline diff --csv` columns by id: "name":"..","change":"..",
//                     "a_count":N|null,...; null when unknown}],
//            "shown":[row index, ...]} | null}
// "ranks" is the rank summary (core/rank_summary.h; null without one), "shown" whether
// its window is open. "diff" is the diff window's table (core/diff_table.h) with its
// rows in trace::diff_rows' order, and "shown" the rows the window lists, in its order.
// A layout y (rows, counter bands) plus origin_y_px is a window y. A counter track's y
// and height are its graph band's; visible_* cover the points in effect in the viewport
// (counter_lod.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/diff_table.h"
#include "core/rank_summary.h"
#include "core/search.h"
#include "core/selection.h"
#include "core/timeline_layout.h"
#include "core/viewport.h"

namespace flopline::viewer {

struct ViewerStateView {
  const Viewport* viewport = nullptr;      // required
  const TimelineLayout* layout = nullptr;  // required
  const Selection* selection = nullptr;    // optional
  const SliceSearch* search = nullptr;     // optional
  std::uint64_t visible_items = 0;         // items drawn in the last frame
  std::uint64_t counter_items = 0;         // counter items drawn in the last frame
  std::int64_t end_ns = 0;                 // where the last step of each series ends
  float origin_y_px = 0;                   // window y of the layout's y = 0 (scroll applied)
  std::optional<std::size_t> roofline_points =
      std::nullopt;                          // points the roofline plots, once built
  const RankSummary* ranks = nullptr;        // optional
  bool ranks_shown = false;                  // its window is open
  const DiffTable* diff = nullptr;           // optional: only with a diff open
  std::vector<std::size_t> diff_shown = {};  // the diff window's rows, in its order
};

std::string dump_state_json(TraceList traces, const ViewerStateView& state);

}  // namespace flopline::viewer
