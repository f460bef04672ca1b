// The hot loop of the reader: one traceEvents entry's members into a RawEvent.
// Known keys are recognised by length and a fixed-size compare; values stay views
// into the input, and args objects are checked while skipped, not parsed into a tree.
#include <cmath>

#include "trace/chrome_reader_impl.h"
#include "trace/time_text.h"

namespace flopline::trace::chrome {
namespace {

enum class Member : std::uint8_t {
  kOther,
  kPh,
  kName,
  kCat,
  kScope,
  kBp,
  kTs,
  kDur,
  kPid,
  kTid,
  kId,
  kBindId,
  kId2,
  kArgs,
  kFlowIn,
  kFlowOut
};

Member classify(std::string_view k) {
  switch (k.size()) {
    case 1:
      return k[0] == 's' ? Member::kScope : Member::kOther;
    case 2:
      if (k == "ph") return Member::kPh;
      if (k == "ts") return Member::kTs;
      if (k == "id") return Member::kId;
      if (k == "bp") return Member::kBp;
      return Member::kOther;
    case 3:
      if (k == "cat") return Member::kCat;
      if (k == "pid") return Member::kPid;
      if (k == "tid") return Member::kTid;
      if (k == "dur") return Member::kDur;
      if (k == "id2") return Member::kId2;
      return Member::kOther;
    case 4:
      if (k == "name") return Member::kName;
      if (k == "args") return Member::kArgs;
      return Member::kOther;
    case 7:
      if (k == "bind_id") return Member::kBindId;
      if (k == "flow_in") return Member::kFlowIn;
      return Member::kOther;
    case 8:
      return k == "flow_out" ? Member::kFlowOut : Member::kOther;
    default:
      return Member::kOther;
  }
}

bool read_bool(json::Scanner& s, bool& out) {
  json::Token t;
  if (!s.scan_value(t)) return false;
  if (t.kind == json::Kind::kObject || t.kind == json::Kind::kArray) return s.skip_value();
  out = t.kind == json::Kind::kTrue;
  return true;
}

}  // namespace

bool EventParser::parse(json::Scanner& s, RawEvent& e) {
  e.reset();
  s.set_pos(s.pos() + 1);  // the '{'
  bool first = true;
  json::Token key;
  while (s.next_member(first, key)) {
    std::string_view k = key.escaped ? json::Scanner::string_value(key, key_scratch_) : key.text();
    bool ok = true;
    switch (classify(k)) {
      case Member::kPh:
        ok = read_field(s, e.ph, kPh);
        break;
      case Member::kName:
        ok = read_field(s, e.name, kName);
        break;
      case Member::kCat:
        ok = read_field(s, e.cat, kCat);
        break;
      case Member::kScope:
        ok = read_field(s, e.scope, kScope);
        break;
      case Member::kBp:
        ok = read_field(s, e.bp, kBp);
        break;
      case Member::kTs:
        ok = read_field(s, e.ts, kTs);
        break;
      case Member::kDur:
        ok = read_field(s, e.dur, kDur);
        break;
      case Member::kPid:
        ok = read_field(s, e.pid, kPid);
        break;
      case Member::kTid:
        ok = read_field(s, e.tid, kTid);
        break;
      case Member::kId:
        ok = read_field(s, e.id, kId);
        break;
      case Member::kBindId:
        ok = read_field(s, e.bind_id, kBindId);
        break;
      case Member::kId2:
        ok = read_id2(s, e);
        break;
      case Member::kArgs:
        ok = read_args(s, e);
        break;
      case Member::kFlowIn:
        ok = read_bool(s, e.flow_in);
        break;
      case Member::kFlowOut:
        ok = read_bool(s, e.flow_out);
        break;
      case Member::kOther:
        ok = s.skip_value();
        break;
    }
    if (!ok) return false;
  }
  return !s.failed();
}

bool EventParser::read_field(json::Scanner& s, Field& f, Slot slot) {
  json::Token t;
  if (!s.scan_value(t)) return false;
  if (t.kind == json::Kind::kString) {
    f.set(t.kind, t.escaped ? json::Scanner::string_value(t, scratch_[slot]) : t.text());
  } else if (t.kind == json::Kind::kObject || t.kind == json::Kind::kArray) {
    const char* begin = s.pos();
    if (!s.skip_value()) return false;
    f.set(t.kind, std::string_view(begin, static_cast<std::size_t>(s.pos() - begin)));
  } else {
    f.set(t.kind, t.text());
  }
  return true;
}

// Walks the top-level members of args, so flopline's "flops"/"bytes" are seen, and
// skips (checking) everything below. The text itself is stored later, as written.
bool EventParser::read_args(json::Scanner& s, RawEvent& e) {
  s.skip_ws();
  if (s.eof()) return s.skip_value();  // reports the error
  const char* begin = s.pos();
  if (s.peek() != '{') {
    e.args = {};
    e.args_members = 0;
    e.args_not_object = true;
    return s.skip_value();
  }
  s.reset_laxness();
  s.set_pos(begin + 1);
  bool first = true;
  json::Token key;
  json::Token value;
  std::uint32_t members = 0;
  e.has_flops = e.has_bytes = false;
  while (s.next_member(first, key)) {
    ++members;
    const std::string_view k = key.text();
    const bool is_flops = !key.escaped && k == "flops";
    const bool is_bytes = !key.escaped && k == "bytes";
    if (!is_flops && !is_bytes) {
      if (!s.skip_value()) return false;
      continue;
    }
    if (!s.scan_value(value)) return false;
    if (value.kind == json::Kind::kObject || value.kind == json::Kind::kArray) {
      if (!s.skip_value()) return false;
      continue;
    }
    if (value.kind != json::Kind::kNumber && value.kind != json::Kind::kNonFinite) {
      // One rule for counts: a JSON number, finite and not negative. "5" as a string,
      // true or null is dropped and said, as 1e400 is.
      e.bad_metric = true;
      continue;
    }
    // A count the model cannot hold (1e400 parses as inf) is dropped, never clamped.
    double v = 0;
    if (!parse_double(value.text(), v) || !std::isfinite(v) || v < 0) {
      e.bad_metric = true;
      continue;
    }
    (is_flops ? e.flops : e.bytes) = v;
    (is_flops ? e.has_flops : e.has_bytes) = true;
  }
  if (s.failed()) return false;
  e.args = std::string_view(begin, static_cast<std::size_t>(s.pos() - begin));
  e.args_members = members;
  e.args_not_object = false;
  e.args_lax = s.laxness().any();
  return true;
}

// "id2":{"local":X} or {"global":X}; anything else is taken as a global id.
bool EventParser::read_id2(json::Scanner& s, RawEvent& e) {
  s.skip_ws();
  if (s.eof() || s.peek() != '{') {
    e.id2_local = false;
    return read_field(s, e.id2, kId2);
  }
  s.set_pos(s.pos() + 1);
  bool first = true;
  json::Token key;
  while (s.next_member(first, key)) {
    const std::string_view k = key.text();
    if (!key.escaped && (k == "local" || k == "global")) {
      e.id2_local = k == "local";
      if (!read_field(s, e.id2, kId2)) return false;
    } else if (!s.skip_value()) {
      return false;
    }
  }
  return !s.failed();
}

}  // namespace flopline::trace::chrome
