// Pieces shared by the Chrome-trace writer's files (chrome_writer*.cc). Not public.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "flopline/trace/chrome_writer.h"
#include "flopline/trace/model.h"

namespace flopline::trace::chrome_writer_detail {

// Renders straight into the caller's std::string through a raw cursor. Each event asks
// once for room for its largest possible size and then writes without bounds checks;
// the string is grown in chunks (the zero-fill of a chunk stays in cache) and trimmed
// at the end. This avoids a std::string::append call per piece, which at ~20 pieces
// per event would cost more than the formatting.
//
// With a sink, the buffer is a window: once it holds more than kFlushBytes, all but
// its last few bytes (which unwrite() may still take back) go to the sink, so a trace
// of any size is written through a few MB of memory.
class OutBuffer {
 public:
  using Sink = bool (*)(void* context, std::string_view data);
  explicit OutBuffer(std::string& s) : s_(s), pos_(s.size()) {}
  OutBuffer(std::string& s, Sink sink, void* context)
      : s_(s), pos_(s.size()), sink_(sink), context_(context) {}
  char* room(std::size_t n) {
    if (s_.size() - pos_ < n) grow(n);
    return s_.data() + pos_;
  }
  void commit(char* end) { pos_ = static_cast<std::size_t>(end - s_.data()); }
  void append(std::string_view text) {
    char* p = room(text.size());
    std::memcpy(p, text.data(), text.size());
    commit(p + text.size());
  }
  std::size_t size() const { return pos_; }
  // Drops the last n bytes written (the final ",\n" of the event list).
  void unwrite(std::size_t n) { pos_ -= n; }
  // Trims the string to what was written, or with a sink hands it the rest. Returns
  // false when a sink call failed (then everything after it was discarded).
  bool finish();
  std::uint64_t total() const { return flushed_ + pos_; }

 private:
  static constexpr std::size_t kFlushBytes = 8 << 20;
  static constexpr std::size_t kKeepBytes = 16;
  void grow(std::size_t n);
  std::string& s_;
  std::size_t pos_;
  Sink sink_ = nullptr;
  void* context_ = nullptr;
  bool sink_failed_ = false;
  std::uint64_t flushed_ = 0;
};

inline char* put(char* p, std::string_view s) {
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

// Every string of the table escaped once, as a quoted JSON string: kernel traces repeat
// a few dozen names millions of times, so events copy escaped text instead of
// re-escaping it.
class EscapedStrings {
 public:
  explicit EscapedStrings(const StringTable& table);
  std::string_view operator[](StringId id) const {
    return {text_.data() + offsets_[id], offsets_[id + 1] - offsets_[id]};
  }

 private:
  std::string text_;
  std::vector<std::size_t> offsets_;
};

// What a windowed render writes (render_chrome_event_lines): events that end in
// (after, upto], slices `keep` accepts; times are absolute.
struct EventWindow {
  TimeNs after = 0;
  TimeNs upto = 0;
  const std::function<bool(const Slice&)>* keep = nullptr;
  bool holds(TimeNs end) const { return end > after && end <= upto; }
};

// State of one render: the trace, options, time base and the pre-rendered pieces
// that events share.
struct RenderContext {
  const Trace& trace;
  const WriteOptions& opt;
  TimeNs base = 0;  // baseTimeNanoseconds; event times are written relative to it
  EscapedStrings esc;
  std::vector<std::string> pid_text;    // per process: the "pid" value as JSON
  std::vector<std::string> track_head;  // per track: ,"pid":P,"tid":T,"ts":
  std::uint64_t events = 0;             // events written so far
  std::uint64_t next_async_id = 1;      // ids of async pairs
  std::uint64_t next_object_id = 1;     // ids of object events (O/N/D)
  const EventWindow* window = nullptr;  // null: every event

  RenderContext(const Trace& t, const WriteOptions& o);
  TimeNs rel(TimeNs t) const {
    // Wrapping subtraction: no UB for any input; exact whenever the result fits.
    return static_cast<TimeNs>(static_cast<std::uint64_t>(t) - static_cast<std::uint64_t>(base));
  }
  std::string_view pid_of(std::uint32_t process) const;
};

// Renders the whole document into `out` (replacing its content); returns the number
// of events written.
std::uint64_t render(const Trace& trace, std::string& out, const WriteOptions& opt);
// Renders the whole document through `out` (which may stream to a sink).
std::uint64_t render_into(RenderContext& ctx, OutBuffer& out);

// Earliest time of any event (slices, instants, counters, flow ends); 0 when none.
TimeNs earliest_time(const Trace& trace);

// The document's pieces, in order.
void write_header(RenderContext& ctx, OutBuffer& out);  // {"schemaVersion"... "traceEvents":[
void write_metadata_events(RenderContext& ctx, OutBuffer& out);
void write_track_events(RenderContext& ctx, OutBuffer& out);  // slices and instants
void write_counter_events(RenderContext& ctx, OutBuffer& out);
void write_flow_events(RenderContext& ctx, OutBuffer& out);
void write_footer(RenderContext& ctx, OutBuffer& out);  // ],"flopline":{...}...}

// Most bytes write_args() adds for an args text of n bytes.
std::size_t args_max_size(std::size_t n, bool has_metrics);
// Writes ,"args":{...}: the stored args text (copied as is when it is printable ASCII,
// made strict JSON otherwise) with the slice's metrics members appended. Writes
// nothing when there is neither.
char* write_args(char* p, std::string_view args, const SliceMetrics* metrics, TimeNs dur);

}  // namespace flopline::trace::chrome_writer_detail
