// The viewer state as one line of JSON (see state_dump.h for the schema).
#include "core/state_dump.h"

#include <nlohmann/json.hpp>

#include "core/counter_format.h"
#include "core/counter_lod.h"

namespace flopline::viewer {
namespace {

// Members in the order state_dump.h lists them.
using Json = nlohmann::ordered_json;

Json selection_json(TraceList traces, const Selection* sel) {
  if (sel == nullptr || !sel->slice.valid() || sel->slice.trace >= traces.size()) return nullptr;
  const SliceHandle& h = sel->slice;
  const trace::Slice& s = slice_of(traces, h);
  return {{"trace", h.trace},
          {"track", h.ref.track},
          {"row", h.ref.row},
          {"index", h.ref.index},
          {"name", traces[h.trace]->str(s.name)},
          {"start_ns", s.start},
          {"dur_ns", s.dur},
          {"flows", sel->flows.size()}};
}

Json collapsed_json(const TimelineLayout& layout) {
  Json names = Json::array();
  for (const LayoutProcess& p : layout.processes()) {
    if (p.collapsed) names.push_back(p.name);
  }
  for (const LayoutTrack& t : layout.tracks()) {
    if (t.collapsed) names.push_back(layout.processes()[t.layout_process].name + "/" + t.name);
  }
  return names;
}

Json counter_tracks_json(TraceList traces, const ViewerStateView& st) {
  const TimelineLayout& layout = *st.layout;
  Json out = Json::array();
  for (std::uint32_t k : layout.counter_tracks()) {
    const LayoutTrack& lt = layout.tracks()[k];
    if (lt.trace >= traces.size() || lt.counter >= traces[lt.trace]->counters.size()) continue;
    const auto& points = traces[lt.trace]->counters[lt.counter].points;
    // The dump is not drawn every frame: an index built here costs O(n) once.
    const CounterIndex index(points);
    const auto [first, last] =
        visible_points(points, st.viewport->t0_ns, st.viewport->t1_ns, st.end_ns);
    const ValueRange v = index.range(first, last);
    out.push_back({{"name", layout.processes()[lt.layout_process].name + "/" + lt.name},
                   {"unit", counter_unit(lt.name)},
                   {"points", lt.point_count},
                   {"shown", lt.graph_height > 0},
                   {"y", lt.graph_y},
                   {"height", lt.graph_height},
                   {"visible_points", last - first},
                   {"visible_min", v.empty ? Json(nullptr) : Json(v.min)},
                   {"visible_max", v.empty ? Json(nullptr) : Json(v.max)}});
  }
  return out;
}

}  // namespace

std::string dump_state_json(TraceList traces, const ViewerStateView& st) {
  const Viewport& vp = *st.viewport;
  const TimelineLayout& layout = *st.layout;
  const Selection* sel = st.selection;
  Json range = nullptr;
  if (sel != nullptr && sel->range) {
    range = {{"begin_ns", sel->range->begin_ns}, {"end_ns", sel->range->end_ns}};
  }
  Json highlighted = nullptr;
  if (sel != nullptr && sel->highlighted_name) highlighted = *sel->highlighted_name;
  const Json doc = {
      {"viewport",
       {{"t0_ns", vp.t0_ns},
        {"t1_ns", vp.t1_ns},
        {"x0_px", vp.x0_px},
        {"width_px", vp.width_px},
        {"origin_y_px", st.origin_y_px}}},
      {"selection", selection_json(traces, sel)},
      {"range", std::move(range)},
      {"highlighted", std::move(highlighted)},
      {"search",
       {{"query", st.search != nullptr ? st.search->query() : std::string()},
        {"matches", st.search != nullptr ? st.search->count() : std::size_t{0}}}},
      {"collapsed", collapsed_json(layout)},
      {"processes", layout.processes().size()},
      {"tracks", layout.tracks().size()},
      {"rows", layout.rows().size()},
      {"visible_items", st.visible_items},
      {"slices", layout.slice_count()},
      {"counter_items", st.counter_items},
      {"roofline_points", st.roofline_points ? Json(*st.roofline_points) : Json(nullptr)},
      {"counter_tracks", counter_tracks_json(traces, st)}};
  // Names come from traces and may hold invalid UTF-8: replaced, never thrown on.
  return doc.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace flopline::viewer
