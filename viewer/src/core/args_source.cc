// Reading one args object back from the trace file. See args_source.h.
#include "core/args_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "flopline/trace/chrome_reader.h"

namespace flopline::viewer {
namespace {

constexpr std::size_t kWindow = 32768;       // deflate's largest distance
constexpr std::uint64_t kSpan = 8ull << 20;  // JSON bytes between checkpoints
constexpr std::size_t kChunk = 1 << 16;      // compressed bytes read at once

struct Checkpoint {
  std::uint64_t out = 0;              // offset in the decompressed text
  std::uint64_t in = 0;               // offset in the compressed file
  int bits = 0;                       // bits of the byte at in - 1 that belong to the next block
  bool member_start = false;          // `in` starts a gzip member: no window needed
  std::vector<unsigned char> window;  // the kWindow bytes of text before `out`
};

struct FileId {
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  bool ok = false;
  bool operator==(const FileId&) const = default;
};

FileId file_id(const std::string& path) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return {};
  return FileId{static_cast<std::uint64_t>(st.st_size),
                static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
                true};
}

class Fd {
 public:
  explicit Fd(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  bool ok() const { return fd_ >= 0; }
  // Reads up to n bytes at off; returns the count (0 at the end), -1 on error.
  long read_at(void* buf, std::size_t n, std::uint64_t off) const {
    std::size_t done = 0;
    while (done < n) {
      const ssize_t r =
          ::pread(fd_, static_cast<char*>(buf) + done, n - done, static_cast<off_t>(off + done));
      if (r < 0) return -1;
      if (r == 0) break;
      done += static_cast<std::size_t>(r);
    }
    return static_cast<long>(done);
  }

 private:
  int fd_;
};

bool is_gzip(const std::string& path) {
  Fd f(path);
  unsigned char magic[2] = {0, 0};
  return f.ok() && f.read_at(magic, 2, 0) == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

// One pass over a gzip file recording checkpoints (zran's technique).
bool build_index(const std::string& path, const std::atomic<bool>& stop,
                 std::vector<Checkpoint>& out, std::string& error) {
  Fd f(path);
  if (!f.ok()) {
    error = "cannot open " + path + ": " + std::strerror(errno);
    return false;
  }
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 32) != Z_OK) {
    error = "zlib could not start";
    return false;
  }
  std::vector<unsigned char> in(kChunk);
  std::vector<unsigned char> window(kWindow);
  zs.next_out = window.data();
  zs.avail_out = kWindow;
  std::uint64_t in_pos = 0;  // file offset of the next read
  std::uint64_t total_out = 0;
  std::uint64_t last = 0;
  out.clear();
  out.push_back(Checkpoint{0, 0, 0, true, {}});
  bool ok = true;
  bool finished = false;
  while (!finished && !stop.load(std::memory_order_relaxed)) {
    const long n = f.read_at(in.data(), in.size(), in_pos);
    if (n <= 0) {
      if (n < 0) error = std::string("read error: ") + std::strerror(errno);
      ok = n == 0;  // the end: a truncated last member still indexes what it had
      break;
    }
    const std::uint64_t chunk_base = in_pos;
    in_pos += static_cast<std::uint64_t>(n);
    zs.next_in = in.data();
    zs.avail_in = static_cast<uInt>(n);
    while (zs.avail_in > 0) {
      if (zs.avail_out == 0) {
        zs.next_out = window.data();
        zs.avail_out = kWindow;
      }
      const uInt before = zs.avail_out;
      const int rc = inflate(&zs, Z_BLOCK);
      total_out += before - zs.avail_out;
      const std::uint64_t consumed = chunk_base + static_cast<std::uint64_t>(n) - zs.avail_in;
      if (rc == Z_STREAM_END) {
        // Concatenated members continue the text (as the reader does).
        unsigned char next = 0;
        const bool more =
            zs.avail_in > 0 ? (next = *zs.next_in, true) : f.read_at(&next, 1, consumed) == 1;
        if (more && next == 0x1f) {
          inflateReset(&zs);
          out.push_back(Checkpoint{total_out, consumed, 0, true, {}});
          last = total_out;
          continue;
        }
        finished = true;
        break;
      }
      if (rc != Z_OK && rc != Z_BUF_ERROR) {
        // The reader kept the text inflated before the damage: its args stay reachable.
        ok = total_out > 0;
        error = std::string("gzip data is corrupt") +
                (zs.msg ? std::string(": ") + zs.msg : std::string());
        finished = true;
        break;
      }
      if ((zs.data_type & 128) && !(zs.data_type & 64) && total_out - last >= kSpan) {
        Checkpoint cp;
        cp.out = total_out;
        cp.in = consumed;
        cp.bits = zs.data_type & 7;
        cp.window.resize(kWindow);
        const std::size_t left = zs.avail_out;  // the window is circular
        if (left > 0) std::memcpy(cp.window.data(), window.data() + kWindow - left, left);
        if (left < kWindow) std::memcpy(cp.window.data() + left, window.data(), kWindow - left);
        out.push_back(std::move(cp));
        last = total_out;
      }
    }
  }
  inflateEnd(&zs);
  return ok && !stop.load();
}

// Inflates from checkpoint `cp` and copies text [offset, offset + length).
bool extract(const std::string& path, const Checkpoint& cp, std::uint64_t offset,
             std::uint32_t length, std::string& text, std::string& error) {
  Fd f(path);
  if (!f.ok()) {
    error = "cannot open " + path + ": " + std::strerror(errno);
    return false;
  }
  z_stream zs{};
  bool raw = !cp.member_start;
  if (inflateInit2(&zs, raw ? -15 : 15 + 32) != Z_OK) {
    error = "zlib could not start";
    return false;
  }
  struct End {
    z_stream* z;
    ~End() { inflateEnd(z); }
  } end{&zs};
  if (raw) {
    if (cp.bits > 0) {
      unsigned char b = 0;
      if (f.read_at(&b, 1, cp.in - 1) != 1) {
        error = "read error";
        return false;
      }
      inflatePrime(&zs, cp.bits, b >> (8 - cp.bits));
    }
    inflateSetDictionary(&zs, cp.window.data(), kWindow);
  }
  std::vector<unsigned char> in(kChunk);
  std::vector<unsigned char> buf(kChunk);
  std::uint64_t in_pos = cp.in;
  std::uint64_t pos = cp.out;  // text offset of the next output byte
  text.clear();
  const std::uint64_t want_end = offset + length;
  while (pos < want_end) {
    const long n = f.read_at(in.data(), in.size(), in_pos);
    if (n <= 0) {
      error = "the file ends before the args (was it changed since loading?)";
      return false;
    }
    const std::uint64_t chunk_base = in_pos;
    in_pos += static_cast<std::uint64_t>(n);
    zs.next_in = in.data();
    zs.avail_in = static_cast<uInt>(n);
    while (zs.avail_in > 0 && pos < want_end) {
      zs.next_out = buf.data();
      zs.avail_out = static_cast<uInt>(buf.size());
      const int rc = inflate(&zs, Z_NO_FLUSH);
      const std::uint64_t produced = buf.size() - zs.avail_out;
      // Keep the part of [pos, pos + produced) inside [offset, want_end).
      const std::uint64_t lo = std::max(pos, offset);
      const std::uint64_t hi = std::min(pos + produced, want_end);
      if (lo < hi) text.append(reinterpret_cast<const char*>(buf.data()) + (lo - pos), hi - lo);
      pos += produced;
      if (rc == Z_STREAM_END) {
        // The next member, if any: after the 8-byte trailer in raw mode.
        std::uint64_t next =
            chunk_base + static_cast<std::uint64_t>(n) - zs.avail_in + (raw ? 8 : 0);
        unsigned char magic = 0;
        if (pos >= want_end) break;
        if (f.read_at(&magic, 1, next) != 1 || magic != 0x1f) {
          error = "the text ends before the args (was the file changed since loading?)";
          return false;
        }
        inflateEnd(&zs);
        zs = z_stream{};
        raw = false;
        if (inflateInit2(&zs, 15 + 32) != Z_OK) {
          error = "zlib could not start";
          return false;
        }
        in_pos = next;
        break;  // read again from the new member's start
      }
      if (rc != Z_OK && rc != Z_BUF_ERROR) {
        error = std::string("gzip data is corrupt") +
                (zs.msg ? std::string(": ") + zs.msg : std::string());
        return false;
      }
    }
  }
  return true;
}

}  // namespace

