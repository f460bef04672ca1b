// The viewer state as one line of JSON (see state_dump.h for the schema).
#include "core/state_dump.h"

#include <nlohmann/json.hpp>

#include <cmath>

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

Json opt_int(const std::optional<std::int64_t>& v) {
  return v ? Json(*v) : Json(nullptr);
}

Json ranks_json(const ViewerStateView& st) {
  if (st.ranks == nullptr || st.ranks->bars.empty()) return nullptr;
  const RankSummary& s = *st.ranks;
  Json bars = Json::array();
  for (const RankBar& b : s.bars) {
    const trace::DeviceBreakdown& d = b.breakdown;
    bars.push_back({{"trace", b.trace},
                    {"label", b.label},
                    {"rank", opt_int(b.rank)},
                    {"device", d.device},
                    {"window_ns", d.window_ns()},
                    {"compute_ns", d.compute_ns},
                    {"communication_ns", d.communication_ns},
                    {"memory_ns", d.memory_ns},
                    {"idle_ns", d.idle_ns},
                    {"shares",
                     {{"compute", b.shares.compute},
                      {"communication", b.shares.communication},
                      {"memory", b.shares.memory},
                      {"idle", b.shares.idle}}}});
  }
  Json waits = nullptr;
  if (s.waits) {
    Json ranks = Json::array();
    for (const RankWaitRow& r : s.wait_rows) {
      ranks.push_back({{"trace", r.trace},
                       {"rank", opt_int(r.waits.rank)},
                       {"matched", r.waits.matched},
                       {"kernel_ns", r.waits.kernel_ns},
                       {"wait_ns", r.waits.wait_ns},
                       {"last_arrivals", r.waits.last_arrivals},
                       {"waited_for", r.waited_for}});
    }
    waits = {{"collectives", s.waits->collectives},
             {"unmatched", s.waits->unmatched},
             {"waited_for_trace", s.waits->waited_for ? Json(*s.waits->waited_for) : Json(nullptr)},
             {"ranks", std::move(ranks)}};
  }
  Json longest = Json::array();
  for (const CollectiveWaitRow& c : s.longest) {
    longest.push_back({{"label", c.label},
                       {"longest_wait_ns", c.longest_wait_ns},
                       {"total_wait_ns", c.total_wait_ns},
                       {"longest_waiter", c.longest_waiter},
                       {"last_to_arrive", c.last_to_arrive},
                       {"begin_ns", c.begin_ns},
                       {"end_ns", c.end_ns}});
  }
  return {{"bars", std::move(bars)},
          {"waits", std::move(waits)},
          {"longest", std::move(longest)},
          {"shown", st.ranks_shown}};
}

Json diff_json(const ViewerStateView& st) {
  if (st.diff == nullptr) return nullptr;
  const DiffTable& d = *st.diff;
  auto side = [](const DiffSideSummary& s) {
    return Json{{"given", s.given}, {"files", s.files}, {"total_ns", s.total_ns}};
  };
  // Each row's cells by the CSV's ids (flopline/trace/diff_schema.h), null when unknown.
  Json rows = Json::array();
  for (const trace::DiffRow& r : d.rows) {
    Json row = Json::object();
    for (const trace::DiffColumn& c : trace::diff_columns()) {
      const trace::StatsValue v = c.value(r);
      Json& cell = row[c.id];
      if (v.kind == trace::StatsValue::Kind::kInt) cell = v.i;
      if (v.kind == trace::StatsValue::Kind::kNumber && std::isfinite(v.d)) cell = v.d;
      if (v.kind == trace::StatsValue::Kind::kText) cell = std::string(v.text);
    }
    rows.push_back(std::move(row));
  }
  return {{"by", d.by == trace::GroupBy::kName ? "name" : "op"},
          {"a", side(d.a)},
          {"b", side(d.b)},
          {"rows", std::move(rows)},
          {"shown", st.diff_shown}};
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
      {"counter_tracks", counter_tracks_json(traces, st)},
      {"ranks", ranks_json(st)},
      {"diff", diff_json(st)}};
  // Names come from traces and may hold invalid UTF-8: replaced, never thrown on.
  return doc.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace flopline::viewer
