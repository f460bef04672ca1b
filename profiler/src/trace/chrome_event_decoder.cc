// RawEvent -> model, one phase at a time. Every entry ends up counted exactly once:
// loaded, metadata, or skipped with a reason (Counts), so the report adds up.
#include <algorithm>

#include "flopline/trace/collectives.h"
#include "flopline/trace/json_value.h"
#include "flopline/trace/torch_ops.h"
#include "trace/chrome_reader_impl.h"
#include "trace/time_text.h"

namespace flopline::trace::chrome {
namespace {

// Categories Kineto (and flopline) put on GPU-side work; the 2021 Kineto schema
// capitalised the first three.
bool is_gpu_category(std::string_view cat) {
  return cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset" ||
         cat == "gpu_user_annotation" || cat == "Kernel" || cat == "Memcpy" || cat == "Memset";
}

bool is_number_like(json::Kind k) {
  return k == json::Kind::kNumber || k == json::Kind::kString;
}

// Copies the members of `object` except flopline's derived ones into `out`: they
// live in Trace::metrics and the writer derives them again.
void strip_metric_keys(std::string_view object, std::string& out) {
  out.clear();
  out += '{';
  json::Scanner s(object);
  s.consume('{');
  bool first = true;
  json::Token key;
  bool any = false;
  while (s.next_member(first, key)) {
    const char* member_begin = key.begin - 1;  // the key's opening quote
    s.skip_ws();
    if (!s.skip_value()) break;
    const std::string_view k = key.text();
    if (!key.escaped && (k == "flops" || k == "bytes" || k == "TFLOP/s" || k == "GB/s")) continue;
    if (any) out += ',';
    out.append(member_begin, s.pos());
    any = true;
  }
  out += '}';
}

}  // namespace

const char* skip_text(Skip s) {
  switch (s) {
    case Skip::kNotObject:
      return "entry is not a JSON object";
    case Skip::kNoPhase:
      return "no \"ph\" (phase)";
    case Skip::kBadTs:
      return "\"ts\" missing or not a number";
    case Skip::kNonFiniteTs:
      return "\"ts\" is nan or inf";
    case Skip::kTsRange:
      return "\"ts\" out of range";
    case Skip::kDurRange:
      return "\"dur\" out of range, nan or inf";
    case Skip::kOrphanEnd:
      return "E with no open B on its thread";
    case Skip::kOrphanAsyncEnd:
      return "async end (e/F) with no open begin";
    case Skip::kFlowNoStart:
      return "flow step or end (t/f) with no start";
    case Skip::kFlowNoEnd:
      return "flow start (s) with no step or end";
    case Skip::kClockSync:
      return "clock sync (c) not used";
    case Skip::kCounterNoValues:
      return "counter (C) with no numeric args";
    case Skip::kCutOff:
      return "cut off by a syntax error or the end of the file";
    case Skip::kCount:
      break;
  }
  return "?";
}

EventDecoder::EventDecoder(Trace& trace, TraceBuilder& builder, std::string_view source,
                           ArgsMode args_mode)
    : trace_(trace), builder_(builder), source_(source), args_mode_(args_mode), links_(builder) {}

void EventDecoder::decode(const RawEvent& e) {
  if (!e.ph.present()) return skip(Skip::kNoPhase);
  const char ph = e.phase();
  switch (ph) {
    case 'M':
      return metadata(e);
    case 'c':
      return skip(Skip::kClockSync);
    case 'X':
    case 'B':
    case 'E':
    case 'i':
    case 'I':
    case 'C':
    case 's':
    case 't':
    case 'f':
    case 'b':
    case 'n':
    case 'e':
    case 'S':
    case 'T':
    case 'p':
    case 'F':
    case 'O':
    case 'N':
    case 'D':
    case 'P':
    case 'R':
      break;
    default:
      ++counts_.unknown_phase[static_cast<unsigned char>(ph)];
      return;
  }
  TimeNs ts;
  if (!time_of(e.ts, ts)) return;
  saw_time(ts);
  switch (ph) {
    case 'X':
      return complete(e, ts);
    case 'B':
      return begin(e, ts);
    case 'E':
      return end(e, ts);
    case 'C':
      return counter(e, ts);
    case 's':
    case 't':
    case 'f':
      return flow(e, ts, ph);
    case 'b':
    case 'e':
    case 'n':
    case 'S':
    case 'T':
    case 'p':
    case 'F':
      return async(e, ts, ph);
    default:
      return instant(e, ts, ph);  // i I O N D P R
  }
}

bool EventDecoder::time_of(const Field& f, TimeNs& ns) {
  NumberStatus st = NumberStatus::kNotANumber;
  if (is_number_like(f.kind)) {
    st = micros_to_ns(f.text(), ns);
  } else if (f.kind == json::Kind::kNonFinite) {
    st = NumberStatus::kNonFinite;
  }
  switch (st) {
    case NumberStatus::kOk:
      return true;
    case NumberStatus::kNonFinite:
      skip(Skip::kNonFiniteTs);
      return false;
    case NumberStatus::kOutOfRange:
      skip(Skip::kTsRange);
      return false;
    case NumberStatus::kNotANumber:
      skip(Skip::kBadTs);
      return false;
  }
  return false;
}

// A missing dur is 0 (an instant-like slice); one that is not a number (a word, an
// object) or negative is 0 and noted. One that is a number the model cannot hold
// (beyond int64 ns, nan, inf, or ending past int64) is not made into another number:
// the event is skipped and counted.
bool EventDecoder::duration_of(const Field& f, TimeNs ts, TimeNs& dur) {
  dur = 0;
  if (!f.present()) return true;
  NumberStatus st = NumberStatus::kNotANumber;
  TimeNs ns = 0;
  if (is_number_like(f.kind)) {
    st = micros_to_ns(f.text(), ns);
  } else if (f.kind == json::Kind::kNonFinite) {
    st = NumberStatus::kNonFinite;
  }
  TimeNs end;
  switch (st) {
    case NumberStatus::kNotANumber:
      ++counts_.notes[static_cast<int>(Note::kBadDur)];
      return true;
    case NumberStatus::kNonFinite:
    case NumberStatus::kOutOfRange:
      skip(Skip::kDurRange);
      return false;
    case NumberStatus::kOk:
      break;
  }
  if (ns < 0) {
    ++counts_.notes[static_cast<int>(Note::kNegativeDur)];
    return true;
  }
  if (__builtin_add_overflow(ts, ns, &end)) {
    skip(Skip::kDurRange);
    return false;
  }
  dur = ns;
  return true;
}

// Numbers and decimal strings are one id space (Kineto writes "tid":"25738" and
// "tid":25738 for one thread); a missing pid is 0; other text becomes a label.
std::uint32_t EventDecoder::process_of(const Field& pid) {
  std::int64_t v = 0;
  if (pid.present() && !(is_number_like(pid.kind) && parse_int64(pid.text(), v))) {
    return builder_.process(pid.text());
  }
  if (last_process_ == kNone || v != last_pid_) {
    last_process_ = builder_.process(v);
    last_pid_ = v;
  }
  return last_process_;
}

std::uint32_t EventDecoder::thread_of(std::uint32_t process, const Field& tid, TrackKind kind) {
  std::int64_t v = 0;
  if (tid.present() && !(is_number_like(tid.kind) && parse_int64(tid.text(), v))) {
    return builder_.track(process, tid.text(), kind);
  }
  return builder_.track(process, v, kind);
}

// One async track per (process, category); its tid is the category's string id.
std::uint32_t EventDecoder::async_track(std::uint32_t process, StringId cat) {
  const std::uint32_t t =
      builder_.track(process, static_cast<std::int64_t>(cat), TrackKind::kAsync);
  if (trace_.tracks[t].name == 0) trace_.tracks[t].name = cat;
  return t;
}

TrackKind EventDecoder::kind_for_cat(StringId cat, std::string_view text) {
  if (cat != last_cat_) {
    last_cat_ = cat;
    last_cat_kind_ = is_gpu_category(text) ? TrackKind::kGpuStream : TrackKind::kThread;
  }
  return last_cat_kind_;
}

ArgsId EventDecoder::store_args(const RawEvent& e) {
  if (e.args_not_object) ++counts_.notes[static_cast<int>(Note::kNonObjectArgs)];
  if (e.args_members == 0) return kNoArgs;
  // On demand: only the position, unless analysis needs the text (flops -> precision,
  // a PyTorch operator's shapes -> FLOPs; operator_time.h; an NCCL kernel's collective,
  // size and communicator -> waits across ranks, collective_waits.h) or the text does not
  // lie in the source (never expected; kept then).
  if (args_mode_ == ArgsMode::kOnDemand && !e.has_flops && !e.has_bytes &&
      !has_torch_flop_formula(e.name.text()) && e.name.text() != "aten::copy_" &&
      !(e.cat.text() == "kernel" && is_nccl_kernel(e.name.text()))) {
    const auto at = reinterpret_cast<std::uintptr_t>(e.args.data());
    const auto base = reinterpret_cast<std::uintptr_t>(source_.data());
    if (at >= base && e.args.size() <= 0xffffffffu && at - base + e.args.size() <= source_.size()) {
      return trace_.args.add_location(at - base, static_cast<std::uint32_t>(e.args.size()));
    }
  }
  std::string_view text = e.args;
  if (e.args_lax) {  // nan, trailing commas, raw control bytes: store strict JSON
    lax_scratch_.clear();
    json::Scanner::write_strict(text, lax_scratch_);
    text = lax_scratch_;
  }
  if (e.has_flops || e.has_bytes) {
    strip_metric_keys(text, args_scratch_);
    if (args_scratch_.size() == 2) return kNoArgs;  // "{}"
    text = args_scratch_;
  }
  return trace_.args.add_json(text);
}

std::uint32_t EventDecoder::metrics_of(const RawEvent& e) {
  if (e.bad_metric) ++counts_.notes[static_cast<int>(Note::kBadMetric)];
  if (!e.has_flops && !e.has_bytes) return kNone;
  return builder_.add_metrics(SliceMetrics{e.has_flops ? e.flops : -1, e.has_bytes ? e.bytes : -1});
}

// The id of a flow or async chain; false when the event has none.
bool EventDecoder::link_key(const RawEvent& e, StringId cat, LinkKey& key) {
  const Field& idf = e.id2.present() ? e.id2 : e.id;
  if (!idf.present()) return false;
  key.cat = cat;
  std::uint64_t v = 0;
  if (parse_id(idf.text(), v)) {
    key.id = v;
    key.id_kind = 0;
  } else {
    key.id = intern(idf.text());
    key.id_kind = 1;
  }
  return true;
}

void EventDecoder::complete(const RawEvent& e, TimeNs ts) {
  TimeNs dur;
  if (!duration_of(e.dur, ts, dur)) return;
  const StringId cat = intern(e.cat.text());
  const StringId name = intern(e.name.text());
  const std::uint32_t track = thread_of(process_of(e.pid), e.tid, kind_for_cat(cat, e.cat.text()));
  saw_time(ts + dur);
  builder_.add_slice(track, Slice{ts, dur, name, cat, store_args(e), metrics_of(e)});
  ++counts_.loaded;
  if (e.flow_in || e.flow_out) v2_flow(e, track, ts, name, cat);
}

void EventDecoder::begin(const RawEvent& e, TimeNs ts) {
  const StringId cat = intern(e.cat.text());
  const StringId name = intern(e.name.text());
  const std::uint32_t track = thread_of(process_of(e.pid), e.tid, kind_for_cat(cat, e.cat.text()));
  if (open_b_.size() <= track) open_b_.resize(track + 1);
  open_b_[track].push_back(Slice{ts, 0, name, cat, store_args(e), metrics_of(e)});
  if (e.flow_in || e.flow_out) v2_flow(e, track, ts, name, cat);
}

// E closes the innermost open B of its thread, whatever its name (as chrome://tracing
// does); a differing name is counted.
void EventDecoder::end(const RawEvent& e, TimeNs ts) {
  const std::uint32_t track = thread_of(process_of(e.pid), e.tid, TrackKind::kThread);
  if (open_b_.size() <= track || open_b_[track].empty()) return skip(Skip::kOrphanEnd);
  Slice s = open_b_[track].back();
  open_b_[track].pop_back();
  if (!span_between(s.start, ts, s.dur)) {  // the B and this E
    skip(Skip::kDurRange);
    return skip(Skip::kDurRange);
  }
  if (e.name.present() && trace_.str(s.name) != e.name.text())
    ++counts_.notes[static_cast<int>(Note::kMismatchedE)];
  if (s.args == kNoArgs)
    s.args = store_args(e);  // catapult merges E's args; here only when B had none
  if (s.metrics == kNone) s.metrics = metrics_of(e);
  builder_.add_slice(track, s);
  counts_.loaded += 2;
}

// i/I (scope t/p/g), P samples, R marks, O/N/D object events. Process- and
// global-scoped instants and object events go on the process's tid-0 track.
void EventDecoder::instant(const RawEvent& e, TimeNs ts, char phase) {
  InstantScope scope = InstantScope::kThread;
  if (phase == 'O' || phase == 'N' || phase == 'D') {
    scope = InstantScope::kProcess;
  } else if (phase == 'i' || phase == 'I') {
    if (e.scope.text() == "g") scope = InstantScope::kGlobal;
    if (e.scope.text() == "p") scope = InstantScope::kProcess;
  }
  const StringId cat = intern(e.cat.text());
  const std::uint32_t process = process_of(e.pid);
  const std::uint32_t track = scope == InstantScope::kThread
                                  ? thread_of(process, e.tid, kind_for_cat(cat, e.cat.text()))
                                  : builder_.track(process, std::int64_t{0});
  builder_.add_instant(track, Instant{ts, intern(e.name.text()), cat, store_args(e), scope, phase});
  ++counts_.loaded;
}

// {"name":N,"id":I,"args":{"k":v,...}} feeds series (N[I], k) for every numeric k.
void EventDecoder::counter(const RawEvent& e, TimeNs ts) {
  const std::uint32_t process = process_of(e.pid);
  StringId name;
  if (e.id.present()) {
    name_scratch_.assign(e.name.text()).append("[").append(e.id.text()).append("]");
    name = intern(name_scratch_);
  } else {
    name = intern(e.name.text());
  }
  const StringId cat = intern(e.cat.text());
  bool any = false;
  json::Scanner s(e.args);
  bool first = true;
  json::Token key;
  json::Token value;
  if (s.consume('{')) {
    while (s.next_member(first, key)) {
      if (!s.scan_value(value)) break;
      if (value.kind == json::Kind::kObject || value.kind == json::Kind::kArray) {
        if (!s.skip_value()) break;
        continue;
      }
      double v = 0;
      if (value.kind == json::Kind::kNumber) {
        if (!parse_double(value.text(), v)) continue;
      } else if (value.kind == json::Kind::kString) {
        if (!parse_double(json::Scanner::string_value(value, value_scratch_), v)) continue;
      } else {
        continue;
      }
      const StringId k = intern(json::Scanner::string_value(key, key_scratch_));
      builder_.add_counter_point(builder_.counter_series(process, name, k, cat), ts, v);
      any = true;
    }
  }
  if (!any) return skip(Skip::kCounterNoValues);
  ++counts_.loaded;
}

// process_name/labels/sort_index and thread_name/sort_index are applied; other M
// names (num_cpus, overhead...) are counted as metadata and otherwise ignored.
void EventDecoder::metadata(const RawEvent& e) {
  ++counts_.metadata;
  const std::string_view what = e.name.text();
  const bool process_level =
      what == "process_name" || what == "process_labels" || what == "process_sort_index";
  const bool thread_level = what == "thread_name" || what == "thread_sort_index";
  if (!process_level && !thread_level) return;
  const std::uint32_t process = process_of(e.pid);
  const bool wants_sort = what == "process_sort_index" || what == "thread_sort_index";
  const std::string_view member = wants_sort                 ? "sort_index"
                                  : what == "process_labels" ? "labels"
                                                             : "name";
  const std::optional<std::string_view> value = json_member(e.args, member);
  if (!value) return;
  if (wants_sort) {
    const std::optional<std::int64_t> index = json_int(*value);
    if (!index) return;
    if (process_level) {
      trace_.processes[process].sort_index = *index;
    } else {
      trace_.tracks[thread_of(process, e.tid, TrackKind::kThread)].sort_index = *index;
    }
    return;
  }
  const std::optional<std::string> text = json_string(*value);
  if (!text) return;
  const StringId id = intern(*text);
  if (what == "process_name") {
    trace_.processes[process].name = id;
  } else if (what == "process_labels") {
    trace_.processes[process].labels = id;
  } else {
    trace_.tracks[thread_of(process, e.tid, TrackKind::kThread)].name = id;
  }
}

// v1 flows: s and t bind to the slice enclosing them; f binds to the enclosing slice
// with "bp":"e" (Kineto always writes it) and to the next slice without.
void EventDecoder::flow(const RawEvent& e, TimeNs ts, char phase) {
  const StringId cat = intern(e.cat.text());
  const std::uint32_t process = process_of(e.pid);
  LinkKey key;
  if (!link_key(e, cat, key)) return skip(phase == 's' ? Skip::kFlowNoEnd : Skip::kFlowNoStart);
  if (e.id2.present() && e.id2_local) key.process = process;
  const std::uint32_t track = thread_of(process, e.tid, TrackKind::kThread);
  const bool enclosing = phase != 'f' || e.bp.text() == "e";
  links_.flow_v1(key, phase, ts, track, enclosing, intern(e.name.text()));
}

void EventDecoder::v2_flow(const RawEvent& e, std::uint32_t track, TimeNs ts, StringId name,
                           StringId cat) {
  const Field& idf = e.bind_id.present() ? e.bind_id : e.id;
  if (!idf.present()) return;
  std::uint64_t id = 0;
  if (!parse_id(idf.text(), id)) id = intern(idf.text());
  links_.flow_v2(id, e.flow_in, e.flow_out, ts, track, name, cat);
}

// Nestable b/n/e match on (process, category, id) with a stack (an id2 "global" id
// drops the process); legacy S/T/F match on (category, name, id) in any process.
// Both become slices on the async track of the beginning event's process and category.
void EventDecoder::async(const RawEvent& e, TimeNs ts, char phase) {
  const StringId cat = intern(e.cat.text());
  const StringId name = intern(e.name.text());
  const std::uint32_t process = process_of(e.pid);
  LinkKey key;
  if (!link_key(e, cat, key)) {
    key.cat = cat;
    key.id_kind = 2;  // no id: all such events of the category form one chain
  }
  const bool legacy = phase == 'S' || phase == 'T' || phase == 'p' || phase == 'F';
  if (legacy) {
    key.name = name;  // legacy spans may end in another process (catapult's async_begin_end)
  } else if (!(e.id2.present() && !e.id2_local)) {
    key.process = process;
  }
  const std::uint32_t track = async_track(process, cat);
  switch (phase) {
    case 'b':
    case 'S':
      links_.async_event(key, true, track, Slice{ts, 0, name, cat, store_args(e), metrics_of(e)});
      return;
    case 'e':
    case 'F':
      links_.async_event(key, false, track, Slice{ts, 0, name, cat, store_args(e), kNone});
      return;
    default:  // n, T, p: a point on the span's track
      builder_.add_instant(track,
                           Instant{ts, name, cat, store_args(e), InstantScope::kThread, phase});
      ++counts_.loaded;
      return;
  }
}

void EventDecoder::finish() {
  const TimeNs last = max_ts_ == INT64_MIN ? 0 : max_ts_;
  for (std::uint32_t track = 0; track < open_b_.size(); ++track) {
    for (Slice& s : open_b_[track]) {
      if (!span_between(s.start, last, s.dur)) {
        skip(Skip::kDurRange);
        continue;
      }
      builder_.add_slice(track, s);
      ++counts_.loaded;
      ++counts_.notes[static_cast<int>(Note::kUnclosedB)];
    }
  }
  open_b_.clear();
  links_.finish(last, counts_);

  TraceReport& r = trace_.report;
  r.events_loaded = counts_.loaded;
  r.events_metadata = counts_.metadata;
  for (int i = 0; i < static_cast<int>(Skip::kCount); ++i) {
    if (counts_.skipped[i] != 0) r.skip(skip_text(static_cast<Skip>(i)), counts_.skipped[i]);
  }
  for (int c = 0; c < 256; ++c) {
    if (counts_.unknown_phase[c] == 0) continue;
    const bool printable = c > 0x20 && c < 0x7f;
    r.skip(printable ? std::string("unknown phase '") + static_cast<char>(c) + "'"
                     : std::string("unknown phase"),
           counts_.unknown_phase[c]);
  }
  auto note = [&](Note n, const char* text) {
    const std::uint64_t count = counts_.notes[static_cast<int>(n)];
    if (count != 0) r.warnings.push_back(std::to_string(count) + " " + text);
  };
  note(Note::kUnclosedB, "B events never closed (closed at the last timestamp)");
  note(Note::kMismatchedE, "E events whose name differs from the B they closed");
  note(Note::kUnclosedAsync, "async spans never closed (closed at the last timestamp)");
  note(Note::kNegativeDur, "X events with a negative dur (taken as 0)");
  note(Note::kBadDur, "X events whose dur is not a number (taken as 0)");
  note(Note::kNonObjectArgs, "events whose args is not an object (ignored)");
  note(Note::kBadMetric,
       "events whose flops or bytes is negative, nan, inf, beyond the range of a double or not a "
       "number (a string, true, null; dropped: their rates are unknown)");
}

}  // namespace flopline::trace::chrome
