// The Chrome-trace reader's top level: getting the bytes, walking the envelope
// (bare array or object with traceEvents), progress and cancellation, and deciding
// what is fatal.
//
// Syntax errors: inside the event array, reading goes on at the next event (see
// read_event_array); the entry the error cut is counted as skipped and the report
// warns "syntax error at byte N (line L:C): REASON; ...". Where reading cannot go on
// (no event follows, or the error is outside the array) it stops: what was read
// before is kept with the warning "truncated at byte N (line L:C): REASON". A missing
// final ']' or '}' at the end of the text is not an error at all (chrome://tracing
// accepts it), only noted. Wrong types follow the same rule ("traceEvents is a
// number, expected an array").
//
// Fatal: an error with no usable event (loaded or applied as metadata) read at all;
// more than half of the text left unread by errors (what was read would misrepresent
// the file); a file whose entries were all skipped ("no trace events could be read:
// ..."); text in UTF-16/32; running out of memory; cancelling.
#include "flopline/trace/chrome_reader.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <thread>

#include "flopline/trace/builder.h"
#include "trace/chrome_reader_impl.h"
#include "trace/file_io.h"
#include "trace/message_text.h"
#include "trace/text_format.h"
#include "trace/time_text.h"

namespace flopline::trace {

std::string ReadError::message() const {
  if (line == 0) return file + ": " + reason;
  return file + ":" + std::to_string(line) + ":" + std::to_string(column) + " (byte " +
         std::to_string(offset) + "): " + reason;
}

namespace chrome {
namespace {

constexpr std::uint64_t kProgressStep = 4u << 20;  // bytes between progress calls
constexpr std::size_t kMaxExtraBytes = 1u << 20;   // larger unknown top-level members are dropped
// From this size on, a second thread parses events while this one decodes them.
constexpr std::size_t kThreadedMinBytes = 8u << 20;
// Syntax errors read past are listed one by one up to this many, then summed up.
constexpr std::uint64_t kListedSyntaxErrors = 10;

std::string percent(std::uint64_t part, std::uint64_t whole) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%",
                whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
  return buf;
}

const char* kind_name(json::Kind k) {
  switch (k) {
    case json::Kind::kObject:
      return "an object";
    case json::Kind::kArray:
      return "an array";
    case json::Kind::kString:
      return "a string";
    case json::Kind::kNumber:
      return "a number";
    case json::Kind::kTrue:
    case json::Kind::kFalse:
      return "a boolean";
    case json::Kind::kNull:
      return "null";
    case json::Kind::kNonFinite:
      return "a non-finite number";
    case json::Kind::kNone:
      break;
  }
  return "nothing";
}

class TextReader {
 public:
  TextReader(std::string_view text, std::string_view name, const ReadOptions& opt,
             Threading threading, ReadResult& out)
      : text_(text),
        name_(name),
        opt_(opt),
        threading_(threading),
        out_(out),
        trace_(out.trace),
        s_(text),
        builder_(trace_),
        decoder_(trace_, builder_, text, opt.args) {}

  void run();
  // How far reading got, for the message when memory runs out.
  std::uint64_t offset() const { return s_.offset() > text_.size() ? text_.size() : s_.offset(); }
  std::uint64_t entries() const { return entries_; }

 private:
  bool read_events();
  bool read_object();
  bool read_member(std::string_view key);
  // Applies the fatal-or-warning rule to the scanner's error (or to `reason` at `at`).
  void stop(const char* at, const std::string& reason);
  void stop_on_scanner_error() { stop(s_.error_at(), s_.error_reason()); }
  void on_syntax_error(const SyntaxError& e);
  // The rules that make a read with errors fatal after all (see the top of this file).
  void judge_damage();
  ReadError error_at(const char* at, std::string reason) const;
  bool progress(std::uint64_t offset);
  void shift_by_base();
  std::string where(const char* at) const;

