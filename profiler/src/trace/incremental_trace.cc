#include "flopline/trace/incremental_trace.h"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "flopline/trace/chrome_writer.h"

namespace flopline::trace {
namespace {

// The first line, while the file is an array and once it is an object: the same length,
// so finish() can overwrite one with the other in place.
constexpr std::string_view kArrayHead = "[               \n";
constexpr std::string_view kObjectHead = "{\"traceEvents\":[\n";
static_assert(kArrayHead.size() == kObjectHead.size());

// `text` as one gzip member; level 0 stores it, so its length depends on the text's
// length only.
bool gzip_member(std::string_view text, int level, std::string& out) {
  z_stream zs{};
  if (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return false;
  out.resize(deflateBound(&zs, static_cast<uLong>(text.size())) + 32);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = static_cast<uInt>(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  const int r = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return r == Z_STREAM_END;
}

bool write_all(int fd, std::string_view data, std::string* error) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (error) *error = std::strerror(n < 0 ? errno : ENOSPC);
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

bool pwrite_all(int fd, std::string_view data, off_t at, std::string* error) {
  while (!data.empty()) {
    const ssize_t n = ::pwrite(fd, data.data(), data.size(), at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (error) *error = std::strerror(n < 0 ? errno : ENOSPC);
      return false;
    }
    data.remove_prefix(static_cast<std::size_t>(n));
    at += n;
  }
  return true;
}

}  // namespace

IncrementalTraceFile::IncrementalTraceFile(std::string path, TimeNs time_base)
    : path_(std::move(path)),
      time_base_(time_base),
      gzip_(path_.size() > 3 && path_.ends_with(".gz")) {}

IncrementalTraceFile::~IncrementalTraceFile() {
  if (fd_ >= 0) ::close(fd_);
}

bool IncrementalTraceFile::write_text(const std::string& text, std::string* error) {
  std::string member;
  if (gzip_ && !gzip_member(text, 1, member)) {
    if (error) *error = "cannot compress events for " + path_;
    return false;
  }
  std::string why;
  if (!write_all(fd_, gzip_ ? std::string_view(member) : std::string_view(text), &why)) {
    if (error) *error = "cannot write " + path_ + ": " + why;
    return false;
  }
  bytes_ += text.size();
  return true;
}

bool IncrementalTraceFile::start(std::string* error) {
  if (fd_ >= 0) return true;
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    if (error) *error = "cannot write " + path_ + ": " + std::strerror(errno);
    return false;
  }
  std::string head(kArrayHead);
  std::string member;
  if (gzip_ && !gzip_member(head, 0, member)) {
    if (error) *error = "cannot compress events for " + path_;
    return false;
  }
  std::string why;
  if (!write_all(fd_, gzip_ ? std::string_view(member) : std::string_view(head), &why)) {
    if (error) *error = "cannot write " + path_ + ": " + why;
    return false;
  }
  bytes_ += head.size();
  return true;
}

bool IncrementalTraceFile::write_events(std::string& lines, std::uint64_t n, std::string* error) {
  if (finished_) {
    if (error) *error = "cannot append to " + path_ + ": the trace is finished";
    return false;
  }
  if (n == 0) return true;  // metadata events alone: nothing new
  if (!start(error)) return false;
  // Lines end in ",\n": the last comma goes, and a comma opens the next append instead,
  // so the list is valid JSON wherever the file ends.
  if (lines.size() >= 2) lines.resize(lines.size() - 2);
  lines += '\n';
  if (wrote_lines_) lines.insert(lines.begin(), ',');
  if (!write_text(lines, error)) return false;
  wrote_lines_ = true;
  events_ += n;
  return true;
}

bool IncrementalTraceFile::append(const Trace& trace, TimeNs upto,
                                  const std::function<bool(const Slice&)>& keep,
                                  std::string* error) {
  std::string text;
  const std::uint64_t n = render_chrome_event_lines(trace, upto_, upto, keep, text, {}, time_base_);
  if (!write_events(text, n, error)) return false;
  upto_ = std::max(upto_, upto);
  return true;
}

// One append's bytes on their way to the file: as they are, or through one gzip member
// deflated piece by piece.
class AppendStream {
 public:
  AppendStream(int fd, bool gzip) : fd_(fd), gzip_(gzip) {
    if (gzip_) ok_ = deflateInit2(&zs_, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK;
  }
  ~AppendStream() {
    if (gzip_ && ok_) deflateEnd(&zs_);
  }
  bool write(std::string_view data) {
    bytes_ += data.size();
    if (!gzip_) return ok_ = ok_ && write_all(fd_, data, &error_);
    return deflate_some(data, Z_NO_FLUSH);
  }
  bool finish() { return !gzip_ ? ok_ : deflate_some({}, Z_FINISH); }
  const std::string& error() const { return error_; }
  std::uint64_t bytes() const { return bytes_; }

 private:
  bool deflate_some(std::string_view data, int flush) {
    if (!ok_) return false;
    zs_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    zs_.avail_in = static_cast<uInt>(data.size());
    char out[1 << 16];
    int r = Z_OK;
    do {
      zs_.next_out = reinterpret_cast<Bytef*>(out);
      zs_.avail_out = sizeof out;
      r = deflate(&zs_, flush);
      const std::size_t n = sizeof out - zs_.avail_out;
      if (r == Z_STREAM_ERROR || !write_all(fd_, std::string_view(out, n), &error_)) {
        if (error_.empty()) error_ = "compression failed";
        return ok_ = false;
      }
    } while (zs_.avail_out == 0 || (flush == Z_FINISH && r != Z_STREAM_END));
    return true;
  }

  int fd_;
  bool gzip_;
  bool ok_ = true;
  z_stream zs_{};
  std::string error_;
  std::uint64_t bytes_ = 0;
};

bool IncrementalTraceFile::append_all(const Trace& trace, std::string* error) {
  if (finished_) {
    if (error) *error = "cannot append to " + path_ + ": the trace is finished";
    return false;
  }
  if (trace.slice_count() + trace.instant_count() + trace.counter_point_count() +
          trace.flows.size() ==
      0) {
    return true;  // metadata events alone: nothing new
  }
  if (!start(error)) return false;
  // Rendered a few MB at a time: an append of a million launches never builds its text
  // whole. A comma opens every append but the first (see write_events()).
  AppendStream out(fd_, gzip_);
  bool ok = !wrote_lines_ || out.write(",");
  const std::optional<std::uint64_t> n =
      ok ? stream_chrome_event_lines(trace, time_base_,
                                     [&out](std::string_view d) { return out.write(d); })
         : std::nullopt;
  ok = n && out.write("\n") && out.finish();
  bytes_ += out.bytes();
  wrote_lines_ = wrote_lines_ || out.bytes() > 0;
  if (!ok) {
    if (error) *error = "cannot write " + path_ + ": " + out.error();
    return false;
  }
  events_ += *n;
  return true;
}

bool IncrementalTraceFile::finish(const Trace& meta, std::string* error) {
  if (finished_) return true;
  if (!start(error)) return false;
  std::string head(kObjectHead);
  std::string member;
  if (gzip_) {
    std::string array_member;
    if (!gzip_member(head, 0, member) || !gzip_member(kArrayHead, 0, array_member) ||
        member.size() != array_member.size()) {
      if (error) *error = "cannot finish " + path_ + ": its first gzip member cannot be rewritten";
      return false;
    }
  }
  // The head first: until the tail is written the file is an object whose event list is
  // not closed, which flopline reads as it reads an unclosed array.
  std::string why;
  if (!pwrite_all(fd_, gzip_ ? std::string_view(member) : std::string_view(head), 0, &why)) {
    if (error) *error = "cannot finish " + path_ + ": " + why;
    return false;
  }
  std::string tail;
  render_chrome_trace_tail(meta, time_base_, tail);
  if (!write_text(tail, error)) return false;
  finished_ = true;
  return true;
}

}  // namespace flopline::trace
