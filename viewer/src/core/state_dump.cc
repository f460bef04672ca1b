// The viewer state as one line of JSON (see state_dump.h for the schema).
#include "core/state_dump.h"

#include "flopline/trace/json_text.h"

namespace flopline::viewer {
namespace {

using trace::append_int;
using trace::append_json_string;

void key(std::string& out, std::string_view k) {
  append_json_string(out, k);
  out += ':';
}

}  // namespace

std::string dump_state_json(TraceList traces, const ViewerStateView& st) {
  std::string o = "{";
  const Viewport& vp = *st.viewport;
  const TimelineLayout& L = *st.layout;
  key(o, "viewport");
  o += '{';
  key(o, "t0_ns");
  append_int(o, vp.t0_ns);
  o += ',';
  key(o, "t1_ns");
  append_int(o, vp.t1_ns);
  o += ',';
  key(o, "x0_px");
  trace::append_double(o, vp.x0_px);
  o += ',';
  key(o, "width_px");
  trace::append_double(o, vp.width_px);
  o += "},";

  key(o, "selection");
  const Selection* sel = st.selection;
  if (sel != nullptr && sel->slice.valid() && sel->slice.trace < traces.size()) {
    const SliceHandle& h = sel->slice;
    const trace::Slice& s = slice_of(traces, h);
    o += '{';
    key(o, "trace");
    append_int(o, h.trace);
    o += ',';
    key(o, "track");
    append_int(o, h.ref.track);
    o += ',';
    key(o, "row");
    append_int(o, h.ref.row);
    o += ',';
    key(o, "index");
    append_int(o, h.ref.index);
    o += ',';
    key(o, "name");
    append_json_string(o, traces[h.trace]->str(s.name));
    o += ',';
    key(o, "start_ns");
    append_int(o, s.start);
    o += ',';
    key(o, "dur_ns");
    append_int(o, s.dur);
    o += ',';
    key(o, "flows");
    append_int(o, static_cast<std::int64_t>(sel->flows.size()));
    o += '}';
  } else {
    o += "null";
  }
  o += ',';
  key(o, "range");
  if (sel != nullptr && sel->range) {
    o += '{';
    key(o, "begin_ns");
    append_int(o, sel->range->begin_ns);
    o += ',';
    key(o, "end_ns");
    append_int(o, sel->range->end_ns);
    o += '}';
  } else {
    o += "null";
  }
  o += ',';
  key(o, "highlighted");
  if (sel != nullptr && sel->highlighted_name) {
    append_json_string(o, *sel->highlighted_name);
  } else {
    o += "null";
  }
  o += ',';
  key(o, "search");
  o += '{';
  key(o, "query");
  append_json_string(o, st.search != nullptr ? st.search->query() : std::string());
  o += ',';
  key(o, "matches");
  append_int(o, st.search != nullptr ? static_cast<std::int64_t>(st.search->count()) : 0);
  o += "},";

  key(o, "collapsed");
  o += '[';
  bool first = true;
  auto add = [&](const std::string& name) {
    if (!first) o += ',';
    first = false;
    append_json_string(o, name);
  };
  for (const LayoutProcess& p : L.processes()) {
    if (p.collapsed) add(p.name);
  }
  for (const LayoutTrack& t : L.tracks()) {
    if (t.collapsed) add(L.processes()[t.layout_process].name + "/" + t.name);
  }
  o += "],";
  key(o, "processes");
  append_int(o, static_cast<std::int64_t>(L.processes().size()));
  o += ',';
  key(o, "tracks");
  append_int(o, static_cast<std::int64_t>(L.tracks().size()));
  o += ',';
  key(o, "rows");
  append_int(o, static_cast<std::int64_t>(L.rows().size()));
  o += ',';
  key(o, "visible_items");
  append_int(o, static_cast<std::int64_t>(st.visible_items));
  o += ',';
  key(o, "slices");
  append_int(o, static_cast<std::int64_t>(L.slice_count()));
  o += '}';
  return o;
}

}  // namespace flopline::viewer
