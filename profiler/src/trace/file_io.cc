#include "trace/file_io.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "trace/gzip_stream.h"
#include "trace/message_text.h"

namespace flopline::trace {
namespace {

constexpr std::size_t kReadChunk = 1u << 20;
constexpr std::uint64_t kProgressStep = 4u << 20;  // compressed bytes between progress calls
// deflate cannot inflate more than 1032 bytes from one: gzip's size trailer beyond that
// ratio is a lie, and even a plausible one only sizes the first allocation.
constexpr std::uint64_t kDeflateMaxRatio = 1032;
constexpr std::uint64_t kFirstGuessCap = 16u << 20;
constexpr long kPipefsMagic = 0x50495045;  // statfs f_type of anonymous pipes

bool is_gzip_magic(std::string_view s) {
  return s.size() >= 2 && static_cast<unsigned char>(s[0]) == 0x1f &&
         static_cast<unsigned char>(s[1]) == 0x8b;
}

// Where the text's first value begins: past a UTF-8 byte order mark and whitespace;
// npos while only those have arrived.
std::size_t first_value_byte(std::string_view s) {
  std::size_t i = s.size() >= 3 && std::memcmp(s.data(), "\xef\xbb\xbf", 3) == 0 ? 3 : 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\n' || s[i] == '\r' || s[i] == '\t')) ++i;
  return i < s.size() ? i : std::string_view::npos;
}

// Whether the start of a text that is still arriving shows it is not JSON, so reading a
// stream (/dev/urandom) or inflating a bomb can stop there: the reader needs only the
// start to say what the data is.
class StartCheck {
 public:
  // `text`: everything so far. True once it is clear; false while it may be JSON.
  bool not_json(std::string_view text) {
    if (done_) return false;
    const std::size_t i = first_value_byte(text);
    if (i == std::string_view::npos) return false;
    if (text[i] != '{' && text[i] != '[') return done_ = true;
    if (text.size() - i < kLookBytes) return false;
    // Binary data that happens to start with a bracket: control bytes, which JSON text
    // has none of outside strings and traces next to none inside (random bytes: 1 in 9).
    done_ = true;
    std::size_t control = 0;
    for (const char c : text.substr(i, kLookBytes)) {
      const auto u = static_cast<unsigned char>(c);
      control += u < 0x20 && u != '\n' && u != '\r' && u != '\t';
    }
    return control > kLookBytes / 100;
  }

 private:
  static constexpr std::size_t kLookBytes = 4096;
  bool done_ = false;
};

long read_retrying(int fd, void* buf, std::size_t n) {
  for (;;) {
    const ssize_t r = ::read(fd, buf, n);
    if (r >= 0 || errno != EINTR) return static_cast<long>(r);
  }
}

std::string limit_reached(std::uint64_t limit, const InputOptions& opt) {
  return "stopped after " + with_thousands(limit) +
         " bytes of text, the most flopline takes from a stream or a .gz (" +
         (opt.max_text_bytes > 0 ? "the limit asked for" : "half of this machine's memory") + ")";
}

class GzipFileReader {
 public:
  GzipFileReader(int fd, const InputOptions& opt, std::uint64_t limit, std::uint64_t total,
                 FileText& out)
      : fd_(fd), opt_(opt), total_(total), out_(out), inflater_(out.buffer, limit) {}

  // `head`: bytes already read from fd (a stream's first read). False on an error.
  bool run(std::string_view head, std::string& error) {
    bool more = feed(head);
    std::vector<char> in(kReadChunk);
    while (more) {
      const long n = read_retrying(fd_, in.data(), in.size());
      if (n < 0) {
        error = std::string("read error: ") + std::strerror(errno);
        return false;
      }
      if (n == 0) break;
      more = feed(std::string_view(in.data(), static_cast<std::size_t>(n)));
      if (cancelled_) break;
    }
    if (!cancelled_ && !sniffed_out_ && opt_.progress &&
        !opt_.progress(inflater_.consumed(), total_ ? total_ : inflater_.consumed())) {
      cancelled_ = true;
    }
    if (cancelled_) {
      error = "cancelled";
      return false;
    }
    if (sniffed_out_) return true;  // the reader will say what the text is
    inflater_.finish();
    const std::string& problem = inflater_.problem();
    if (problem.empty()) return true;
    if (inflater_.out_of_memory()) {
      error = problem + " of text";
      return false;
    }
    const std::size_t got = out_.buffer.size();
    if (got == 0) {
      error = problem + "; nothing could be inflated";
      return false;
    }
    out_.warnings.push_back(inflater_.hit_limit()
                                ? limit_reached(got, opt_)
                                : problem + "; the " + with_thousands(got) +
                                      " bytes of text inflated before it were read");
    return true;
  }

