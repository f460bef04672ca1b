#include "flopline/trace/builder.h"

#include <algorithm>
#include <charconv>
#include <queue>

namespace flopline::trace {
namespace {

// A decimal integer written as text ("25738", "-1") is the same id as the number:
// Kineto writes one thread both ways, and its launch flows only join if they agree.
bool parse_decimal_id(std::string_view text, std::int64_t& out) {
  if (text.empty()) return false;
  const char* first = text.data();
  const char* last = first + text.size();
  auto [ptr, ec] = std::from_chars(first, last, out);
  return ec == std::errc() && ptr == last;
}

TrackKind key_kind(TrackKind k) {
  return k == TrackKind::kAsync ? TrackKind::kAsync : TrackKind::kThread;
}

}  // namespace

std::size_t TraceBuilder::TrackKeyHash::operator()(const TrackKey& k) const {
  std::uint64_t h = static_cast<std::uint64_t>(k.tid) * 0x9e3779b97f4a7c15ull;
  h ^= (static_cast<std::uint64_t>(k.process) << 1) ^ static_cast<std::uint64_t>(k.kind);
  return h ^ (h >> 29);
}

std::size_t TraceBuilder::CounterKeyHash::operator()(const CounterKey& k) const {
  std::uint64_t h = (static_cast<std::uint64_t>(k.name) << 32 | k.key) * 0x9e3779b97f4a7c15ull;
  return h ^ (h >> 31) ^ k.process;
}

TraceBuilder::TraceBuilder(Trace& trace) : trace_(trace) {}

std::uint32_t TraceBuilder::process(std::int64_t pid) {
  auto [it, added] =
      process_by_pid_.try_emplace(pid, static_cast<std::uint32_t>(trace_.processes.size()));
  if (added) {
    Process p;
    p.pid = pid;
    p.sort_index = pid;
    trace_.processes.push_back(p);
  }
  return it->second;
}

// "" (Kineto's last event has pid "" and tid "") is taken as 0.
std::uint32_t TraceBuilder::process(std::string_view pid_text) {
  std::int64_t pid = 0;
  if (pid_text.empty() || parse_decimal_id(pid_text, pid)) return process(pid);
  const StringId label = trace_.strings.intern(pid_text);
  auto [it, added] =
      process_by_label_.try_emplace(label, static_cast<std::uint32_t>(trace_.processes.size()));
  if (added) {
    Process p;
    p.pid = next_synthetic_pid_--;
    p.pid_label = label;
    p.sort_index = p.pid;
    trace_.processes.push_back(p);
  }
  return it->second;
}

std::uint32_t TraceBuilder::track(std::uint32_t process_index, std::int64_t tid, TrackKind kind) {
  const TrackKey key{process_index, tid, key_kind(kind)};
  std::uint32_t index;
  if (key == last_key_) {
    index = last_track_;
  } else {
    auto [it, added] =
        track_by_key_.try_emplace(key, static_cast<std::uint32_t>(trace_.tracks.size()));
    if (added) {
      Track t;
      t.process = process_index;
      t.tid = tid;
      t.sort_index = tid;
      t.kind = key_kind(kind);  // a stream is marked below, with its process
      trace_.tracks.push_back(std::move(t));
      pending_.emplace_back();
    }
    index = it->second;
    last_key_ = key;
    last_track_ = index;
  }
  if (kind == TrackKind::kGpuStream && trace_.tracks[index].kind != TrackKind::kGpuStream) {
    trace_.tracks[index].kind = TrackKind::kGpuStream;
    Process& p = trace_.processes[process_index];
    if (!p.is_gpu) {
      p.is_gpu = true;
      // Kineto and flopline give each device a pid equal to its ordinal.
      if (p.pid >= 0 && p.pid < 1024 && p.pid_label == 0)
        p.device = static_cast<std::int32_t>(p.pid);
    }
  }
  return index;
}

std::uint32_t TraceBuilder::track(std::uint32_t process_index, std::string_view tid_text,
                                  TrackKind kind) {
  std::int64_t tid = 0;
  if (tid_text.empty() || parse_decimal_id(tid_text, tid)) return track(process_index, tid, kind);
  const StringId label = trace_.strings.intern(tid_text);
  auto [it, added] = synthetic_tid_by_label_.try_emplace(label, next_synthetic_tid_);
  if (added) --next_synthetic_tid_;
  const std::uint32_t index = track(process_index, it->second, kind);
  trace_.tracks[index].tid_label = label;
  return index;
}

void TraceBuilder::add_slice(std::uint32_t track_index, const Slice& s) {
  pending_[track_index].slices.push_back(s);
}

void TraceBuilder::add_instant(std::uint32_t track_index, const Instant& i) {
  trace_.tracks[track_index].instants.push_back(i);
}

std::uint32_t TraceBuilder::counter_series(std::uint32_t process_index, StringId name, StringId key,
                                           StringId cat) {
  auto [it, added] = counter_by_key_.try_emplace(
      CounterKey{process_index, name, key}, static_cast<std::uint32_t>(trace_.counters.size()));
  if (added) {
    CounterSeries c;
    c.process = process_index;
    c.name = name;
    c.key = key;
    c.cat = cat;
    trace_.counters.push_back(std::move(c));
  }
  return it->second;
}

void TraceBuilder::add_counter_point(std::uint32_t series, TimeNs ts, double value) {
  trace_.counters[series].points.push_back(CounterPoint{ts, value});
}

void TraceBuilder::add_flow(const Flow& f) {
  trace_.flows.push_back(f);
}

std::uint32_t TraceBuilder::add_metrics(const SliceMetrics& m) {
  trace_.metrics.push_back(m);
  return static_cast<std::uint32_t>(trace_.metrics.size() - 1);
}

void TraceBuilder::finalize() {
  for (std::size_t i = 0; i < trace_.tracks.size(); ++i) {
    Track& t = trace_.tracks[i];
    t.nesting_rows = assign_rows(pending_[i].slices, t.rows);
    std::vector<Slice>().swap(pending_[i].slices);
    std::stable_sort(t.instants.begin(), t.instants.end(),
                     [](const Instant& a, const Instant& b) { return a.ts < b.ts; });
  }
  for (CounterSeries& c : trace_.counters) {
    std::stable_sort(c.points.begin(), c.points.end(),
                     [](const CounterPoint& a, const CounterPoint& b) { return a.ts < b.ts; });
  }
  bind_flows(trace_);
}

// Nesting uses a stack of open slices: a slice that ends inside the innermost open
// slice nests one deeper. One that starts inside it but ends after it does not nest;
// it goes to an extra row, chosen as any extra row whose last slice has ended
// (a min-heap on row end keeps this O(n log n) even for a million overlapping spans).
std::uint32_t assign_rows(std::vector<Slice>& slices, std::vector<std::vector<Slice>>& rows) {
  rows.clear();
  if (slices.empty()) return 0;
  // Stable: of two slices with the same interval, the one added first is the outer
  // (a reader adds in file order, capture adds an operator before its kernel).
  std::stable_sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) {
    if (a.start != b.start) return a.start < b.start;
    return a.dur > b.dur;  // the outer slice first
  });

  std::vector<std::uint32_t> row_of(slices.size());
  std::vector<TimeNs> open_ends;                  // the nesting stack
  using Free = std::pair<TimeNs, std::uint32_t>;  // (last end, extra row index)
  std::priority_queue<Free, std::vector<Free>, std::greater<>> extra_rows;
  std::uint32_t extra_count = 0;
  std::uint32_t nesting = 0;

  for (std::size_t i = 0; i < slices.size(); ++i) {
    const Slice& s = slices[i];
    while (!open_ends.empty() && open_ends.back() <= s.start) open_ends.pop_back();
    if (open_ends.empty() || s.end() <= open_ends.back()) {
      row_of[i] = static_cast<std::uint32_t>(open_ends.size());
      nesting = std::max<std::uint32_t>(nesting, row_of[i] + 1);
      open_ends.push_back(s.end());
      continue;
    }
    std::uint32_t extra;
    if (!extra_rows.empty() && extra_rows.top().first <= s.start) {
      extra = extra_rows.top().second;
      extra_rows.pop();
    } else {
      extra = extra_count++;
    }
    extra_rows.push({s.end(), extra});
    row_of[i] = 0x80000000u | extra;  // resolved once the nesting depth is known
  }

  rows.resize(nesting + extra_count);
  std::vector<std::size_t> counts(rows.size(), 0);
  auto final_row = [nesting](std::uint32_t r) {
    return r & 0x80000000u ? nesting + (r & 0x7fffffffu) : r;
  };
  for (std::uint32_t r : row_of) ++counts[final_row(r)];
  for (std::size_t r = 0; r < rows.size(); ++r) rows[r].reserve(counts[r]);
  for (std::size_t i = 0; i < slices.size(); ++i) rows[final_row(row_of[i])].push_back(slices[i]);
  return nesting;
}

