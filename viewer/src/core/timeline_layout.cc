// Builds the process -> track -> row layout and recomputes y offsets after collapses.
#include "core/timeline_layout.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <tuple>

#include "core/counter_format.h"

namespace flopline::viewer {
namespace {

using trace::Process;
using trace::Track;
using trace::TrackKind;

std::string id_text(std::int64_t id, trace::StringId label, const trace::Trace& t) {
  if (label != 0) return std::string(t.str(label));
  return std::to_string(id);
}

std::string process_name(const trace::Trace& t, const Process& p) {
  std::string name(t.str(p.name));
  if (name.empty())
    name = p.is_gpu && p.device >= 0 ? "GPU " + std::to_string(p.device) : "process";
  const std::string_view labels = t.str(p.labels);
  if (!labels.empty() && labels != name) name += " [" + std::string(labels) + "]";
  name += " (pid " + id_text(p.pid, p.pid_label, t) + ")";
  return name;
}

std::string track_name(const trace::Trace& t, const Track& k) {
  const std::string_view given = t.str(k.name);
  if (k.kind == TrackKind::kAsync) return "async " + std::string(given.empty() ? "spans" : given);
  if (!given.empty()) return std::string(given);
  const std::string id = id_text(k.tid, k.tid_label, t);
  // A tid written as text that is already a name ("stream 7" in old Kineto traces).
  const char c0 = id.empty() ? '\0' : id[0];
  if ((c0 >= 'a' && c0 <= 'z') || (c0 >= 'A' && c0 <= 'Z')) return id;
  return (k.kind == TrackKind::kGpuStream ? "stream " : "thread ") + id;
}

// Kineto's own bookkeeping: "Activity Buffer Request" (cat overhead, pid -1) and the
// profiler's span ("PyTorch Profiler (0)", cat Trace, pid Spans).
bool is_bookkeeping(std::string_view cat) {
  return cat == "overhead" || cat == "Trace";
}

// A track that shows nothing worth a row by default: no slices (only instants, as
// Kineto's "Iteration Start" on pid Traces) or only profiler bookkeeping.
bool holds_content(const trace::Trace& t, const Track& k) {
  for (const auto& row : k.rows) {
    for (const trace::Slice& s : row) {
      if (!is_bookkeeping(t.str(s.cat))) return true;
    }
  }
  return false;
}

int kind_order(TrackKind k) {
  switch (k) {
    case TrackKind::kThread:
      return 0;
    case TrackKind::kGpuStream:
      return 1;
    case TrackKind::kAsync:
      return 2;
  }
  return 3;
}

}  // namespace

TimelineLayout TimelineLayout::build(TraceList traces, std::span<const std::string> labels,
                                     const LayoutParams& params) {
  TimelineLayout L;
  L.params_ = params;
  L.track_index_.resize(traces.size());
  const bool prefix = traces.size() > 1;
  for (std::uint32_t ti = 0; ti < traces.size(); ++ti) {
    const trace::Trace& t = *traces[ti];
    L.track_index_[ti].assign(t.tracks.size(), trace::kNone);
    // Tracks of each process, so processes are walked once.
    std::vector<std::vector<std::uint32_t>> tracks_of(t.processes.size());
    for (std::uint32_t k = 0; k < t.tracks.size(); ++k) {
      const Track& tr = t.tracks[k];
      if (tr.process < t.processes.size()) tracks_of[tr.process].push_back(k);
    }
    std::vector<std::vector<std::uint32_t>> counters_of(t.processes.size());
    for (std::uint32_t c = 0; c < t.counters.size(); ++c) {
      if (t.counters[c].process < t.processes.size())
        counters_of[t.counters[c].process].push_back(c);
    }
    std::vector<std::uint32_t> order(t.processes.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      const Process& pa = t.processes[a];
      const Process& pb = t.processes[b];
      return std::tie(pa.sort_index, pa.pid) < std::tie(pb.sort_index, pb.pid);
    });
    for (std::uint32_t pi : order) {
      auto& ks = tracks_of[pi];
      if (ks.empty() && counters_of[pi].empty()) continue;  // a process with only metadata
      std::stable_sort(ks.begin(), ks.end(), [&](std::uint32_t a, std::uint32_t b) {
        const Track& x = t.tracks[a];
        const Track& y = t.tracks[b];
        return std::make_tuple(kind_order(x.kind), x.sort_index, x.tid) <
               std::make_tuple(kind_order(y.kind), y.sort_index, y.tid);
      });
      LayoutProcess lp;
      lp.trace = ti;
      lp.process = pi;
      lp.name = process_name(t, t.processes[pi]);
      if (prefix) {
        const std::string label =
            ti < labels.size() ? labels[ti] : "trace " + std::to_string(ti + 1);
        lp.name = label + ": " + lp.name;
      }
      lp.is_gpu = t.processes[pi].is_gpu;
      lp.first_track = static_cast<std::uint32_t>(L.tracks_.size());
      lp.collapsed = counters_of[pi].empty();  // folded unless a track holds content
      for (std::uint32_t c : counters_of[pi]) {
        const trace::CounterSeries& series = t.counters[c];
        LayoutTrack lt;
        lt.trace = ti;
        lt.track = trace::kNone;
        lt.counter = c;
        lt.layout_process = static_cast<std::uint32_t>(L.processes_.size());
        lt.name = counter_track_name(t.str(series.name), t.str(series.key));
        lt.first_row = static_cast<std::uint32_t>(L.rows_.size());
        lt.point_count = series.points.size();
        L.counter_tracks_.push_back(static_cast<std::uint32_t>(L.tracks_.size()));
        L.tracks_.push_back(std::move(lt));
      }
      for (std::uint32_t k : ks) {
        const Track& tr = t.tracks[k];
        LayoutTrack lt;
        lt.trace = ti;
        lt.track = k;
        lt.layout_process = static_cast<std::uint32_t>(L.processes_.size());
        lt.name = track_name(t, tr);
        lt.kind = tr.kind;
        lt.first_row = static_cast<std::uint32_t>(L.rows_.size());
        lt.row_count = static_cast<std::uint32_t>(tr.rows.size());
        lt.slice_count = tr.slice_count();
        lt.collapsed = !holds_content(t, tr);
        lp.collapsed = lp.collapsed && lt.collapsed;
        L.track_index_[ti][k] = static_cast<std::uint32_t>(L.tracks_.size());
        for (std::uint32_t r = 0; r < tr.rows.size(); ++r) {
          LayoutRow row;
          row.trace = ti;
          row.track = k;
          row.row = r;
          row.layout_track = static_cast<std::uint32_t>(L.tracks_.size());
          row.overlap_row = r >= tr.nesting_rows;
          L.rows_.push_back(row);
        }
        L.tracks_.push_back(std::move(lt));
      }
      lp.track_count = static_cast<std::uint32_t>(L.tracks_.size()) - lp.first_track;
      L.processes_.push_back(std::move(lp));
    }
  }
  L.recompute();
  return L;
}