 private:
  // False once no more input is wanted.
  bool feed(std::string_view in) {
    while (!in.empty()) {
      if (inflater_.feed(in) == GzipInflater::State::kStopped) return false;
      if (opt_.stop_at_non_json && start_.not_json(out_.buffer.view())) {
        sniffed_out_ = true;
        return false;
      }
      if (opt_.progress && inflater_.consumed() >= next_progress_) {
        next_progress_ = inflater_.consumed() + kProgressStep;
        if (!opt_.progress(inflater_.consumed(), total_)) {
          cancelled_ = true;
          return false;
        }
      }
    }
    return true;
  }

  int fd_;
  const InputOptions& opt_;
  std::uint64_t total_;
  FileText& out_;
  GzipInflater inflater_;
  std::uint64_t next_progress_ = kProgressStep;
  StartCheck start_;
  bool sniffed_out_ = false;
  bool cancelled_ = false;
};

// Reads until the end, the limit, or (when asked) the first byte that shows the text is
// not JSON. A stream that starts with gzip's magic bytes is inflated instead.
bool read_stream(int fd, const InputOptions& opt, std::uint64_t limit, FileText& out,
                 std::string& error) {
  TextBuffer& b = out.buffer;
  StartCheck start;
  bool gzip_checked = false;
  for (;;) {
    if (b.size() >= limit) {
      // One more byte says whether the stream really goes on past the limit.
      char probe;
      const long n = read_retrying(fd, &probe, 1);
      if (n > 0) out.warnings.push_back(limit_reached(b.size(), opt));
      return true;
    }
    if (!b.reserve_more(std::min<std::uint64_t>(kReadChunk, limit - b.size()))) {
      error = "out of memory after reading " + with_thousands(b.size()) + " bytes of text";
      return false;
    }
    const std::size_t want =
        static_cast<std::size_t>(std::min<std::uint64_t>({b.room(), limit - b.size(), kReadChunk}));
    const long n = read_retrying(fd, b.tail(), want);
    if (n < 0) {
      error = std::string("read error: ") + std::strerror(errno);
      return false;
    }
    if (n == 0) return true;
    b.grew_by(static_cast<std::size_t>(n));
    if (b.size() < 2) continue;
    if (!gzip_checked && is_gzip_magic(b.view())) {
      const std::string head(b.view());
      b = TextBuffer();
      return GzipFileReader(fd, opt, limit, 0, out).run(head, error);
    }
    gzip_checked = true;
    if (opt.stop_at_non_json && start.not_json(b.view())) return true;
  }
}

bool read_regular(int fd, const struct stat& st, const InputOptions& opt, std::uint64_t limit,
                  FileText& out, std::string& error) {
  const auto size = static_cast<std::uint64_t>(st.st_size);
  out.size_at_open = size;
  unsigned char magic[2] = {0, 0};
  if (::pread(fd, magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
    // The size trailer (mod 2^32) sizes the first allocation when deflate could
    // really have made that much from this file; the rest grows as data inflates.
    unsigned char trailer[4];
    std::uint64_t isize = 0;
    if (size >= 18 && ::pread(fd, trailer, 4, static_cast<off_t>(size - 4)) == 4) {
      isize = trailer[0] | trailer[1] << 8 | trailer[2] << 16 | std::uint64_t{trailer[3]} << 24;
    }
    if (isize > 0 && isize <= size * kDeflateMaxRatio) {
      out.buffer.reserve_more(static_cast<std::size_t>(
          std::min<std::uint64_t>({isize, kFirstGuessCap, limit})));  // a failed guess is no error
    }
    return GzipFileReader(fd, opt, limit, size, out).run({}, error);
  }
  if (out.mapped.map(fd, static_cast<std::size_t>(size))) {
    out.mapped_ok = true;
    return true;
  }
  // Not mappable: read it, all of it, up to the size it had when opened.
  InputOptions whole = opt;
  whole.stop_at_non_json = false;
  if (!read_stream(fd, whole, size, out, error)) return false;
  if (out.buffer.size() < size) {
    out.warnings.push_back("the file shrank from " + with_thousands(size) + " to " +
                           with_thousands(out.buffer.size()) + " bytes while it was read");
  }
  return true;
}

void make_blocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
}

}  // namespace

std::uint64_t default_text_limit() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  std::uint64_t limit = pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) *
                                                    static_cast<std::uint64_t>(page) / 2
                                              : std::uint64_t{8} << 30;
  struct rlimit rl {};
  if (::getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    limit = std::min<std::uint64_t>(limit, rl.rlim_cur / 2);
  }
  return limit;
}

