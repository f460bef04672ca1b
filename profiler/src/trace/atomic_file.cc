#include "flopline/trace/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <random>

namespace flopline::trace {
namespace {

// "PATH.<16 hex digits>.tmp": beside PATH (rename needs the same file system), and
// unpredictable, so no other process can have prepared it. Where that name would be
// longer than the file system allows, ".flopline-<16 hex digits>.tmp" in the same
// directory.
std::string temp_name_for(const std::string& path) {
  static std::atomic<std::uint64_t> counter{0};
  std::random_device device;
  const std::uint64_t r = (static_cast<std::uint64_t>(device()) << 32 ^ device()) +
                          counter.fetch_add(0x9e3779b97f4a7c15ull, std::memory_order_relaxed);
  char hex[17];
  for (int i = 0; i < 16; ++i) hex[i] = "0123456789abcdef"[(r >> (60 - 4 * i)) & 15];
  hex[16] = '\0';
  const std::size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
  const std::size_t name_bytes = path.size() - (slash == std::string::npos ? 0 : slash + 1);
  const long max = pathconf(dir.c_str(), _PC_NAME_MAX);
  const std::size_t limit = max > 0 ? static_cast<std::size_t>(max) : 255;
  if (name_bytes + 21 > limit) {
    return (slash == std::string::npos ? std::string() : path.substr(0, slash + 1)) + ".flopline-" +
           hex + ".tmp";
  }
  return path + "." + hex + ".tmp";
}

}  // namespace

std::string output_path_problem(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return path + ": is a directory";
    if (!S_ISREG(st.st_mode)) return {};  // written in place
  }
  const std::size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name.empty()) return path + ": names a directory, not a file";
  if (::stat(dir.c_str(), &st) != 0) return dir + ": no such directory";
  if (!S_ISDIR(st.st_mode)) return dir + ": not a directory";
  if (::access(dir.c_str(), W_OK | X_OK) != 0) return dir + ": " + std::strerror(errno);
  const long max = ::pathconf(dir.c_str(), _PC_NAME_MAX);
  const std::size_t limit = max > 0 ? static_cast<std::size_t>(max) : 255;
  if (name.size() > limit) {
    return path + ": the file name is too long (" + std::to_string(name.size()) +
           " bytes; the file system allows " + std::to_string(limit) + ")";
  }
  return {};
}

struct AtomicFileWriter::Deflater {
  z_stream zs{};
  std::string buf = std::string(1 << 20, '\0');
  bool started = false;
  ~Deflater() {
    if (started) deflateEnd(&zs);
  }
};

AtomicFileWriter::AtomicFileWriter() = default;
AtomicFileWriter::~AtomicFileWriter() {
  abort();
}

void AtomicFileWriter::abort() {
  if (!file_) return;
  std::fclose(file_);
  file_ = nullptr;
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
}

const std::string& AtomicFileWriter::target() const {
  return tmp_.empty() ? path_ : tmp_;
}

bool AtomicFileWriter::fail(const std::string& what, int err) {
  error_ = what + ": " + std::strerror(err);
  abort();
  return false;
}

bool AtomicFileWriter::open(const std::string& path, bool gzip, int gzip_level) {
  abort();
  path_ = path;
  tmp_.clear();
  bytes_in_ = 0;
  int fd = -1;
  struct stat st {};
  std::string opened;  // what fd is, for messages
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    // A device, a pipe, /dev/stdout: written in place. Renaming a file over it would
    // replace the device (or the terminal's link) instead of writing to it.
    if (S_ISDIR(st.st_mode)) {
      error_ = "cannot write " + path + ": it is a directory";
      return false;
    }
    opened = path;
    fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  } else {
    for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
      opened = temp_name_for(path);
      // 0666 and the umask: the file gets the permissions any new file would.
      fd = ::open(opened.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
      if (fd < 0 && errno != EEXIST) break;
    }
    if (fd >= 0) tmp_ = opened;
  }
  if (fd < 0) {
    error_ = "cannot create " + opened + ": " + std::strerror(errno);
    return false;
  }
  file_ = ::fdopen(fd, "wb");
  if (!file_) {
    const int err = errno;
    ::close(fd);
    if (!tmp_.empty()) ::unlink(tmp_.c_str());
    tmp_.clear();
    error_ = "cannot create " + opened + ": " + std::strerror(err);
    return false;
  }
  deflater_.reset();
  if (gzip) {
    deflater_ = std::make_unique<Deflater>();
    if (deflateInit2(&deflater_->zs, gzip_level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
        Z_OK) {
      error_ = "zlib could not start";
      abort();
      return false;
    }
    deflater_->started = true;
  }
  return true;
}

bool AtomicFileWriter::write(std::string_view data) {
  if (!file_) return false;
  bytes_in_ += data.size();
  if (!deflater_) {
    if (std::fwrite(data.data(), 1, data.size(), file_) == data.size()) return true;
    return fail("cannot write " + target(), errno);
  }
  z_stream& zs = deflater_->zs;
  std::size_t consumed = 0;
  do {  // also runs once for empty data, which is how commit() finishes the stream
    const std::size_t in_chunk = std::min<std::size_t>(data.size() - consumed, 1u << 30);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + consumed));
    zs.avail_in = static_cast<uInt>(in_chunk);
    const int flush = data.empty() ? Z_FINISH : Z_NO_FLUSH;
    int rc;
    do {
      zs.next_out = reinterpret_cast<Bytef*>(deflater_->buf.data());
      zs.avail_out = static_cast<uInt>(deflater_->buf.size());
      rc = deflate(&zs, flush);
      const std::size_t produced = deflater_->buf.size() - zs.avail_out;
      if (std::fwrite(deflater_->buf.data(), 1, produced, file_) != produced) {
        return fail("cannot write " + target(), errno);
      }
    } while (zs.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
    consumed += in_chunk;
  } while (consumed < data.size());
  return true;
}

bool AtomicFileWriter::commit() {
  if (!file_) return false;
  if (deflater_ && !write(std::string_view())) return false;
  if (std::fflush(file_) != 0) return fail("cannot write " + target(), errno);
  const int closed = std::fclose(file_);
  const int saved = errno;
  file_ = nullptr;
  if (closed != 0) {
    if (!tmp_.empty()) ::unlink(tmp_.c_str());
    error_ = "cannot write " + target() + ": " + std::strerror(saved);
    return false;
  }
  if (tmp_.empty()) return true;  // written in place
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp_.c_str());
    error_ = "cannot rename " + tmp_ + " to " + path_ + ": " + std::strerror(err);
    return false;
  }
  return true;
}

bool write_file_atomic(const std::string& path, std::string_view data, bool gzip, int gzip_level,
                       std::string& error) {
  AtomicFileWriter w;
  if (w.open(path, gzip, gzip_level) && w.write(data) && w.commit()) return true;
  error = w.error();
  return false;
}

}  // namespace flopline::trace
