// The traceEvents of a Chrome trace: metadata, slices, instants, counters, flows.
// Each event is one line ending in ",\n" (render() drops the last comma). Every
// event asks the buffer once for room for its largest possible size, then writes
// with raw copies: this is the writer's hot loop.
#include <algorithm>
#include <string_view>

#include "flopline/trace/json_text.h"
#include "trace/chrome_writer_internal.h"

namespace flopline::trace::chrome_writer_detail {
namespace {

using namespace std::string_view_literals;

// Room for the literal text of any event plus its numbers; variable parts are added.
constexpr std::size_t kFixedRoom = 256;
// How many slices ahead args entries and their text are prefetched (a miss costs
// about as long as writing 10-20 events).
constexpr std::size_t kArgsEntryAhead = 16;
constexpr std::size_t kArgsTextAhead = 8;

bool is_json_space(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t';
}

bool has_any_metric(const SliceMetrics* m) {
  return m != nullptr && (m->has_flops() || m->has_bytes());
}

std::string_view args_text(const RenderContext& ctx, ArgsId id) {
  return id == kNoArgs || id >= ctx.trace.args.size() ? std::string_view()
                                                      : ctx.trace.args.json(id);
}

const SliceMetrics* metrics_of(const RenderContext& ctx, const Slice& s) {
  return s.metrics < ctx.trace.metrics.size() ? &ctx.trace.metrics[s.metrics] : nullptr;
}

// Appends the metrics members to an object whose text ends at p (after its '}').
char* append_metrics(char* obj, char* p, std::string_view args, const SliceMetrics& m, TimeNs dur) {
  while (p > obj && is_json_space(p[-1])) --p;
  if (p == obj || p[-1] != '}') return p;  // not an object: leave it alone
  --p;
  const char* q = obj + 1;
  while (q < p && is_json_space(*q)) ++q;
  bool first = q == p;  // "{}": no comma before the first member
  if (first) p = obj + 1;
  // A member the args already carry (capture may put "bytes" there) is not repeated.
  // Looking for `"key":` finds keys of compact text, never a string value.
  auto member = [&](std::string_view key_colon, double v) {
    if (args.find(key_colon) != std::string_view::npos) return;
    if (!first) *p++ = ',';
    first = false;
    p = put(p, key_colon);
    p = write_double(p, v);
  };
  if (m.has_flops()) member("\"flops\":"sv, m.flops);
  if (m.has_bytes()) member("\"bytes\":"sv, m.bytes);
  if (dur > 0) {
    const double ns = static_cast<double>(dur);
    if (m.has_flops()) member("\"TFLOP/s\":"sv, m.flops / ns / 1e3);  // FLOP/ns = GFLOP/s
    if (m.has_bytes()) member("\"GB/s\":"sv, m.bytes / ns);           // bytes/ns = GB/s
  }
  *p++ = '}';
  return p;
}

// Most bytes of a one-character phase instant's optional parts (",\"s\":\"t\"", id).
constexpr std::size_t kInstantExtras = 48;

char instant_phase(char ph) {
  // Only letters can be written raw inside the "ph" string.
  return (ph >= 'a' && ph <= 'z') || (ph >= 'A' && ph <= 'Z') ? ph : 'i';
}

char* write_hex(char* p, std::uint64_t v) {
  static constexpr char kHex[] = "0123456789abcdef";
  char tmp[16];
  int n = 0;
  do {
    tmp[n++] = kHex[v & 15];
    v >>= 4;
  } while (v != 0);
  while (n > 0) *p++ = tmp[--n];
  return p;
}

std::uint64_t namespaced(std::uint64_t id, std::int64_t ns) {
  return id + static_cast<std::uint64_t>(ns);  // wraps, like the ids themselves may
}

// Metadata events carry a ts (Kineto writes one, and readers that sort every event by
// ts expect it: the trace's first time) and Chrome's "__metadata" category.
void write_meta(RenderContext& ctx, OutBuffer& out, std::string_view what, std::string_view pid,
                std::string_view tid, TimeNs ts, std::string_view key,
                std::string_view value_json) {
  char* p =
      out.room(kFixedRoom + what.size() + pid.size() + tid.size() + key.size() + value_json.size());
  p = put(p, "{\"ph\":\"M\",\"name\":\""sv);
  p = put(p, what);
  p = put(p, "\",\"pid\":"sv);
  p = put(p, pid);
  p = put(p, ",\"tid\":"sv);
  p = put(p, tid);
  p = put(p, ",\"ts\":"sv);
  p = write_us3(p, ctx.rel(ts));
  p = put(p, ",\"cat\":\"__metadata\",\"args\":{\""sv);
  p = put(p, key);
  p = put(p, "\":"sv);
  p = put(p, value_json);
  p = put(p, "}},\n"sv);
  out.commit(p);
  ++ctx.events;
}

void write_slice(RenderContext& ctx, OutBuffer& out, std::string_view head, const Slice& s) {
  const std::string_view cat = ctx.esc[s.cat];
  const std::string_view name = ctx.esc[s.name];
  const std::string_view args = args_text(ctx, s.args);
  const SliceMetrics* m = metrics_of(ctx, s);
  char* p = out.room(kFixedRoom + cat.size() + name.size() + head.size() +
                     args_max_size(args.size(), m != nullptr));
  p = put(p, "{\"ph\":\"X\",\"cat\":"sv);
  p = put(p, cat);
  p = put(p, ",\"name\":"sv);
  p = put(p, name);
  p = put(p, head);
  p = write_us3(p, ctx.rel(s.start));
  p = put(p, ",\"dur\":"sv);
  p = write_us3(p, s.dur);
  p = write_args(p, args, m, s.dur);
  p = put(p, "},\n"sv);
  out.commit(p);
  ++ctx.events;
}

// A slice of an async track: a nestable async pair with an id of its own.
void write_async_slice(RenderContext& ctx, OutBuffer& out, std::string_view pid, const Slice& s) {
  const std::string_view cat = ctx.esc[s.cat];
  const std::string_view name = ctx.esc[s.name];
  const std::string_view args = args_text(ctx, s.args);
  const SliceMetrics* m = metrics_of(ctx, s);
  const std::uint64_t id = namespaced(ctx.next_async_id++, ctx.opt.id_namespace);
  char* p = out.room(2 * (kFixedRoom + cat.size() + name.size() + pid.size()) +
                     args_max_size(args.size(), m != nullptr));
  for (const char ph : {'b', 'e'}) {
    p = put(p, "{\"ph\":\""sv);
    *p++ = ph;
    p = put(p, "\",\"cat\":"sv);
    p = put(p, cat);
    p = put(p, ",\"name\":"sv);
    p = put(p, name);
    p = put(p, ",\"pid\":"sv);
    p = put(p, pid);
    p = put(p, ",\"id\":"sv);
    p = write_uint(p, id);
    p = put(p, ",\"ts\":"sv);
    if (ph == 'b') {
      p = write_us3(p, ctx.rel(s.start));
      p = write_args(p, args, m, s.dur);
    } else {
      p = write_us3(p, ctx.rel(s.end()));
    }
    p = put(p, "},\n"sv);
  }
  out.commit(p);
  ctx.events += 2;
}

void write_instant(RenderContext& ctx, OutBuffer& out, const Track& track, std::string_view head,
                   const Instant& in) {
  const std::string_view cat = ctx.esc[in.cat];
  const std::string_view name = ctx.esc[in.name];
  const std::string_view args = args_text(ctx, in.args);
  const bool async = track.kind == TrackKind::kAsync;
  const std::string_view pid = ctx.pid_of(track.process);
  char* p = out.room(kFixedRoom + kInstantExtras + cat.size() + name.size() + head.size() +
                     pid.size() + args_max_size(args.size(), false));
  const char ph = async ? 'n' : instant_phase(in.phase);
  p = put(p, "{\"ph\":\""sv);
  *p++ = ph;
  p = put(p, "\",\"cat\":"sv);
  p = put(p, cat);
  p = put(p, ",\"name\":"sv);
  p = put(p, name);
  if (async) {
    // An async instant names its process and an id, not a thread.
    p = put(p, ",\"pid\":"sv);
    p = put(p, pid);
    p = put(p, ",\"id\":"sv);
    p = write_uint(p, namespaced(ctx.next_async_id++, ctx.opt.id_namespace));
    p = put(p, ",\"ts\":"sv);
  } else {
    p = put(p, head);
  }
  p = write_us3(p, ctx.rel(in.ts));
  if (ph == 'i' || ph == 'I') {
    p = put(p, in.scope == InstantScope::kGlobal    ? ",\"s\":\"g\""sv
               : in.scope == InstantScope::kProcess ? ",\"s\":\"p\""sv
                                                    : ",\"s\":\"t\""sv);
  } else if (ph == 'O' || ph == 'N' || ph == 'D') {
    // chrome://tracing rejects object events without an id.
    p = put(p, ",\"id\":\"0x"sv);
    p = write_hex(p, ctx.next_object_id++);
    *p++ = '"';
  }
  p = write_args(p, args, nullptr, 0);
  p = put(p, "},\n"sv);
  out.commit(p);
  ++ctx.events;
}

}  // namespace

std::size_t args_max_size(std::size_t n, bool has_metrics) {
  // ,"args": and braces; four metrics members of at most 10 + kMaxDoubleChars each.
  return 16 + json_compact_max_size(n) + (has_metrics ? 4 * (12 + kMaxDoubleChars) : 0);
}

char* write_args(char* p, std::string_view args, const SliceMetrics* metrics, TimeNs dur) {
  const bool with_metrics = has_any_metric(metrics);
  if (args.empty() && !with_metrics) return p;
  p = put(p, ",\"args\":"sv);
  char* const obj = p;
  if (args.empty()) {
    p = put(p, "{}"sv);
  } else {
    // Text from ArgsBuilder is always printable ASCII; text a tolerant reader kept may
    // hold newlines, invalid UTF-8 or nan, and is rewritten as strict JSON.
    char* end = copy_if_printable(p, args);
    p = end != nullptr ? end : write_json_compact(obj, args);
  }
  if (with_metrics) p = append_metrics(obj, p, args, *metrics, dur);
  return p;
}

void write_metadata_events(RenderContext& ctx, OutBuffer& out) {
  const Trace& t = ctx.trace;
  const TimeNs ts = earliest_time(t);
  std::string number;
  for (std::uint32_t i = 0; i < t.processes.size(); ++i) {
    const Process& proc = t.processes[i];
    const std::string_view pid = ctx.pid_of(i);
    if (proc.name != 0) {
      write_meta(ctx, out, "process_name", pid, "0", ts, "name", ctx.esc[proc.name]);
    }
    if (proc.labels != 0) {
      write_meta(ctx, out, "process_labels", pid, "0", ts, "labels", ctx.esc[proc.labels]);
    }
    number.clear();
    append_int(number, proc.sort_index);
    write_meta(ctx, out, "process_sort_index", pid, "0", ts, "sort_index", number);
  }
  std::string tid;
  std::string name;
  for (const Track& track : t.tracks) {
    if (track.kind == TrackKind::kAsync) continue;  // written as async events
    const std::string_view pid = ctx.pid_of(track.process);
    tid.clear();
    if (track.tid_label != 0) {
      tid = ctx.esc[track.tid_label];
    } else {
      append_int(tid, track.tid);
    }
    if (track.name != 0) {
      write_meta(ctx, out, "thread_name", pid, tid, ts, "name", ctx.esc[track.name]);
    } else if (track.kind == TrackKind::kGpuStream) {
      // Kineto's name for a stream, so every tool shows "stream 7" rather than "7".
      std::string label = "stream ";
      if (track.tid_label != 0) {
        label += t.str(track.tid_label);
      } else {
        append_int(label, track.tid);
      }
      name.clear();
      append_json_string(name, label);
      write_meta(ctx, out, "thread_name", pid, tid, ts, "name", name);
    }
    number.clear();
    append_int(number, track.sort_index);
    write_meta(ctx, out, "thread_sort_index", pid, tid, ts, "sort_index", number);
  }
}

// The windowed render (EventWindow): a slower loop with the window's tests, kept apart
// from the hot loop below.
void write_windowed_track_events(RenderContext& ctx, OutBuffer& out) {
  const Trace& t = ctx.trace;
  const EventWindow& w = *ctx.window;
  for (std::size_t ti = 0; ti < t.tracks.size(); ++ti) {
    const Track& track = t.tracks[ti];
    const std::string_view head = ctx.track_head[ti];
    for (const auto& row : track.rows) {
      for (const Slice& s : row) {
        if (!w.holds(s.end()) || (w.keep != nullptr && !(*w.keep)(s))) continue;
        if (track.kind == TrackKind::kAsync) {
          write_async_slice(ctx, out, ctx.pid_of(track.process), s);
        } else {
          write_slice(ctx, out, head, s);
        }
      }
    }
    for (const Instant& in : track.instants) {
      if (w.holds(in.ts)) write_instant(ctx, out, track, head, in);
    }
  }
}

void write_track_events(RenderContext& ctx, OutBuffer& out) {
  if (ctx.window != nullptr) {
    write_windowed_track_events(ctx, out);
    return;
  }
  const Trace& t = ctx.trace;
  const ArgStore& args = t.args;
  for (std::size_t ti = 0; ti < t.tracks.size(); ++ti) {
    const Track& track = t.tracks[ti];
    const std::string_view head = ctx.track_head[ti];
    if (track.kind == TrackKind::kAsync) {
      const std::string_view pid = ctx.pid_of(track.process);
      for (const auto& row : track.rows) {
        for (const Slice& s : row) write_async_slice(ctx, out, pid, s);
      }
    } else {
      for (const auto& row : track.rows) {
        for (std::size_t j = 0; j < row.size(); ++j) {
          // Slices of a track are far apart in the args arena (stored in event order,
          // interleaved with other tracks): fetch ahead to hide the misses.
          if (j + kArgsEntryAhead < row.size()) args.prefetch_entry(row[j + kArgsEntryAhead].args);
          if (j + kArgsTextAhead < row.size()) args.prefetch_text(row[j + kArgsTextAhead].args);
          write_slice(ctx, out, head, row[j]);
        }
      }
    }
    for (const Instant& in : track.instants) write_instant(ctx, out, track, head, in);
  }
}

void write_counter_events(RenderContext& ctx, OutBuffer& out) {
  const Trace& t = ctx.trace;
  std::string head;
  std::string mid;
  for (const CounterSeries& series : t.counters) {
    head = "{\"ph\":\"C\",\"name\":";
    head += ctx.esc[series.name];
    head += ",\"cat\":";
    head += ctx.esc[series.cat];
    head += ",\"pid\":";
    head += ctx.pid_of(series.process);
    head += ",\"ts\":";
    mid = ",\"args\":{";
    mid += ctx.esc[series.key];
    mid += ':';
    for (const CounterPoint& point : series.points) {
      if (ctx.window != nullptr && !ctx.window->holds(point.ts)) continue;
      char* p = out.room(kFixedRoom + head.size() + mid.size());
      p = put(p, head);
      p = write_us3(p, ctx.rel(point.ts));
      p = put(p, mid);
      p = write_double(p, point.value);
      p = put(p, "}},\n"sv);
      out.commit(p);
      ++ctx.events;
    }
  }
}

void write_flow_events(RenderContext& ctx, OutBuffer& out) {
  const Trace& t = ctx.trace;
  for (const Flow& f : t.flows) {
    // An end with no track cannot be placed on a thread; there is nothing to draw.
    if (f.from.track >= t.tracks.size() || f.to.track >= t.tracks.size()) continue;
    // A flow goes out once both its ends are in.
    if (ctx.window != nullptr && !ctx.window->holds(std::max(f.from.ts, f.to.ts))) continue;
    const std::string_view cat = ctx.esc[f.cat];
    const std::string_view name = ctx.esc[f.name];
    const std::string_view from = ctx.track_head[f.from.track];
    const std::string_view to = ctx.track_head[f.to.track];
    const std::uint64_t id = namespaced(f.id, ctx.opt.id_namespace);
    char* p = out.room(2 * (kFixedRoom + cat.size() + name.size()) + from.size() + to.size());
    for (const char ph : {'s', 'f'}) {
      p = put(p, "{\"ph\":\""sv);
      *p++ = ph;
      p = put(p, "\",\"id\":"sv);
      p = write_uint(p, id);
      p = put(p, ",\"cat\":"sv);
      p = put(p, cat);
      p = put(p, ",\"name\":"sv);
      p = put(p, name);
      if (ph == 's') {
        p = put(p, from);
        p = write_us3(p, ctx.rel(f.from.ts));
      } else {
        p = put(p, to);
        p = write_us3(p, ctx.rel(f.to.ts));
        if (f.to.enclosing) p = put(p, ",\"bp\":\"e\""sv);
      }
      p = put(p, "},\n"sv);
    }
    out.commit(p);
    ctx.events += 2;
  }
}

}  // namespace flopline::trace::chrome_writer_detail