FileText::~FileText() {
  if (fd >= 0) ::close(fd);
}

bool read_file_text(const std::string& path, const InputOptions& opt, FileText& out,
                    std::string& error) {
  // Non-blocking, so opening a named pipe that has no writer returns at once.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    error = std::strerror(errno);
    return false;
  }
  out.fd = fd;
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    error = std::strerror(errno);
    return false;
  }
  const std::uint64_t limit = opt.max_text_bytes > 0 ? opt.max_text_bytes : default_text_limit();
  if (S_ISDIR(st.st_mode)) {
    error = "is a directory, not a trace file";
    return false;
  }
  if (S_ISREG(st.st_mode)) {
    make_blocking(fd);
    if (st.st_size > 0) return read_regular(fd, st, opt, limit, out, error);
    // Size 0 is an empty file, or one whose contents are made when read (/proc, /sys).
    const bool ok = read_stream(fd, opt, limit, out, error);
    if (out.buffer.size() > 0) out.kind = "a file whose size reads as 0, read as a stream";
    return ok;
  }
  if (S_ISFIFO(st.st_mode)) {
    struct statfs fs {};
    const bool named = ::fstatfs(fd, &fs) != 0 || static_cast<long>(fs.f_type) != kPipefsMagic;
    if (named) {
      // A named pipe nobody opened for writing would block for ever.
      pollfd p{fd, POLLIN, 0};
      int r;
      do {
        r = ::poll(&p, 1, opt.fifo_wait_ms);
      } while (r < 0 && errno == EINTR);
      if (r == 0) {
        char seconds[32];
        std::snprintf(seconds, sizeof seconds, "%.1f", opt.fifo_wait_ms / 1000.0);
        error = std::string("is a named pipe (FIFO) and nothing was written to it in ") + seconds +
                " s";
        return false;
      }
    }
    make_blocking(fd);
    out.kind = named ? "a named pipe (FIFO), read as a stream" : "a pipe, read as a stream";
    return read_stream(fd, opt, limit, out, error);
  }
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
    make_blocking(fd);
    out.kind = S_ISCHR(st.st_mode) ? "a character device, read as a stream"
                                   : "a block device, read as a stream";
    return read_stream(fd, opt, limit, out, error);
  }
  error = "is not a file that can be read (a socket?)";
  return false;
}

bool read_file_maybe_gzip(const std::string& path, std::string& out, std::string& error,
                          const InflateProgress& progress) {
  InputOptions opt;
  opt.progress = progress;
  opt.stop_at_non_json = false;
  FileText text;
  if (!read_file_text(path, opt, text, error)) return false;
  if (!text.warnings.empty()) {
    error = text.warnings.front();
    return false;
  }
  out.assign(text.text());
  if (text.shrank()) {
    error = "the file shrank while it was read";
    return false;
  }
  return true;
}

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace flopline::trace
