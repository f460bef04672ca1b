#include "trace/file_io.h"

#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace flopline::trace {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const {
    if (f) std::fclose(f);
  }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

// Compressed input per inflate() call, and so between progress calls.
constexpr std::size_t kInflateStep = 4u << 20;

bool inflate_gzip(std::string_view in, std::string& out, std::string& error, const InflateProgress& progress) {
  z_stream zs{};
  if (inflateInit2(&zs, 15 + 32) != Z_OK) {  // 32: accept gzip and zlib headers
    error = "zlib could not start";
    return false;
  }
  // The gzip trailer holds the input size mod 2^32: a good first guess for the output.
  std::size_t guess = in.size() * 4;
  if (in.size() >= 4) {
    std::uint32_t isize = 0;
    std::memcpy(&isize, in.data() + in.size() - 4, 4);
    if (isize > in.size()) guess = isize;
  }
  out.resize(guess + 1);
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  std::size_t produced = 0;
  std::size_t consumed = 0;
  int rc = Z_OK;
  while (true) {
    if (produced == out.size()) out.resize(out.size() * 2);
    std::size_t in_chunk = std::min<std::size_t>(in.size() - consumed, kInflateStep);
    std::size_t out_chunk = std::min<std::size_t>(out.size() - produced, 1u << 30);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + consumed));
    zs.avail_in = static_cast<uInt>(in_chunk);
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
    zs.avail_out = static_cast<uInt>(out_chunk);
    rc = inflate(&zs, Z_NO_FLUSH);
    consumed += in_chunk - zs.avail_in;
    produced += out_chunk - zs.avail_out;
    if (progress && !progress(consumed, in.size())) {
      error = "cancelled";
      inflateEnd(&zs);
      out.resize(produced);
      return false;
    }
    if (rc == Z_STREAM_END) {
      // Concatenated gzip members (what `cat a.gz b.gz` makes) continue the stream.
      if (consumed < in.size() && static_cast<unsigned char>(in[consumed]) == 0x1f) {
        inflateReset(&zs);
        continue;
      }
      break;
    }
    if (rc == Z_BUF_ERROR && consumed == in.size()) {
      error = "gzip data is truncated (ends at compressed byte " + std::to_string(consumed) + ")";
      inflateEnd(&zs);
      out.resize(produced);
      return false;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      error = std::string("gzip data is corrupt at compressed byte ") + std::to_string(consumed) +
              (zs.msg ? std::string(": ") + zs.msg : std::string());
      inflateEnd(&zs);
      out.resize(produced);
      return false;
    }
  }
  inflateEnd(&zs);
  out.resize(produced);
  return true;
}

}  // namespace

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool read_file_maybe_gzip(const std::string& path, std::string& out, std::string& error,
                          const InflateProgress& progress) {
  File f(std::fopen(path.c_str(), "rb"));
  if (!f) {
    error = std::strerror(errno);
    return false;
  }
  std::string raw;
  if (std::fseek(f.get(), 0, SEEK_END) == 0) {
    long size = std::ftell(f.get());
    if (size < 0) {
      error = "is not a regular file";
      return false;
    }
    std::rewind(f.get());
    raw.resize(static_cast<std::size_t>(size));
    if (std::fread(raw.data(), 1, raw.size(), f.get()) != raw.size()) {
      error = std::ferror(f.get()) ? std::strerror(errno) : "file shrank while reading";
      return false;
    }
  } else {  // a pipe or similar: read until EOF
    char buf[1 << 16];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f.get())) > 0) raw.append(buf, n);
    if (std::ferror(f.get())) {
      error = std::strerror(errno);
      return false;
    }
  }
  if (raw.size() >= 2 && static_cast<unsigned char>(raw[0]) == 0x1f &&
      static_cast<unsigned char>(raw[1]) == 0x8b) {
    return inflate_gzip(raw, out, error, progress);
  }
  out = std::move(raw);
  return true;
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
AtomicFileWriter::~AtomicFileWriter() { abort(); }

void AtomicFileWriter::abort() {
  if (!file_) return;
  std::fclose(file_);
  file_ = nullptr;
  std::remove((path_ + ".tmp").c_str());
}

bool AtomicFileWriter::open(const std::string& path, bool gzip, int gzip_level) {
  abort();
  path_ = path;
  bytes_in_ = 0;
  const std::string tmp = path + ".tmp";
  file_ = std::fopen(tmp.c_str(), "wb");
  if (!file_) {
    error_ = "cannot create " + tmp + ": " + std::strerror(errno);
    return false;
  }
  deflater_.reset();
  if (gzip) {
    deflater_ = std::make_unique<Deflater>();
    if (deflateInit2(&deflater_->zs, gzip_level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
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
    error_ = std::string("cannot write ") + path_ + ".tmp: " + std::strerror(errno);
    abort();
    return false;
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
        error_ = std::string("cannot write ") + path_ + ".tmp: " + std::strerror(errno);
        abort();
        return false;
      }
    } while (zs.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
    consumed += in_chunk;
  } while (consumed < data.size());
  return true;
}

bool AtomicFileWriter::commit() {
  if (!file_) return false;
  if (deflater_ && !write(std::string_view())) return false;
  const std::string tmp = path_ + ".tmp";
  const bool flushed = std::fflush(file_) == 0;
  const int saved = errno;
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!flushed || !closed) {
    error_ = "cannot write " + tmp + ": " + std::strerror(flushed ? errno : saved);
    std::remove(tmp.c_str());
    return false;
  }
  if (std::rename(tmp.c_str(), path_.c_str()) != 0) {
    error_ = "cannot rename " + tmp + " to " + path_ + ": " + std::strerror(errno);
    std::remove(tmp.c_str());
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
