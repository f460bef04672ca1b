// Internals of the Chrome-trace reader, split by job:
//   chrome_event_parser.cc   one traceEvents entry's JSON -> RawEvent (the hot loop)
//   chrome_event_decoder.cc  RawEvent -> builder calls, per phase (X, B/E, i, C, M, ...)
//   chrome_links.cc          events that pair up: flows (v1 and v2) and async spans
//   chrome_top_level.cc      the envelope's other members (deviceProperties, flopline...)
//   chrome_reader.cc         file reading, the top-level walk, errors and progress
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "flopline/trace/builder.h"
#include "flopline/trace/chrome_reader.h"
#include "flopline/trace/model.h"
#include "trace/json_scanner.h"

namespace flopline::trace::chrome {

// One member value as written. Strings are decoded (escapes resolved); other scalars
// are their token text; objects and arrays are their raw text.
// 16 bytes, reset per entry by kind alone: the event loop touches it millions of times.
struct Field {
  const char* ptr;
  std::uint32_t len;
  json::Kind kind = json::Kind::kNone;  // kNone: the member was absent (ptr/len unset)
  bool present() const { return kind != json::Kind::kNone && kind != json::Kind::kNull; }
  std::string_view text() const {
    return kind == json::Kind::kNone ? std::string_view() : std::string_view(ptr, len);
  }
  // A single value over 4 GiB (only a name or id could be one) is cut to 4 GiB.
  void set(json::Kind k, std::string_view t) {
    kind = k;
    ptr = t.data();
    len = t.size() > UINT32_MAX ? UINT32_MAX : static_cast<std::uint32_t>(t.size());
  }
};

// What one traceEvents entry said. Views point into the input text or into the
// parser's scratch buffers, and are valid until the next entry is parsed.
struct RawEvent {
  Field ph, name, cat, scope, bp, ts, dur, pid, tid, id, bind_id;
  Field id2;               // the id inside "id2":{"local":..} or {"global":..}
  bool id2_local = false;  // a "local" id2 is scoped to its process
  bool flow_in = false;
  bool flow_out = false;
  std::string_view args;  // the args object's text; empty when absent or not an object
  std::uint32_t args_members = 0;
  bool args_not_object = false;  // "args" was there but was not an object (ignored)
  bool args_lax = false;         // args needs re-writing as strict JSON before it is stored
  bool has_flops = false;        // numeric "flops" at the top level of args
  bool has_bytes = false;        // numeric "bytes" at the top level of args
  bool bad_metric = false;  // a numeric "flops"/"bytes" that is negative, nan, inf or beyond double
  double flops = 0;
  double bytes = 0;
  char phase() const { return ph.kind != json::Kind::kNone && ph.len == 1 ? ph.ptr[0] : '\0'; }
  // Forgets the previous entry; cheaper than assigning a fresh RawEvent.
  void reset() {
    for (Field* f : {&ph, &name, &cat, &scope, &bp, &ts, &dur, &pid, &tid, &id, &bind_id, &id2})
      f->kind = json::Kind::kNone;
    id2_local = flow_in = flow_out = false;
    args = {};
    args_members = 0;
    args_not_object = args_lax = has_flops = has_bytes = bad_metric = false;
  }
};

class EventParser {
 public:
  // The scanner is at an entry's '{'. Fills `e`; false on a syntax error (the scanner
  // holds it) — the entry is then incomplete and must not be used.
  bool parse(json::Scanner& s, RawEvent& e);