struct ArgsSource::Impl {
  std::string path;
  FileId id;  // the file as it was when the trace was read
  bool gzip = false;

  mutable std::mutex mu;
  mutable std::condition_variable cv;
  bool index_started = false;
  bool index_done = false;
  bool index_ok = false;
  std::string index_error;
  std::vector<Checkpoint> index;
  std::atomic<bool> stop{false};
  std::thread worker;

  ~Impl() {
    stop = true;
    if (worker.joinable()) worker.join();
  }

  void start() {
    std::lock_guard<std::mutex> lock(mu);
    if (!gzip || index_started) return;
    index_started = true;
    worker = std::thread([this] {
      std::vector<Checkpoint> built;
      std::string err;
      const bool ok = build_index(path, stop, built, err);
      std::lock_guard<std::mutex> l(mu);
      index = std::move(built);
      index_ok = ok;
      index_error = err;
      index_done = true;
      cv.notify_all();
    });
  }

  // nullopt: not ready (and wait is false).
  std::optional<std::string> read(std::uint64_t offset, std::uint32_t length, bool wait,
                                  std::string& error) {
    if (!(file_id(path) == id)) {
      error = path + " changed or disappeared since it was loaded; reload it to see args";
      return std::string("{}");
    }
    std::string raw;
    if (!gzip) {
      Fd f(path);
      raw.resize(length);
      if (!f.ok() || f.read_at(raw.data(), length, offset) != static_cast<long>(length)) {
        error = "cannot read args from " + path;
        return std::string("{}");
      }
      return trace::args_text_from_source(raw);
    }
    start();
    std::unique_lock<std::mutex> lock(mu);
    if (!index_done) {
      if (!wait) return std::nullopt;
      cv.wait(lock, [&] { return index_done; });
    }
    if (!index_ok || index.empty()) {
      error = "cannot index " + path + (index_error.empty() ? "" : ": " + index_error);
      return std::string("{}");
    }
    auto it = std::partition_point(index.begin(), index.end(),
                                   [&](const Checkpoint& c) { return c.out <= offset; });
    const Checkpoint& cp = *std::prev(it);
    lock.unlock();  // checkpoints never change once built
    if (!extract(path, cp, offset, length, raw, error)) return std::string("{}");
    return trace::args_text_from_source(raw);
  }
};