void TimelineLayout::recompute() {
  const LayoutParams& p = params_;
  float y = 0;
  visible_rows_.clear();
  for (LayoutProcess& lp : processes_) {
    lp.y = y;
    y += p.process_header_px;
    for (std::uint32_t k = lp.first_track; k < lp.first_track + lp.track_count; ++k) {
      LayoutTrack& lt = tracks_[k];
      lt.visible = !lp.collapsed;
      lt.y = y;
      if (!lt.visible) {
        lt.height = 0;
      } else {
        y += p.track_header_px;
      }
      const bool rows_shown = lt.visible && !lt.collapsed;
      lt.graph_y = y;
      lt.graph_height = 0;
      if (lt.is_counter() && rows_shown) {
        lt.graph_height = p.counter_px;
        y += p.counter_px;
      }
      for (std::uint32_t r = lt.first_row; r < lt.first_row + lt.row_count; ++r) {
        LayoutRow& row = rows_[r];
        row.visible = rows_shown;
        row.y = y;
        row.height = rows_shown ? p.row_px : 0;
        if (rows_shown) {
          visible_rows_.push_back(r);
          y += p.row_px + p.row_gap_px;
        }
      }
      if (lt.visible) {
        y += p.track_gap_px;
        lt.height = y - lt.y;
      }
    }
    y += p.process_gap_px;
    lp.height = y - lp.y;
  }
  total_height_ = y;
}

void TimelineLayout::set_process_collapsed(std::uint32_t i, bool collapsed) {
  if (i >= processes_.size()) return;
  processes_[i].collapsed = collapsed;
  recompute();
}

void TimelineLayout::toggle_process(std::uint32_t i) {
  if (i < processes_.size()) set_process_collapsed(i, !processes_[i].collapsed);
}

void TimelineLayout::set_track_collapsed(std::uint32_t i, bool collapsed) {
  if (i >= tracks_.size()) return;
  tracks_[i].collapsed = collapsed;
  recompute();
}

void TimelineLayout::toggle_track(std::uint32_t i) {
  if (i < tracks_.size()) set_track_collapsed(i, !tracks_[i].collapsed);
}

void TimelineLayout::collapse_all(bool collapsed) {
  for (LayoutProcess& lp : processes_) lp.collapsed = collapsed;
  recompute();
}

std::span<const std::uint32_t> TimelineLayout::visible_rows_in(float y0, float y1) const {
  auto first =
      std::partition_point(visible_rows_.begin(), visible_rows_.end(),
                           [&](std::uint32_t r) { return rows_[r].y + rows_[r].height <= y0; });
  auto last = std::partition_point(first, visible_rows_.end(),
                                   [&](std::uint32_t r) { return rows_[r].y < y1; });
  return {visible_rows_.data() + (first - visible_rows_.begin()),
          static_cast<std::size_t>(last - first)};
}

std::uint32_t TimelineLayout::row_at_y(float y) const {
  auto it = std::partition_point(visible_rows_.begin(), visible_rows_.end(), [&](std::uint32_t r) {
    return rows_[r].y + rows_[r].height <= y;
  });
  if (it == visible_rows_.end()) return trace::kNone;
  const LayoutRow& row = rows_[*it];
  return (y >= row.y && y < row.y + row.height) ? *it : trace::kNone;
}

std::uint32_t TimelineLayout::layout_row_of(std::uint32_t trace, std::uint32_t track,
                                            std::uint32_t row) const {
  if (trace >= track_index_.size() || track >= track_index_[trace].size()) return trace::kNone;
  const std::uint32_t lt = track_index_[trace][track];
  if (lt == trace::kNone || row >= tracks_[lt].row_count) return trace::kNone;
  return tracks_[lt].first_row + row;
}

std::uint32_t TimelineLayout::counter_track_at_y(float y) const {
  for (std::uint32_t k : counter_tracks_) {
    const LayoutTrack& t = tracks_[k];
    if (t.graph_height > 0 && y >= t.graph_y && y < t.graph_y + t.graph_height) return k;
  }
  return trace::kNone;
}

std::uint64_t TimelineLayout::slice_count() const {
  std::uint64_t n = 0;
  for (const LayoutTrack& t : tracks_) n += t.slice_count;
  return n;
}

}  // namespace flopline::viewer
