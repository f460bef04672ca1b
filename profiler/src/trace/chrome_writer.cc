// Chrome-trace writer: the document frame, shared per-render state, and the file
// output. Events are written by chrome_writer_events.cc, the header and footer
// objects by chrome_writer_header.cc.
#include "flopline/trace/chrome_writer.h"

#include <algorithm>
#include <cstring>

#include "flopline/trace/json_text.h"
#include "trace/chrome_writer_internal.h"
#include "trace/file_io.h"

namespace flopline::trace {
namespace chrome_writer_detail {

bool OutBuffer::finish() {
  if (!sink_) {
    s_.resize(pos_);
    return true;
  }
  if (!sink_failed_ && pos_ > 0) sink_failed_ = !sink_(context_, std::string_view(s_.data(), pos_));
  flushed_ += pos_;
  pos_ = 0;
  return !sink_failed_;
}

void OutBuffer::grow(std::size_t n) {
  if (sink_ && pos_ > kFlushBytes) {
    const std::size_t out = pos_ - kKeepBytes;
    if (!sink_failed_) sink_failed_ = !sink_(context_, std::string_view(s_.data(), out));
    std::memmove(s_.data(), s_.data() + out, kKeepBytes);
    flushed_ += out;
    pos_ = kKeepBytes;
    if (s_.size() - pos_ >= n) return;
  }
  // 256 KiB at a time: large enough that resize() calls are rare, small enough that
  // the zero-fill is still in cache when the events overwrite it.
  constexpr std::size_t kChunk = 256 * 1024;
  const std::size_t need = pos_ + n;
  std::size_t target = std::max(need, s_.size() + kChunk);
  if (target > s_.capacity() && need <= s_.capacity()) target = s_.capacity();
  s_.resize(target);
}

EscapedStrings::EscapedStrings(const StringTable& table) {
  offsets_.reserve(table.size() + 1);
  std::size_t bytes = 0;
  for (std::size_t id = 0; id < table.size(); ++id) {
    bytes += table.view(static_cast<StringId>(id)).size() + 2;
  }
  text_.reserve(bytes + bytes / 16);
  for (std::size_t id = 0; id < table.size(); ++id) {
    offsets_.push_back(text_.size());
    append_json_string(text_, table.view(static_cast<StringId>(id)));
  }
  offsets_.push_back(text_.size());
}

TimeNs earliest_time(const Trace& trace) {
  bool any = false;
  TimeNs lo = 0;
  auto take = [&](TimeNs t) {
    if (!any || t < lo) lo = t;
    any = true;
  };
  for (const Track& t : trace.tracks) {
    for (const auto& row : t.rows) {
      if (!row.empty()) take(row.front().start);  // rows are sorted by start
    }
    if (!t.instants.empty()) take(t.instants.front().ts);
  }
  for (const CounterSeries& c : trace.counters) {
    if (!c.points.empty()) take(c.points.front().ts);
  }
  // Flow ends normally lie inside slices; taking them too keeps every ts >= 0.
  for (const Flow& f : trace.flows) {
    take(f.from.ts);
    take(f.to.ts);
  }
  return lo;
}

RenderContext::RenderContext(const Trace& t, const WriteOptions& o)
    : trace(t), opt(o), base(earliest_time(t)), esc(t.strings) {
  if (o.time_base && *o.time_base > 0 && *o.time_base < base) base = *o.time_base;
  pid_text.reserve(t.processes.size());
  for (const Process& p : t.processes) {
    std::string text;
    if (p.pid_label != 0) {
      text = esc[p.pid_label];
    } else {
      // GPU pids are device ordinals; the namespace keeps ranks' devices apart.
      const std::uint64_t pid = static_cast<std::uint64_t>(p.pid) +
                                (p.is_gpu ? static_cast<std::uint64_t>(o.id_namespace) : 0);
      append_int(text, static_cast<std::int64_t>(pid));
    }
    pid_text.push_back(std::move(text));
  }
  track_head.reserve(t.tracks.size());
  for (const Track& tr : t.tracks) {
    std::string head = ",\"pid\":";
    head += pid_of(tr.process);
    head += ",\"tid\":";
    if (tr.tid_label != 0) {
      head += esc[tr.tid_label];
    } else {
      append_int(head, tr.tid);
    }
    head += ",\"ts\":";
    track_head.push_back(std::move(head));
  }
}

std::string_view RenderContext::pid_of(std::uint32_t process) const {
  return process < pid_text.size() ? std::string_view(pid_text[process]) : std::string_view("0");
}

// The document's size from a sample of about 4096 slices (names and args vary too much
// for a per-event constant), so that one reserve() fits it: growing a multi-GB string
// by doubling would copy it, and reserving far too much can fail outright where
// overcommit is limited.
std::size_t estimate_size(const RenderContext& ctx) {
  const Trace& t = ctx.trace;
  const std::size_t slices = t.slice_count();
  const std::size_t step = std::max<std::size_t>(1, slices / 4096);
  std::size_t sampled = 0;
  for (std::size_t ti = 0; ti < t.tracks.size(); ++ti) {
    for (const auto& row : t.tracks[ti].rows) {
      for (std::size_t i = step / 2; i < row.size(); i += step) {
        const Slice& s = row[i];
        const std::size_t args = s.args < t.args.size() ? t.args.json(s.args).size() : 0;
        sampled += 64 + ctx.esc[s.name].size() + ctx.esc[s.cat].size() + ctx.track_head[ti].size() +
                   args + (s.metrics != kNone ? 80 : 0);
      }
    }
  }
  return sampled * step + sampled / 16 + (t.processes.size() * 3 + t.tracks.size() * 2) * 128 +
         t.instant_count() * 160 + t.counter_point_count() * 128 + t.flows.size() * 2 * 128 + 4096;
}

std::uint64_t render(const Trace& trace, std::string& out, const WriteOptions& opt) {
  RenderContext ctx(trace, opt);
  out.clear();
  out.reserve(estimate_size(ctx));
  OutBuffer buf(out);
  const std::uint64_t events = render_into(ctx, buf);
  buf.finish();
  return events;
}

std::uint64_t render_into(RenderContext& ctx, OutBuffer& buf) {
  write_header(ctx, buf);
  write_metadata_events(ctx, buf);
  write_track_events(ctx, buf);
  write_counter_events(ctx, buf);
  write_flow_events(ctx, buf);
  if (ctx.events > 0) {
    buf.unwrite(2);  // the last event's ",\n"
    buf.append("\n");
  }
  write_footer(ctx, buf);
  return ctx.events;
}

}  // namespace chrome_writer_detail

void render_chrome_trace(const Trace& trace, std::string& out, const WriteOptions& opt) {
  chrome_writer_detail::render(trace, out, opt);
}

std::uint64_t render_chrome_event_lines(const Trace& trace, TimeNs after, TimeNs upto,
                                        const std::function<bool(const Slice&)>& keep,
                                        std::string& out, const WriteOptions& opt, TimeNs base) {
  using namespace chrome_writer_detail;
  RenderContext ctx(trace, opt);
  ctx.base = base;  // an array has no baseTimeNanoseconds: the caller keeps it
  const EventWindow window{after, upto, keep ? &keep : nullptr};
  ctx.window = &window;
  OutBuffer buf(out);
  write_metadata_events(ctx, buf);
  const std::uint64_t metadata = ctx.events;
  write_track_events(ctx, buf);
  write_counter_events(ctx, buf);
  write_flow_events(ctx, buf);
  buf.finish();
  return ctx.events - metadata;
}

std::optional<std::uint64_t> stream_chrome_event_lines(
    const Trace& trace, TimeNs base, const std::function<bool(std::string_view)>& sink,
    const WriteOptions& opt) {
  using namespace chrome_writer_detail;
  RenderContext ctx(trace, opt);
  ctx.base = base;  // every event: the unwindowed loops
  std::string room;
  room.reserve(12 << 20);
  auto call = [](void* f, std::string_view data) {
    return (*static_cast<const std::function<bool(std::string_view)>*>(f))(data);
  };
  OutBuffer buf(room, call, const_cast<std::function<bool(std::string_view)>*>(&sink));
  write_metadata_events(ctx, buf);
  const std::uint64_t metadata = ctx.events;
  write_track_events(ctx, buf);
  write_counter_events(ctx, buf);
  write_flow_events(ctx, buf);
  if (ctx.events > 0) buf.unwrite(2);  // the last line's ",\n"
  if (!buf.finish()) return std::nullopt;
  return ctx.events - metadata;
}

void render_chrome_trace_tail(const Trace& trace, TimeNs base, std::string& out,
                              const WriteOptions& opt) {
  using namespace chrome_writer_detail;
  RenderContext ctx(trace, opt);
  ctx.base = base;
  std::string head;
  {
    OutBuffer buf(head);
    write_header(ctx, buf);  // {...,"traceEvents":[\n
    buf.finish();
  }
  std::string foot;
  {
    OutBuffer buf(foot);
    write_footer(ctx, buf);  // ],...}\n
    buf.finish();
  }
  constexpr std::string_view kEvents = ",\"traceEvents\":[\n";
  out += "],";
  out.append(head, 1, head.size() - 1 - kEvents.size());
  out += ',';
  out.append(foot, 2, std::string::npos);
}

WriteResult write_chrome_trace(const Trace& trace, const std::string& path,
                               const WriteOptions& opt) {
  using chrome_writer_detail::OutBuffer;
  WriteResult result;
  if (const std::size_t n = trace.args.location_count(); n > 0) {
    result.error = "cannot write " + path + ": the args of " + std::to_string(n) +
                   " events were left in the source file (read with ArgsMode::kOnDemand); read it "
                   "with ArgsMode::kKeep to write it";
    return result;
  }
  AtomicFileWriter file;
  if (!file.open(path, ends_with(path, ".gz"), opt.gzip_level)) {
    result.error = "cannot write " + path + ": " + file.error();
    return result;
  }
  // Stream through a window of a few MB: no multi-GB string, no page-fault storm.
  std::string window;
  window.reserve(12 << 20);
  auto sink = [](void* f, std::string_view data) {
    return static_cast<AtomicFileWriter*>(f)->write(data);
  };
  OutBuffer buf(window, sink, &file);
  chrome_writer_detail::RenderContext ctx(trace, opt);
  const std::uint64_t events = chrome_writer_detail::render_into(ctx, buf);
  if (!buf.finish() || !file.commit()) {
    result.error = "cannot write " + path + ": " + file.error();
    return result;
  }
  result.ok = true;
  result.bytes_written = file.bytes_in();
  result.events_written = events;
  return result;
}

}  // namespace flopline::trace
