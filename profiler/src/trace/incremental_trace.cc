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

// `text` as one gzip member.
bool gzip_member(std::string_view text, std::string& out) {
  z_stream zs{};
  if (deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return false;
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

}  // namespace

IncrementalTraceFile::IncrementalTraceFile(std::string path)
    : path_(std::move(path)), gzip_(path_.size() > 3 && path_.ends_with(".gz")) {}

IncrementalTraceFile::~IncrementalTraceFile() {
  if (fd_ >= 0) ::close(fd_);
}

bool IncrementalTraceFile::append(const Trace& trace, TimeNs upto,
                                  const std::function<bool(const Slice&)>& keep,
                                  std::string* error) {
  std::string text;
  if (fd_ < 0) text = "[\n";
  const std::uint64_t n = render_chrome_event_lines(trace, upto_, upto, keep, text);
  if (n == 0) {  // nothing new: no file yet, or no append
    upto_ = std::max(upto_, upto);
    return true;
  }
  if (fd_ < 0) {
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      if (error) *error = "cannot write " + path_ + ": " + std::strerror(errno);
      return false;
    }
  }
  std::string member;
  if (gzip_ && !gzip_member(text, member)) {
    if (error) *error = "cannot compress events for " + path_;
    return false;
  }
  std::string why;
  if (!write_all(fd_, gzip_ ? std::string_view(member) : std::string_view(text), &why)) {
    if (error) *error = "cannot write " + path_ + ": " + why;
    return false;
  }
  upto_ = std::max(upto_, upto);
  events_ += n;
  return true;
}

}  // namespace flopline::trace