namespace {

// The deepest slice of `track` with start <= ts <= end; nesting rows are searched from
// the deepest up, then extra rows.
SliceRef find_enclosing(const Track& track, std::uint32_t track_index, TimeNs ts) {
  auto search_row = [&](std::uint32_t r) -> SliceRef {
    const auto& row = track.rows[r];
    auto it = std::upper_bound(row.begin(), row.end(), ts,
                               [](TimeNs t, const Slice& s) { return t < s.start; });
    if (it == row.begin()) return {};
    --it;
    if (it->end() < ts) return {};
    return SliceRef{track_index, r, static_cast<std::uint32_t>(it - row.begin())};
  };
  for (std::uint32_t r = track.nesting_rows; r-- > 0;) {
    if (SliceRef ref = search_row(r); ref.valid()) return ref;
  }
  for (auto r = static_cast<std::uint32_t>(track.nesting_rows); r < track.rows.size(); ++r) {
    if (SliceRef ref = search_row(r); ref.valid()) return ref;
  }
  return {};
}

// The slice starting first at or after ts (the outermost on a tie): how v1 flow ends
// without "bp":"e" bind in chrome://tracing.
SliceRef find_next(const Track& track, std::uint32_t track_index, TimeNs ts) {
  SliceRef best;
  TimeNs best_start = 0;
  for (std::uint32_t r = 0; r < track.rows.size(); ++r) {
    const auto& row = track.rows[r];
    auto it = std::lower_bound(row.begin(), row.end(), ts,
                               [](const Slice& s, TimeNs t) { return s.start < t; });
    if (it == row.end()) continue;
    if (!best.valid() || it->start < best_start) {
      best = SliceRef{track_index, r, static_cast<std::uint32_t>(it - row.begin())};
      best_start = it->start;
    }
  }
  return best;
}

void bind_end(const Trace& trace, FlowEnd& end) {
  end.slice = {};
  if (end.track >= trace.tracks.size()) return;
  const Track& t = trace.tracks[end.track];
  end.slice =
      end.enclosing ? find_enclosing(t, end.track, end.ts) : find_next(t, end.track, end.ts);
}

}  // namespace

void bind_flows(Trace& trace) {
  for (Flow& f : trace.flows) {
    bind_end(trace, f.from);
    bind_end(trace, f.to);
  }
}

}  // namespace flopline::trace
