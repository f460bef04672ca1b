#include "flopline/capture/capture_window.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>

namespace flopline::capture {
namespace {

bool same_lower(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

void set_error(std::string* error, std::string text) {
  if (error) *error = std::move(text);
}

// "2s", "500ms", "1.5s", "250us": the shortest exact spelling of a span.
std::string format_span(std::int64_t ns) {
  char buf[48];
  if (ns % 1'000'000'000 == 0) {
    std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(ns / 1'000'000'000));
  } else if (ns % 1'000'000 == 0) {
    std::snprintf(buf, sizeof buf, "%lldms", static_cast<long long>(ns / 1'000'000));
  } else if (ns % 1'000 == 0) {
    std::snprintf(buf, sizeof buf, "%lldus", static_cast<long long>(ns / 1'000));
  } else {
    std::snprintf(buf, sizeof buf, "%lldns", static_cast<long long>(ns));
  }
  return buf;
}

std::string range_words(std::string_view message) {
  std::string s = "NVTX range '";
  s.append(message);
  s += '\'';
  return s;
}

}  // namespace

std::optional<CaptureRangeKind> parse_capture_range(std::string_view text, std::string* error) {
  if (same_lower(text, "none")) return CaptureRangeKind::kNone;
  if (same_lower(text, "cudaProfilerApi")) return CaptureRangeKind::kCudaProfilerApi;
  if (same_lower(text, "nvtx")) return CaptureRangeKind::kNvtx;
  if (same_lower(text, "ondemand")) return CaptureRangeKind::kOnDemand;
  std::string e = "'";
  e.append(text).append("' is not none, cudaProfilerApi, nvtx or ondemand");
  set_error(error, std::move(e));
  return std::nullopt;
}

const char* to_string(CaptureRangeKind kind) {
  switch (kind) {
    case CaptureRangeKind::kCudaProfilerApi:
      return "cudaProfilerApi";
    case CaptureRangeKind::kNvtx:
      return "nvtx";
    case CaptureRangeKind::kOnDemand:
      return "ondemand";
    case CaptureRangeKind::kNone:
      break;
  }
  return "none";
}

const char* to_string(CommandResult result) {
  switch (result) {
    case CommandResult::kApplied:
      return "applied";
    case CommandResult::kAlreadyStarted:
      return "already started";
    case CommandResult::kAlreadyStopped:
      return "already stopped";
    case CommandResult::kLimitReached:
      return "no more windows";
    case CommandResult::kNotCommanded:
      return "not on demand";
    case CommandResult::kFinished:
      return "ended";
  }
  return "applied";
}

std::optional<NvtxCapturePattern> NvtxCapturePattern::parse(std::string_view text,
                                                            std::string* error) {
  auto fail = [&](const std::string& why) -> std::optional<NvtxCapturePattern> {
    std::string e = "'";
    e.append(text).append("' ").append(why);
    set_error(error, std::move(e));
    return std::nullopt;
  };
  if (text.empty()) return fail("is empty: give a range name, NAME or NAME@DOMAIN");
  // The escapes first: they decide which '@' separates the domain.
  std::size_t at = std::string_view::npos;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\') {
      if (i + 1 == text.size()) return fail("ends in a lone '\\' (write \\\\ for a backslash)");
      const char next = text[i + 1];
      if (next != '@' && next != '*' && next != '?' && next != '\\') {
        return fail(std::string("has '\\") + next +
                    "', which is no escape (\\@, \\*, \\? and \\\\ are)");
      }
      ++i;
    } else if (text[i] == '@') {
      at = i;
    }
  }
  NvtxCapturePattern p;
  p.text_ = std::string(text);
  const std::string_view name = at == std::string_view::npos ? text : text.substr(0, at);
  for (std::size_t i = 0; i < name.size(); ++i) {
    const bool escaped = name[i] == '\\';
    if (escaped) ++i;
    const bool wild = !escaped && (name[i] == '*' || name[i] == '?');
    p.name_ += name[i];
    p.wild_.push_back(wild);
    p.glob_ = p.glob_ || wild;
  }
  if (p.name_.empty()) return fail("has no range name before its '@'");
  if (at == std::string_view::npos) return p;
  const std::string_view domain = text.substr(at + 1);
  if (domain.empty()) {
    return fail("has nothing after its '@' (a domain's name, or * for any domain)");
  }
  if (domain == "*") {
    p.domain_ = Domain::kAny;
    return p;
  }
  p.domain_ = Domain::kNamed;
  for (std::size_t i = 0; i < domain.size(); ++i) {
    if (domain[i] == '\\') {
      ++i;
    } else if (domain[i] == '*' || domain[i] == '?') {
      return fail(
          "has a wildcard in its domain: a domain is matched exactly (@* is any "
          "domain; write \\* for a literal *)");
    }
    p.domain_name_ += domain[i];
  }
  return p;
}

bool NvtxCapturePattern::matches_message(std::string_view message) const {
  if (!glob_) return message == name_;
  // Glob with backtracking to the last '*': linear for the usual patterns, and never
  // worse than names x message.
  const std::size_t n = name_.size();
  std::size_t p = 0, m = 0;
  std::size_t star = std::string::npos, star_m = 0;
  while (m < message.size()) {
    if (p < n && wild_[p] && name_[p] == '*') {
      star = p++;
      star_m = m;
    } else if (p < n && ((wild_[p] && name_[p] == '?') || (!wild_[p] && name_[p] == message[m]))) {
      ++p;
      ++m;
    } else if (star != std::string::npos) {
      p = star + 1;
      m = ++star_m;
    } else {
      return false;
    }
  }
  while (p < n && wild_[p] && name_[p] == '*') ++p;
  return p == n;
}

bool NvtxCapturePattern::matches(std::string_view message,
                                 std::optional<std::string_view> domain_name) const {
  switch (domain_) {
    case Domain::kDefault:
      if (!domain_name || !domain_name->empty()) return false;
      break;
    case Domain::kNamed:
      if (!domain_name || *domain_name != domain_name_) return false;
      break;
    case Domain::kAny:
      break;
  }
  return matches_message(message);
}

std::optional<std::uint32_t> parse_capture_range_end(std::string_view text, std::string* error) {
  if (same_lower(text, "stop")) return 1;
  if (same_lower(text, "repeat")) return 0;
  constexpr std::string_view kRepeat = "repeat:";
  if (text.size() > kRepeat.size() && same_lower(text.substr(0, kRepeat.size()), kRepeat)) {
    const std::string_view n = text.substr(kRepeat.size());
    std::uint32_t v = 0;
    const auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), v);
    if (ec == std::errc() && end == n.data() + n.size() && v >= 1) return v;
    if (ec == std::errc() && end == n.data() + n.size() && v == 0) {
      set_error(error, "'repeat:0' records no window (repeat alone records every window)");
      return std::nullopt;
    }
  }
  std::string e = "'";
  e.append(text).append(
      "' is not stop, repeat or repeat:N (N >= 1 windows; flopline never ends the program, "
      "so nsys's -shutdown forms have no meaning here)");
  set_error(error, std::move(e));
  return std::nullopt;
}

std::optional<std::int64_t> parse_capture_seconds(std::string_view text, bool allow_zero,
                                                  std::string* error) {
  std::size_t i = 0;
  while (i < text.size() && ((text[i] >= '0' && text[i] <= '9') || text[i] == '.')) ++i;
  const std::string_view number = text.substr(0, i), unit = text.substr(i);
  double scale = 0;
  if (unit.empty() || unit == "s") scale = 1e9;
  if (unit == "ms") scale = 1e6;
  if (unit == "us") scale = 1e3;
  if (unit == "m" || unit == "min") scale = 60e9;
  if (unit == "h") scale = 3600e9;
  double value = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  const double ns = value * scale;
  if (number.empty() || ec != std::errc() || end != number.data() + number.size() || scale == 0 ||
      ns > static_cast<double>(kMaxCaptureSecondsNs) || (!allow_zero && ns < 1)) {
    std::string e = "'";
    e.append(text)
        .append(allow_zero ? "' is not a time of 0 or more" : "' is not a time above 0")
        .append(" (seconds, as 10 or 2.5, or with a unit: 500ms, 10s, 2m, 1h; at most 10^7 s)");
    set_error(error, std::move(e));
    return std::nullopt;
  }
  return static_cast<std::int64_t>(ns + 0.5);
}

std::string describe(const CaptureWindowSetting& s) {
  std::string d;
  if (s.range == CaptureRangeKind::kNvtx) {
    d = "nvtx '" + s.nvtx.text() + "' (";
    switch (s.nvtx.domain()) {
      case NvtxCapturePattern::Domain::kDefault:
        d += "default domain";
        break;
      case NvtxCapturePattern::Domain::kAny:
        d += "any domain";
        break;
      case NvtxCapturePattern::Domain::kNamed:
        d += "domain '" + s.nvtx.domain_name() + "'";
        break;
    }
    d += ')';
  } else if (s.range == CaptureRangeKind::kCudaProfilerApi) {
    d = "cudaProfilerApi";
  } else if (s.range == CaptureRangeKind::kOnDemand) {
    d = "ondemand";
  }
  if (s.range != CaptureRangeKind::kNone) {
    d += s.max_windows == 1   ? ", stop"
         : s.max_windows == 0 ? ", repeat"
                              : ", repeat:" + std::to_string(s.max_windows);
  }
  if (s.delay_ns > 0) d += (d.empty() ? "" : ", ") + ("delay " + format_span(s.delay_ns));
  if (s.duration_ns > 0) {
    d += (d.empty() ? "" : ", ") + ("duration " + format_span(s.duration_ns));
  }
  return d.empty() ? "none" : d;
}

std::optional<CaptureWindowSetting> parse_capture_window_setting(
    const CaptureWindowText& text, const CaptureWindowOptionNames& names, std::string* error) {
  CaptureWindowSetting s;
  std::string e;
  auto fail = [&](const char* option, const std::string& why) {
    set_error(error, std::string(option) + ": " + why);
    return std::nullopt;
  };
  if (!text.range.empty()) {
    const auto r = parse_capture_range(text.range, &e);
    if (!r) return fail(names.range, e);
    s.range = *r;
  }
  if (!text.nvtx_capture.empty()) {
    if (s.range != CaptureRangeKind::kNvtx) {
      return fail(names.nvtx_capture, std::string("needs ") + names.range +
                                          "=nvtx (it names the ranges that open "
                                          "windows)");
    }
    auto p = NvtxCapturePattern::parse(text.nvtx_capture, &e);
    if (!p) return fail(names.nvtx_capture, e);
    s.nvtx = std::move(*p);
  } else if (s.range == CaptureRangeKind::kNvtx) {
    return fail(names.range, std::string("nvtx needs ") + names.nvtx_capture +
                                 "=NAME[@DOMAIN] (the ranges that open windows)");
  }
  if (!text.range_end.empty()) {
    if (s.range == CaptureRangeKind::kNone) {
      return fail(names.range_end,
                  std::string("needs ") + names.range + " (cudaProfilerApi or nvtx)");
    }
    const auto n = parse_capture_range_end(text.range_end, &e);
    if (!n) return fail(names.range_end, e);
    s.max_windows = *n;
  } else if (s.range == CaptureRangeKind::kOnDemand) {
    s.max_windows = 0;  // every `flopline start` was asked for
  }
  if (!text.delay.empty()) {
    const auto d = parse_capture_seconds(text.delay, true, &e);
    if (!d) return fail(names.delay, e);
    s.delay_ns = *d;
  }
  if (!text.duration.empty()) {
    const auto d = parse_capture_seconds(text.duration, false, &e);
    if (!d) return fail(names.duration, e);
    s.duration_ns = *d;
  }
  return s;
}

// --- CaptureWindow ------------------------------------------------------------------

CaptureWindow::CaptureWindow(CaptureWindowSetting setting, TimeNs origin)
    : setting_(std::move(setting)),
      origin_(origin),
      delay_passed_(setting_.delay_ns <= 0),
      switched_on_(setting_.range == CaptureRangeKind::kNone) {}

bool CaptureWindow::trigger_on() const {
  switch (setting_.range) {
    case CaptureRangeKind::kCudaProfilerApi:
      return started_;
    case CaptureRangeKind::kNvtx:
      return matching_open_ > 0;
    case CaptureRangeKind::kNone:
    case CaptureRangeKind::kOnDemand:
      break;
  }
  return switched_on_;
}

bool CaptureWindow::limit_reached() const {
  return setting_.range != CaptureRangeKind::kNone && setting_.max_windows != 0 &&
         opened_count_ >= setting_.max_windows;
}

bool CaptureWindow::done() const {
  if (finished_) return true;
  if (open_) return false;
  if (limit_reached()) return true;
  // Without a trigger nothing turns off and on again after the duration closed it.
  return setting_.range == CaptureRangeKind::kNone && rearm_;
}

std::optional<TimeNs> CaptureWindow::next_deadline() const {
  if (done()) return std::nullopt;
  std::optional<TimeNs> next;
  if (!delay_passed_) next = origin_ + setting_.delay_ns;
  if (open_ && setting_.duration_ns > 0) {
    const TimeNs end = opened_at_ + setting_.duration_ns;
    next = next ? std::min(*next, end) : end;
  }
  return next;
}

std::string CaptureWindow::delay_reason() const {
  if (setting_.delay_ns <= 0) return "capture start";
  std::string s = "delay " + format_span(setting_.delay_ns) + " elapsed";
  if (setting_.range != CaptureRangeKind::kNone && !last_trigger_.empty()) {
    s += ", inside " + last_trigger_;
  }
  return s;
}

void CaptureWindow::open_window(TimeNs t, const std::string& why, std::uint32_t thread,
                                Changes& out) {
  ++opened_count_;
  open_ = true;
  opened_at_ = t;
  CaptureWindowRecord w;
  w.index = opened_count_;
  w.start = t;
  w.opened_by = why;
  w.open_thread = thread;
  windows_.push_back(std::move(w));
  out.push_back(WindowChange{true, t, opened_count_, why, thread});
}

void CaptureWindow::close_window(TimeNs t, const std::string& why, std::uint32_t thread,
                                 Changes& out) {
  open_ = false;
  CaptureWindowRecord& w = windows_.back();
  w.end = std::max(t, w.start);
  w.open = false;
  w.closed_by = why;
  w.close_thread = thread;
  out.push_back(WindowChange{false, w.end, w.index, why, thread});
}

void CaptureWindow::settle(TimeNs t, const std::string& open_why, const std::string& close_why,
                           std::uint32_t thread, Changes& out) {
  if (finished_) return;
  if (!trigger_on()) rearm_ = false;
  const bool want = delay_passed_ && trigger_on() && !rearm_;
  if (!open_ && want && !limit_reached()) {
    open_window(t, open_why, thread, out);
  } else if (open_ && !want) {
    close_window(t, close_why, thread, out);
  }
}

void CaptureWindow::advance(TimeNs t, Changes& out) {
  if (finished_) return;
  if (!delay_passed_ && t >= origin_ + setting_.delay_ns) {
    delay_passed_ = true;
    settle(t, delay_reason(), std::string(), 0, out);
  }
  if (open_ && setting_.duration_ns > 0 && t - opened_at_ >= setting_.duration_ns) {
    rearm_ = true;
    close_window(t, "duration " + format_span(setting_.duration_ns) + " elapsed", 0, out);
  }
}

CaptureWindow::Changes CaptureWindow::profiler_start(TimeNs t, std::uint32_t thread,
                                                     std::string_view call) {
  Changes out;
  advance(t, out);
  if (setting_.range != CaptureRangeKind::kCudaProfilerApi || done()) return out;
  if (started_) {
    ++ignored_;
    return out;
  }
  started_ = true;
  last_trigger_ = std::string(call);
  settle(t, last_trigger_, std::string(), thread, out);
  return out;
}

CaptureWindow::Changes CaptureWindow::profiler_stop(TimeNs t, std::uint32_t thread,
                                                    std::string_view call) {
  Changes out;
  advance(t, out);
  if (setting_.range != CaptureRangeKind::kCudaProfilerApi || done()) return out;
  if (!started_) {
    ++ignored_;
    return out;
  }
  started_ = false;
  settle(t, std::string(), std::string(call), thread, out);
  return out;
}

CaptureWindow::Changes CaptureWindow::nvtx_push(TimeNs t, std::uint32_t thread,
                                                std::uint64_t domain,
                                                std::optional<std::string_view> domain_name,
                                                std::string_view message) {
  Changes out;
  advance(t, out);
  if (!wants_nvtx()) return out;
  Stack& s = stacks_[StackKey{thread, domain}];
  ++s.depth;
  if (!setting_.nvtx.matches(message, domain_name)) return out;
  s.matching.emplace_back(s.depth, std::string(message));
  ++matching_open_;
  last_trigger_ = range_words(message);
  settle(t, last_trigger_, std::string(), thread, out);
  return out;
}

CaptureWindow::Changes CaptureWindow::nvtx_pop(TimeNs t, std::uint32_t thread,
                                               std::uint64_t domain) {
  Changes out;
  advance(t, out);
  if (!wants_nvtx()) return out;
  const auto it = stacks_.find(StackKey{thread, domain});
  if (it == stacks_.end() || it->second.depth == 0) {
    ++ignored_;
    return out;
  }
  Stack& s = it->second;
  std::optional<std::string> closed;
  if (!s.matching.empty() && s.matching.back().first == s.depth) {
    closed = std::move(s.matching.back().second);
    s.matching.pop_back();
    --matching_open_;
  }
  if (--s.depth == 0) stacks_.erase(it);  // threads come and go; keep only live stacks
  if (closed) settle(t, std::string(), range_words(*closed) + " ended", thread, out);
  return out;
}

CaptureWindow::Changes CaptureWindow::nvtx_start(TimeNs t, std::uint32_t thread, std::uint64_t id,
                                                 std::optional<std::string_view> domain_name,
                                                 std::string_view message) {
  Changes out;
  advance(t, out);
  if (!wants_nvtx() || !setting_.nvtx.matches(message, domain_name)) return out;
  if (id == 0) {
    ++ignored_;  // it could never be ended: leave it out rather than hold a window open
    return out;
  }
  const auto [it, fresh] = open_ids_.try_emplace(id, message);
  if (!fresh) {
    it->second = std::string(message);  // an id reused without its end seen
  } else {
    ++matching_open_;
  }
  last_trigger_ = range_words(message);
  settle(t, last_trigger_, std::string(), thread, out);
  return out;
}

CaptureWindow::Changes CaptureWindow::nvtx_end(TimeNs t, std::uint32_t thread, std::uint64_t id) {
  Changes out;
  advance(t, out);
  if (!wants_nvtx()) return out;
  const auto it = open_ids_.find(id);
  if (it == open_ids_.end()) return out;  // a range that did not match: nothing to do
  const std::string message = std::move(it->second);
  open_ids_.erase(it);
  --matching_open_;
  settle(t, std::string(), range_words(message) + " ended", thread, out);
  return out;
}

CaptureWindow::CommandOutcome CaptureWindow::command(TimeNs t, bool start, std::string_view why) {
  CommandOutcome r;
  advance(t, r.changes);
  if (!setting_.takes_commands()) {
    r.result = CommandResult::kNotCommanded;
  } else if (finished_) {
    r.result = CommandResult::kFinished;
  } else if (start && switched_on_) {
    r.result = CommandResult::kAlreadyStarted;
  } else if (!start && !switched_on_) {
    r.result = CommandResult::kAlreadyStopped;
  } else if (start && limit_reached()) {
    r.result = CommandResult::kLimitReached;
  } else {
    switched_on_ = start;
    if (start) last_trigger_ = std::string(why);
    settle(t, start ? std::string(why) : std::string(), start ? std::string() : std::string(why), 0,
           r.changes);
  }
  return r;
}

CaptureWindow::Changes CaptureWindow::tick(TimeNs t) {
  Changes out;
  advance(t, out);
  settle(t, delay_reason(), std::string(), 0, out);
  return out;
}

CaptureWindow::Changes CaptureWindow::finish(TimeNs t) {
  Changes out;
  advance(t, out);
  if (open_) close_window(t, "program end", 0, out);
  finished_ = true;
  return out;
}

}  // namespace flopline::capture
