#include "app_state.h"

#include <algorithm>
#include <climits>
#include <cstdio>

#include "flopline/trace/device_peaks.h"
#include "short_name.h"

namespace flopline::viewer {
namespace {

void rebuild_trace_list(AppState& s) {
  s.traces.clear();
  s.operators.clear();
  for (const auto& f : s.files) {
    s.traces.push_back(&f->trace);
    s.operators.push_back(&f->operators);
  }
}

// Fits the view to [begin, end), and says so when the view cannot hold all of it.
void fit_and_tell(AppState& s, std::int64_t begin_ns, std::int64_t end_ns) {
  if (s.viewport.fit(begin_ns, end_ns)) return;
  char text[256];
  std::snprintf(text, sizeof text,
                "the times run from %lld to %lld ns, beyond what the view can hold (times within "
                "+-%.2g ns, %.2g ns at once): it shows the part it can, from the start",
                static_cast<long long>(begin_ns), static_cast<long long>(end_ns),
                static_cast<double>(Viewport::kTimeLimitNs),
                static_cast<double>(Viewport::kMaxSpanNs));
  s.notices.push_back({.kind = Notice::Kind::kWarning, .text = text});
}

}  // namespace

void adopt_load_result(AppState& s, LoadResult&& result) {
  for (std::string& e : result.errors)
    s.notices.push_back({.kind = Notice::Kind::kError, .text = std::move(e)});
  for (std::string& w : result.warnings) {
    s.notices.push_back({.kind = Notice::Kind::kWarning, .text = std::move(w)});
  }
  if (result.cancelled)
    s.notices.push_back({.kind = Notice::Kind::kInfo, .text = "loading cancelled"});
  if (result.files.empty()) return;  // keep what was open when nothing new loaded

  s.files = std::move(result.files);
  // Other tools' traces name their GPU without its peaks: the table gives them.
  for (auto& f : s.files) trace::fill_missing_peaks(f->trace);
  rebuild_trace_list(s);
  s.layout = std::move(result.layout);
  s.flows = std::move(result.flows);
  s.begin_ns = result.begin_ns;
  s.end_ns =
      std::max(result.end_ns, result.begin_ns == INT64_MAX ? INT64_MAX : result.begin_ns + 1);
  s.rank_summary = std::move(result.rank_summary);
  s.diff = std::move(result.diff);
  if (s.diff) {
    s.show_diff = true;
  } else if (s.files.size() >= 2 && s.rank_summary.has_ranks()) {
    // Several ranks: where each one's time goes is the first question.
    s.show_ranks = true;
  }
  s.colors.clear();
  for (const trace::Trace* t : s.traces) s.colors.push_back(ColorTable::build(*t));
  s.short_names.clear();
  s.selection = Selection{};
  s.highlight_ids.clear();
  s.search = SliceSearch{};
  s.search_cursor.reset();
  s.scroll_y = 0;
  s.viewport.set_extent(s.begin_ns, s.end_ns);
  fit_and_tell(s, s.begin_ns, s.end_ns);
  s.fit_pending = true;
  ++s.generation;
  rebuild_legend(s);
}

void close_all(AppState& s) {
  s.files.clear();
  s.traces.clear();
  s.operators.clear();
  s.layout = TimelineLayout{};
  s.flows = FlowIndex{};
  s.rank_summary = RankSummary{};
  s.diff.reset();
  s.colors.clear();
  s.legend.clear();
  s.legend_labels.clear();
  s.short_names.clear();
  s.selection = Selection{};
  s.highlight_ids.clear();
  s.search = SliceSearch{};
  s.search_cursor.reset();
  s.begin_ns = s.end_ns = 0;
  s.scroll_y = 0;
  ++s.generation;
}

void rebuild_legend(AppState& s) {
  s.legend = build_legend(s.trace_list(), s.color_by);
  std::vector<std::string_view> full;
  for (const LegendEntry& e : s.legend) full.push_back(e.label);
  s.legend_labels = distinct_short_kernel_names(full, 40);
}

void scroll_to_row(AppState& s, std::uint32_t layout_row, float view_height) {
  if (layout_row >= s.layout.rows().size()) return;
  const LayoutRow& r = s.layout.rows()[layout_row];
  if (!r.visible) return;
  const float top = s.scroll_y;
  if (r.y >= top && r.y + r.height <= top + view_height) return;
  s.scroll_to = std::max(0.0f, r.y - view_height * 0.3f);
}

void select_slice(AppState& s, const SliceHandle& h, bool fit) {
  if (!h.valid()) {
    s.selection.clear_slice();
    return;
  }
  s.selection.select(h, s.flows);
  const trace::Slice& sl = slice_of(s.trace_list(), h);
  if (fit) {
    s.viewport.fit(sl.start, sl.end());
  } else if (sl.end() < s.viewport.t0_ns || sl.start > s.viewport.t1_ns) {
    // Off screen: centre it and keep the zoom unless it is wider than the view.
    const std::int64_t span = std::max<std::int64_t>(s.viewport.span_ns(), sl.dur * 3 / 2);
    const std::int64_t mid = sl.start + sl.dur / 2;
    s.viewport.t0_ns = mid - span / 2;
    s.viewport.t1_ns = s.viewport.t0_ns + span;
    s.viewport.clamp();
  }
  const std::uint32_t row = s.layout.layout_row_of(h.trace, h.ref.track, h.ref.row);
  if (row != trace::kNone && !s.layout.rows()[row].visible) {
    // The slice lies in a collapsed track or process: open them so it can be seen.
    const LayoutRow& lr = s.layout.rows()[row];
    const LayoutTrack& lt = s.layout.tracks()[lr.layout_track];
    s.layout.set_process_collapsed(lt.layout_process, false);
    s.layout.set_track_collapsed(lr.layout_track, false);
  }
  if (row != trace::kNone) {
    const LayoutRow& lr = s.layout.rows()[row];
    s.scroll_to = std::max(0.0f, lr.y - 120.0f);
  }
}

void set_highlight(AppState& s, std::optional<std::string> name) {
  s.selection.highlighted_name = std::move(name);
  s.highlight_ids.assign(s.traces.size(), trace::kNone);
  if (!s.selection.highlighted_name) return;
  for (std::size_t i = 0; i < s.traces.size(); ++i) {
    s.highlight_ids[i] = s.traces[i]->strings.find(*s.selection.highlighted_name);
  }
}

void highlight_and_jump(AppState& s, const OpTableQuery& query, const std::string& name) {
  set_highlight(s, name);
  const std::vector<SliceHandle> instances = row_instances(s.trace_list(), query, name);
  const SliceHandle longest = longest_instance(s.trace_list(), instances);
  if (!longest.valid()) return;
  select_slice(s, longest, false);
  const trace::Slice& sl = slice_of(s.trace_list(), longest);
  s.viewport.fit(sl.start - sl.dur, sl.end() + sl.dur);
}

void jump_to(AppState& s, const JumpTarget& target) {
  if (target.slice.valid() && target.slice.trace < s.traces.size()) {
    select_slice(s, target.slice, false);
  }
  s.viewport.fit(target.begin_ns, std::max(target.end_ns, target.begin_ns + 1));
  s.fit_pending = false;
  if (target.layout_process >= s.layout.processes().size()) return;
  s.layout.set_process_collapsed(target.layout_process, false);
  if (!target.slice.valid()) s.scroll_to = s.layout.processes()[target.layout_process].y;
}

void fit_selection_or_all(AppState& s) {
  if (s.selection.has_slice()) {
    const trace::Slice& sl = slice_of(s.trace_list(), s.selection.slice);
    fit_and_tell(s, sl.start, sl.end());
  } else if (s.selection.range) {
    fit_and_tell(s, s.selection.range->begin_ns, s.selection.range->end_ns);
  } else {
    fit_and_tell(s, s.begin_ns, s.end_ns);
  }
}

SliceHandle longest_slice_named(TraceList traces, std::string_view name) {
  SliceHandle best;
  trace::TimeNs best_dur = -1;
  for (std::uint32_t ti = 0; ti < traces.size(); ++ti) {
    const trace::Trace& t = *traces[ti];
    const trace::StringId id = t.strings.find(name);
    if (id == trace::kNone) continue;
    for (std::uint32_t k = 0; k < t.tracks.size(); ++k) {
      const auto& rows = t.tracks[k].rows;
      for (std::uint32_t r = 0; r < rows.size(); ++r) {
        for (std::uint32_t i = 0; i < rows[r].size(); ++i) {
          const trace::Slice& sl = rows[r][i];
          if (sl.name == id && sl.dur > best_dur) {
            best_dur = sl.dur;
            best = {.trace = ti, .ref = {.track = k, .row = r, .index = i}};
          }
        }
      }
    }
  }
  return best;
}

const std::string& args_of(AppState& s, CachedArgs& cache, const SliceHandle& h) {
  if (cache.slice == h && cache.generation == s.generation) return cache.json;
  cache.slice = h;
  cache.generation = s.generation;
  cache.json.clear();
  if (!h.valid() || h.trace >= s.files.size()) return cache.json;
  const LoadedFile& f = *s.files[h.trace];
  const trace::Slice& sl = slice_of(s.trace_list(), h);
  if (sl.args == trace::kNoArgs) return cache.json;
  std::string error;
  cache.json = f.args.args_json(f.trace, sl.args, &error);
  if (!error.empty()) s.notices.push_back({.kind = Notice::Kind::kWarning, .text = error});
  return cache.json;
}

const std::string& display_name(AppState& s, std::uint32_t trace, trace::StringId name) {
  const std::uint64_t key = (static_cast<std::uint64_t>(trace) << 32) | name;
  auto it = s.short_names.find(key);
  if (it != s.short_names.end()) return it->second;
  return s.short_names.emplace(key, short_kernel_name(s.traces[trace]->str(name))).first->second;
}

}  // namespace flopline::viewer