  std::string_view text_;
  std::string_view name_;
  const ReadOptions& opt_;
  Threading threading_;
  ReadResult& out_;
  Trace& trace_;
  json::Scanner s_;
  TraceBuilder builder_;
  EventDecoder decoder_;
  std::uint64_t entries_ = 0;
  bool found_events_ = false;
  bool stopped_ = false;
  const char* stopped_at_ = nullptr;  // where an error ended the reading
  const char* first_error_at_ = nullptr;
  std::string first_error_;
  std::uint64_t resumed_errors_ = 0;  // syntax errors read past
  std::uint64_t bytes_skipped_ = 0;   // by them
  SyntaxError last_error_;            // the array's error reading stopped at
  TimeNs base_ = 0;
  std::uint64_t next_progress_ = 0;
};

ReadError TextReader::error_at(const char* at, std::string reason) const {
  ReadError e;
  e.file = std::string(name_);
  if (at != nullptr) {
    e.offset = static_cast<std::uint64_t>(at - text_.data());
    json::line_column(text_, e.offset, e.line, e.column);
  }
  e.reason = std::move(reason);
  return e;
}

std::string TextReader::where(const char* at) const {
  const ReadError e = error_at(at, "");
  return "byte " + std::to_string(e.offset) + " (line " + std::to_string(e.line) + ":" +
         std::to_string(e.column) + ")";
}

void TextReader::stop(const char* at, const std::string& reason) {
  stopped_ = true;
  stopped_at_ = at;
  if (first_error_at_ == nullptr) {
    first_error_at_ = at;
    first_error_ = reason;
  }
  if (decoder_.usable() == 0) {
    // Nothing usable: the first error is what the file's problem is.
    out_.error = error_at(first_error_at_, first_error_);
    return;
  }
  const std::uint64_t left =
      text_.size() -
      std::min<std::uint64_t>(text_.size(), static_cast<std::uint64_t>(at - text_.data()));
  std::string w = "truncated at " + where(at) + ": " + reason + "; the " +
                  std::to_string(decoder_.usable()) + " events before it were kept";
  if (left > 0) w += ", the " + with_thousands(left) + " bytes after it were not read";
  trace_.report.warnings.push_back(std::move(w));
}

void TextReader::on_syntax_error(const SyntaxError& e) {
  if (e.cut_entry) decoder_.skip(Skip::kCutOff);
  if (e.resumed_at == nullptr) {
    last_error_ = e;
    return;
  }
  if (first_error_at_ == nullptr) {
    first_error_at_ = e.at;
    first_error_ = e.reason;
  }
  const auto skipped = static_cast<std::uint64_t>(e.resumed_at - e.at);
  bytes_skipped_ += skipped;
  if (++resumed_errors_ <= kListedSyntaxErrors) {
    trace_.report.warnings.push_back("syntax error at " + where(e.at) + ": " + e.reason +
                                     "; reading went on at the next event, byte " +
                                     std::to_string(e.resumed_at - text_.data()) + " (" +
                                     with_thousands(skipped) + " bytes skipped)");
  }
}

void TextReader::judge_damage() {
  TraceReport& r = trace_.report;
  if (resumed_errors_ > kListedSyntaxErrors) {
    r.warnings.push_back(with_thousands(resumed_errors_ - kListedSyntaxErrors) +
                         " more syntax errors read past the same way");
  }
  const std::uint64_t after_stop =
      stopped_at_ == nullptr
          ? 0
          : text_.size() - std::min<std::uint64_t>(text_.size(), static_cast<std::uint64_t>(
                                                                     stopped_at_ - text_.data()));
  r.text_bytes = text_.size();
  r.text_bytes_unread = std::min<std::uint64_t>(text_.size(), after_stop + bytes_skipped_);
  if (out_.error || first_error_at_ == nullptr) return;
  if (decoder_.usable() == 0) {
    out_.error = error_at(first_error_at_, first_error_);
  } else if (r.text_bytes_unread * 2 > r.text_bytes) {
    out_.error = error_at(first_error_at_, first_error_ + "; " +
                                               with_thousands(r.text_bytes_unread) + " of the " +
                                               with_thousands(r.text_bytes) + " bytes of text (" +
                                               percent(r.text_bytes_unread, r.text_bytes) +
                                               ") could not be read past this and later errors");
  }
}

bool TextReader::progress(std::uint64_t offset) {
  next_progress_ = offset + kProgressStep;
  if (!opt_.progress) return true;
  if (opt_.progress(offset, text_.size(), entries_)) return true;
  out_.error = error_at(nullptr, "cancelled");
  stopped_ = true;
  return false;
}

void TextReader::run() {
  // Args are kept as text; in Kineto traces they are about 45% of the file. Reserving
  // that much address space up front (pages are touched only as they fill) saves the
  // copies and page faults of growing a vector of hundreds of MB step by step.
  if (opt_.args == ArgsMode::kKeep) trace_.args.reserve_bytes(text_.size() / 2);
  if (text_.empty()) {
    out_.error = error_at(nullptr, "file is empty");
    return;
  }
  if (const std::string encoding = unsupported_text_encoding(text_.substr(0, 4));
      !encoding.empty()) {
    out_.error = error_at(text_.data(), encoding);
    return;
  }
  if (text_.size() >= 3 && std::memcmp(text_.data(), "\xef\xbb\xbf", 3) == 0)
    s_.set_pos(s_.pos() + 3);  // UTF-8 BOM
  s_.skip_ws();
  if (s_.eof()) {
    out_.error = error_at(nullptr, "file is empty (only whitespace)");
    return;
  }
  const char first = s_.peek();
  bool completed = false;
  if (first == '[') {
    found_events_ = true;
    completed = read_events();
  } else if (first == '{') {
    completed = read_object();
  } else {
    std::string why =
        "expected a JSON object or array at top level, found " + s_.describe(s_.pos());
    if (s_.pos() == text_.data()) {  // binary formats have their signature at the start
      if (const std::string what = describe_binary_start(text_.substr(0, 16)); !what.empty())
        why += ": " + what;
    }
    out_.error = error_at(s_.pos(), std::move(why));
    return;
  }
  if (completed) {
    s_.skip_ws();
    if (!s_.eof())
      trace_.report.warnings.push_back("text after the end of the trace, at " + where(s_.pos()) +
                                       ", ignored");
  }
  if (!stopped_ && opt_.progress && !opt_.progress(text_.size(), text_.size(), entries_)) {
    out_.error = error_at(nullptr, "cancelled");
  }

  decoder_.finish();
  TraceReport& r = trace_.report;
  r.events_total = entries_;
  judge_damage();
  if (out_.error) return;
  if (!found_events_) {
    out_.error = error_at(nullptr, "no \"traceEvents\" member: not a Chrome trace");
    return;
  }
  if (entries_ > 0 && decoder_.usable() == 0) {
    std::string why =
        "no trace events could be read: " + std::to_string(entries_) + " entries, all skipped (";
    for (std::size_t i = 0; i < r.skip_reasons.size(); ++i) {
      if (i > 0) why += ", ";
      why += r.skip_reasons[i].first + ": " + std::to_string(r.skip_reasons[i].second);
    }
    out_.error = error_at(nullptr, why + ")");
    return;
  }
  if (entries_ == 0) r.warnings.push_back("the trace has no events");
  builder_.finalize();
  shift_by_base();
}

// The entries of traceEvents (or of the top-level array); the scanner is at '['.
// Returns false when reading stopped early (error, cancel).
bool TextReader::read_events() {
  const bool threaded = threading_ == Threading::kAlways ||
                        (threading_ == Threading::kAuto && text_.size() >= kThreadedMinBytes &&
                         std::thread::hardware_concurrency() > 1);
  const ArrayEnd end = read_event_array(s_, threaded, [&](EventBatch& b) {
    for (std::size_t i = 0; i < b.count; ++i) decoder_.decode(b.events[i]);
    for (std::uint64_t i = 0; i < b.not_objects; ++i) decoder_.skip(Skip::kNotObject);
    entries_ += b.entries;
    for (const SyntaxError& e : b.errors) on_syntax_error(e);
    return b.end_offset < next_progress_ || progress(b.end_offset);
  });
  switch (end) {
    case ArrayEnd::kClosed:
      return true;
    case ArrayEnd::kUnclosed:
      trace_.report.warnings.push_back(
          "the event array has no closing ']' (accepted, as chrome://tracing does)");
      return true;
    case ArrayEnd::kCancelled:
      return false;
    case ArrayEnd::kError:
      break;
  }
  stop(last_error_.at, last_error_.reason);
  return false;
}

bool TextReader::read_object() {
  s_.set_pos(s_.pos() + 1);
  bool first = true;
  json::Token key;
  std::string key_scratch;
  while (s_.next_member(first, key)) {
    const std::string key_text(json::Scanner::string_value(key, key_scratch));
    if (!read_member(key_text)) return false;
    if (s_.offset() >= next_progress_ && !progress(s_.offset())) return false;
  }
  if (s_.failed()) {
    if (s_.error_at() >= s_.end() && found_events_) {
      trace_.report.warnings.push_back("the top-level object has no closing '}' (accepted)");
      return true;
    }
    stop_on_scanner_error();
    return false;
  }
  return true;
}

// One member of the top-level object; the scanner is at its value.
bool TextReader::read_member(std::string_view key) {
  const json::Kind kind = s_.peek_kind();
  const char* value_begin = s_.pos();
  if (key == "traceEvents") {
    if (kind != json::Kind::kArray) {
      stop(value_begin, std::string("traceEvents is ") + kind_name(kind) + ", expected an array");
      return false;
    }
    found_events_ = true;
    return read_events();
  }
  bool ok = true;
  if (key == "deviceProperties" && kind == json::Kind::kArray) {
    ok = read_device_properties(s_, trace_);
  } else if (key == "flopline" && kind == json::Kind::kObject) {
    ok = read_flopline_info(s_, trace_);
  } else if (key == "baseTimeNanoseconds") {
    // A number or a numeric string, in ns; anything else is ignored with a warning.
    json::Token t;
    ok = s_.scan_value(t);
    const bool compound = t.kind == json::Kind::kObject || t.kind == json::Kind::kArray;
    if (ok && compound) ok = s_.skip_value();
    if (ok && (compound || decimal_to_int(t.text(), 0, base_) != NumberStatus::kOk)) {
      base_ = 0;
      trace_.report.warnings.push_back("baseTimeNanoseconds is not an integer; ignored");
    } else if (ok && t.text().data() + t.text().size() >= s_.end()) {
      // A file cut inside the number: its first digits are another time altogether
      // (1700 ns for 1.7e18), so none is taken.
      base_ = 0;
      trace_.report.warnings.push_back(
          "baseTimeNanoseconds is cut off by the end of the file; ignored (times are relative)");
    }
  } else if (key == "systemTraceEvents") {
    ok = s_.skip_value();
    if (ok) {
      trace_.report.warnings.push_back(std::string("systemTraceEvents (") + kind_name(kind) + ", " +
                                       std::to_string(s_.pos() - value_begin) + " bytes) ignored");
    }
  } else {
    // Kept as JSON text for the writer; nan/inf and trailing commas made strict.
    s_.reset_laxness();
    ok = s_.skip_value();
    const std::string_view value(value_begin, static_cast<std::size_t>(s_.pos() - value_begin));
    if (ok && value.size() > kMaxExtraBytes) {
      trace_.report.warnings.push_back("top-level member \"" + std::string(key) + "\" (" +
                                       std::to_string(value.size()) +
                                       " bytes) dropped: larger than 1 MB");
    } else if (ok) {
      std::string text;
      if (s_.laxness().any()) {
        json::Scanner::write_strict(value, text);
      } else {
        text.assign(value);
      }
      trace_.extra_top_level.emplace_back(std::string(key), std::move(text));
    }
  }
  if (!ok) stop_on_scanner_error();
  return ok;
}

// Model times are absolute: baseTimeNanoseconds (which may come after traceEvents)
// is added to every time once everything is laid out; order is unchanged by it.
void TextReader::shift_by_base() {
  trace_.base_time_ns = base_;
  if (base_ == 0) return;
  TimeNs lo = decoder_.min_ts();
  TimeNs hi = decoder_.max_ts();
  TimeNs tmp;
  if (lo <= hi &&
      (__builtin_add_overflow(lo, base_, &tmp) || __builtin_add_overflow(hi, base_, &tmp))) {
    trace_.report.warnings.push_back("baseTimeNanoseconds would overflow the event times; ignored");
    trace_.base_time_ns = 0;
    return;
  }
  for (Track& t : trace_.tracks) {
    for (auto& row : t.rows) {
      for (Slice& s : row) s.start += base_;
    }
    for (Instant& i : t.instants) i.ts += base_;
  }
  for (CounterSeries& c : trace_.counters) {
    for (CounterPoint& p : c.points) p.ts += base_;
  }
  for (Flow& f : trace_.flows) {
    f.from.ts += base_;
    f.to.ts += base_;
  }
}

}  // namespace

ReadResult read_text(std::string_view text, std::string_view name, const ReadOptions& opt,
                     Threading threading) {
  ReadResult result;
  auto reader = std::make_unique<TextReader>(text, name, opt, threading, result);
  try {
    reader->run();
  } catch (const std::bad_alloc&) {
    const std::uint64_t at = reader->offset();
    const std::uint64_t events = reader->entries();
    reader.reset();  // gives back what the reading held before anything else is made
    result.trace = Trace();
    result.error =
        ReadError{std::string(name), 0, 0, 0,
                  "out of memory after reading " + with_thousands(at) + " of " +
                      with_thousands(text.size()) + " bytes of text (" + with_thousands(events) +
                      " events): the trace needs more memory than this process can have"};
  }
  return result;
}

}  // namespace chrome