ArgsSource::ArgsSource(std::string path) : impl_(std::make_unique<Impl>()) {
  impl_->path = std::move(path);
  impl_->id = file_id(impl_->path);
  impl_->gzip = impl_->id.ok && is_gzip(impl_->path);
}
ArgsSource::ArgsSource(ArgsSource&&) noexcept = default;
ArgsSource& ArgsSource::operator=(ArgsSource&&) noexcept = default;
ArgsSource::~ArgsSource() = default;

void ArgsSource::start_indexing() {
  if (impl_) impl_->start();
}

std::optional<std::string> ArgsSource::try_args_json(const trace::Trace& trace, trace::ArgsId id,
                                                     std::string* error) const {
  if (id == trace::kNoArgs || id >= trace.args.size()) return std::string("{}");
  if (!trace.args.is_location(id)) return std::string(trace.args.json(id));
  std::string err;
  const auto [offset, length] = trace.args.location(id);
  std::optional<std::string> text;
  if (impl_) {
    text = impl_->read(offset, length, false, err);
  } else {
    err = "no file to read args from";
    text = std::string("{}");
  }
  if (error != nullptr && !err.empty()) *error = err;
  return text;
}

std::string ArgsSource::args_json(const trace::Trace& trace, trace::ArgsId id,
                                  std::string* error) const {
  if (id == trace::kNoArgs || id >= trace.args.size()) return "{}";
  if (!trace.args.is_location(id)) return std::string(trace.args.json(id));
  std::string err;
  const auto [offset, length] = trace.args.location(id);
  std::string text = "{}";
  if (impl_) {
    text = *impl_->read(offset, length, true, err);
  } else {
    err = "no file to read args from";
  }
  if (error != nullptr && !err.empty()) *error = err;
  return text;
}

std::size_t ArgsSource::resident_bytes() const {
  if (!impl_) return 0;
  std::lock_guard<std::mutex> lock(impl_->mu);
  std::size_t n = 0;
  for (const Checkpoint& c : impl_->index) n += sizeof(Checkpoint) + c.window.capacity();
  return n;
}

}  // namespace flopline::viewer