 private:
  enum Slot { kPh, kName, kCat, kScope, kBp, kTs, kDur, kPid, kTid, kId, kBindId, kId2, kSlots };
  bool read_field(json::Scanner& s, Field& f, Slot slot);
  bool read_args(json::Scanner& s, RawEvent& e);
  bool read_id2(json::Scanner& s, RawEvent& e);
  std::string scratch_[kSlots];  // decoded strings; reused, so no allocation per event
  std::string key_scratch_;
};

// The duration from `from` to `to` (0 when `to` is earlier); false when it does not
// fit in int64 ns, which makes the event "dur out of range".
inline bool span_between(TimeNs from, TimeNs to, TimeNs& dur) {
  if (__builtin_sub_overflow(to, from, &dur)) return false;
  if (dur < 0) dur = 0;
  return true;
}

// Why an entry was not used. Each has a fixed text in the report (unknown phases
// are counted per phase byte instead, see Counts).
enum class Skip : std::uint8_t {
  kNotObject,
  kNoPhase,
  kBadTs,
  kNonFiniteTs,
  kTsRange,
  kDurRange,
  kOrphanEnd,
  kOrphanAsyncEnd,
  kFlowNoStart,
  kFlowNoEnd,
  kClockSync,
  kCounterNoValues,
  kCutOff,
  kCount
};
const char* skip_text(Skip s);

// Loaded, but fixed up: reported as warnings with their counts.
enum class Note : std::uint8_t {
  kNegativeDur,
  kBadDur,
  kUnclosedB,
  kMismatchedE,
  kUnclosedAsync,
  kNonObjectArgs,
  kBadMetric,
  kCount
};

// What became of the entries: the numbers behind Trace::report.
struct Counts {
  std::uint64_t loaded = 0;    // entries turned into model objects
  std::uint64_t metadata = 0;  // M entries
  std::uint64_t skipped[static_cast<int>(Skip::kCount)] = {};
  std::uint64_t unknown_phase[256] = {};  // by the phase byte; [0] for longer phase strings
  std::uint64_t notes[static_cast<int>(Note::kCount)] = {};
};

// Identity of a flow or async chain: category, id (with how it was written) and,
// for process-scoped ids, the process.
struct LinkKey {
  std::uint64_t id = 0;
  StringId cat = 0;
  StringId name = 0;              // legacy S/T/F only: they also match on name
  std::uint32_t process = kNone;  // kNone: global
  bool operator<(const LinkKey& o) const {
    if (cat != o.cat) return cat < o.cat;
    if (id_kind != o.id_kind) return id_kind < o.id_kind;
    if (id != o.id) return id < o.id;
    if (process != o.process) return process < o.process;
    return name < o.name;
  }
  std::uint8_t id_kind = 0;  // 0 number/hex, 1 other string (id = its StringId), 2 none
  bool operator==(const LinkKey&) const = default;
};

// Flows and async spans: events that only mean something in pairs or chains.
class LinkTracker {
 public:
  explicit LinkTracker(TraceBuilder& builder) : builder_(builder) {}

  // v1 flow s/t/f on `track`. Matched at finish(), in time order per key.
  void flow_v1(const LinkKey& key, char phase, TimeNs ts, std::uint32_t track, bool bind_enclosing,
               StringId name);
  // v2 flow: bind_id with flow_in / flow_out on a slice starting at ts on `track`.
  void flow_v2(std::uint64_t bind_id, bool in, bool out, TimeNs ts, std::uint32_t track,
               StringId name, StringId cat);
  // Nestable b/e and legacy S/F, matched at finish() like flows: per key in time
  // order (catapult sorts them too; files are not in order), innermost first. For an
  // end, `s` carries its ts and args. n/T/p are instants placed by the decoder.
  void async_event(const LinkKey& key, bool is_begin, std::uint32_t track, const Slice& s);

  // Makes the v1 arrows and the async slices (closing spans still open at
  // `last_ts`), counting what the pending events became.
  void finish(TimeNs last_ts, Counts& counts);

 private:
  struct FlowEvent {
    LinkKey key;
    TimeNs ts_;
    TimeNs ts() const { return ts_; }
    std::uint32_t track;
    std::uint32_t order;  // file order, to break ties
    StringId name;
    char phase;
    bool enclosing;
  };
  struct AsyncEvent {
    LinkKey key;
    Slice slice;
    TimeNs ts() const { return slice.start; }
    std::uint32_t track;
    std::uint32_t order;
    bool is_begin;
  };
  struct OpenFlowV2 {
    FlowEnd from;
    StringId name, cat;
  };
  TraceBuilder& builder_;
  std::vector<FlowEvent> flow_events_;
  std::unordered_map<std::uint64_t, OpenFlowV2> open_v2_;
  std::vector<AsyncEvent> async_events_;
};

// Turns RawEvents into model objects and keeps the report's counts.
class EventDecoder {
 public:
  // `source` is the whole JSON text the events point into: with ArgsMode::kOnDemand,
  // args are stored as locations relative to it.
  EventDecoder(Trace& trace, TraceBuilder& builder, std::string_view source = {},
               ArgsMode args_mode = ArgsMode::kKeep);

  void decode(const RawEvent& e);
  void skip(Skip why) { ++counts_.skipped[static_cast<int>(why)]; }
  // Entries turned into model objects or applied as metadata so far.
  std::uint64_t usable() const { return counts_.loaded + counts_.metadata; }
  // End of input: closes what is open, makes flows, writes counts into the report.
  void finish();
  // Earliest and latest times seen (before baseTimeNanoseconds), for the shift.
  TimeNs min_ts() const { return min_ts_; }
  TimeNs max_ts() const { return max_ts_; }