ReadResult read_chrome_trace_text(std::string_view text, std::string_view name,
                                  const ReadOptions& opt) {
  return chrome::read_text(text, name, opt, chrome::Threading::kAuto);
}

std::string args_text_from_source(std::string_view raw) {
  json::Scanner s(raw);
  s.skip_ws();
  if (s.eof() || s.peek() != '{') return "{}";
  const char* begin = s.pos();
  s.reset_laxness();
  if (!s.skip_value()) return "{}";
  const std::string_view object(begin, static_cast<std::size_t>(s.pos() - begin));
  if (!s.laxness().any()) return std::string(object);
  std::string strict;
  json::Scanner::write_strict(object, strict);
  return strict;
}

namespace {

// What getting the text met, said in the result: warnings when the trace loaded, added
// to the reason when it did not.
void add_file_notes(const FileText& input, ReadResult& result) {
  std::vector<std::string> notes = input.warnings;
  if (input.shrank()) {
    struct stat st {};
    const std::uint64_t now =
        ::fstat(input.fd, &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
    notes.insert(notes.begin(),
                 "the file shrank from " + with_thousands(input.size_at_open) + " to " +
                     with_thousands(now) +
                     " bytes while it was read: the text after that was not there to read");
  }
  if (result.ok()) {
    std::vector<std::string>& w = result.trace.report.warnings;
    w.insert(w.begin(), notes.begin(), notes.end());
    return;
  }
  if (result.error->reason == "cancelled") return;
  for (const std::string& n : notes) result.error->reason += "; " + n;
  if (!input.kind.empty()) result.error->reason += " (the path is " + input.kind + ")";
}

}  // namespace

ReadResult read_chrome_trace_file(const std::string& path, const ReadOptions& opt) {
  ReadResult result;
  try {
    FileText input;
    InputOptions input_options;
    input_options.progress = opt.inflate_progress;
    input_options.max_text_bytes = opt.max_text_bytes;
    std::string error;
    if (!read_file_text(path, input_options, input, error)) {
      if (!input.kind.empty() && error != "cancelled") error += " (the path is " + input.kind + ")";
      result.error = ReadError{path, 0, 0, 0, std::move(error)};
      return result;
    }
    // Zero bytes at the end are what a writer that crashed leaves on some file systems
    // (the size grew before the data arrived): no JSON text, so they are not read as a
    // syntax error over half the file.
    std::string_view text = input.text();
    std::size_t zeros = 0;
    while (zeros < text.size() && text[text.size() - 1 - zeros] == '\0') ++zeros;
    if (zeros == text.size()) zeros = 0;  // nothing but zeros: binary data, said as such
    text.remove_suffix(zeros);
    result = read_chrome_trace_text(text, path, opt);
    if (zeros > 0) {
      input.warnings.push_back(with_thousands(zeros) +
                               " zero bytes at the end of the file (a writer that did not "
                               "finish) were not read");
    }
    add_file_notes(input, result);
  } catch (const std::bad_alloc&) {
    result = ReadResult();
    result.error = ReadError{path, 0, 0, 0, "out of memory while reading the file"};
  }
  return result;
}

}  // namespace flopline::trace