 private:
  bool time_of(const Field& f, TimeNs& ns);
  // The dur of an X starting at `ts`; false (the event counted as skipped) when it is
  // out of range, nan or inf, or ends past the range of int64 ns.
  bool duration_of(const Field& f, TimeNs ts, TimeNs& dur);
  std::uint32_t process_of(const Field& pid);
  std::uint32_t thread_of(std::uint32_t process, const Field& tid, TrackKind kind);
  std::uint32_t async_track(std::uint32_t process, StringId cat);
  StringId intern(std::string_view s) { return trace_.strings.intern(s); }
  ArgsId store_args(const RawEvent& e);
  std::uint32_t metrics_of(const RawEvent& e);
  bool link_key(const RawEvent& e, StringId cat, LinkKey& key);
  TrackKind kind_for_cat(StringId cat, std::string_view text);

  void complete(const RawEvent& e, TimeNs ts);
  void begin(const RawEvent& e, TimeNs ts);
  void end(const RawEvent& e, TimeNs ts);
  void instant(const RawEvent& e, TimeNs ts, char phase);
  void counter(const RawEvent& e, TimeNs ts);
  void metadata(const RawEvent& e);
  void flow(const RawEvent& e, TimeNs ts, char phase);
  void async(const RawEvent& e, TimeNs ts, char phase);
  void v2_flow(const RawEvent& e, std::uint32_t track, TimeNs ts, StringId name, StringId cat);
  void saw_time(TimeNs t) {
    if (t < min_ts_) min_ts_ = t;
    if (t > max_ts_) max_ts_ = t;
  }

  Trace& trace_;
  TraceBuilder& builder_;
  std::string_view source_;
  ArgsMode args_mode_;
  LinkTracker links_;
  Counts counts_;
  TimeNs min_ts_ = INT64_MAX;
  TimeNs max_ts_ = INT64_MIN;
  std::vector<std::vector<Slice>> open_b_;  // per track index: the open B slices
  // One-entry caches: consecutive events usually share pid and category.
  std::int64_t last_pid_ = 0;
  std::uint32_t last_process_ = kNone;
  StringId last_cat_ = kNone;
  TrackKind last_cat_kind_ = TrackKind::kThread;
  std::string args_scratch_;
  std::string lax_scratch_;
  std::string name_scratch_;
  std::string key_scratch_;
  std::string value_scratch_;
};

// A syntax error inside the event array, and where reading went on after it.
struct SyntaxError {
  const char* at = nullptr;  // where the scanner found it
  std::string reason;
  bool cut_entry = false;  // it fell inside an entry: counted, neither decoded nor skipped
  const char* resumed_at = nullptr;  // the next event's '{'; null: reading stopped here
};

// Entries of one traceEvents array, parsed ahead of decoding in batches
// (chrome_event_batches.cc). On a large input a second thread parses while the
// calling thread decodes; the decoder sees the same events in the same order either
// way, so the model does not depend on it.
struct EventBatch {
  std::vector<RawEvent> events;
  std::size_t count = 0;            // events[0, count) are this batch's objects
  std::uint64_t entries = 0;        // all entries, objects or not
  std::uint64_t not_objects = 0;    // entries that were not objects
  std::uint64_t end_offset = 0;     // where the scanner stood after the batch
  std::vector<SyntaxError> errors;  // in text order, after this batch's events
  std::deque<std::string> owned;    // decoded strings the events point into (never move)
  std::size_t owned_used = 0;
};

enum class ArrayEnd : std::uint8_t {
  kClosed,     // "]" was read
  kUnclosed,   // the text ended where "]" or another entry could be (accepted)
  kError,      // a syntax error reading could not go on from: the last batch's last error
  kCancelled,  // the consumer asked to stop
};

// Walks the array whose '[' is at the scanner's position. `consume` is called on the
// calling thread with each batch in order, and returns false to stop. When it returns,
// `s` stands after the array (or at the error it stopped at).
//
// After a syntax error, reading goes on at the next event: the first '{' after the
// error that follows a ',' or a '}' and starts an object that parses, has a "ph", and
// is followed by ',' or ']'. Looking for one costs at most about the text's size in
// all, so hostile input stays linear; when there is none, reading stops there.
ArrayEnd read_event_array(json::Scanner& s, bool threaded,
                          const std::function<bool(EventBatch&)>& consume);

// read_chrome_trace_text with the choice of a parsing thread forced, so tests can
// check that both ways give the same model.
enum class Threading : std::uint8_t { kAuto, kNever, kAlways };
ReadResult read_text(std::string_view text, std::string_view name, const ReadOptions& opt,
                     Threading threading);

// The envelope members other than traceEvents (chrome_top_level.cc). Each is called
// with the scanner at the member's value and consumes it; false on a syntax error.
bool read_device_properties(json::Scanner& s, Trace& trace);
bool read_flopline_info(json::Scanner& s, Trace& trace);

}  // namespace flopline::trace::chrome
