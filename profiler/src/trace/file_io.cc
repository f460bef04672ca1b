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

bool inflate_gzip(std::string_view in, std::string& out, std::string& error) {
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
    std::size_t in_chunk = std::min<std::size_t>(in.size() - consumed, 1u << 30);
    std::size_t out_chunk = std::min<std::size_t>(out.size() - produced, 1u << 30);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data() + consumed));
    zs.avail_in = static_cast<uInt>(in_chunk);
    zs.next_out = reinterpret_cast<Bytef*>(out.data() + produced);
    zs.avail_out = static_cast<uInt>(out_chunk);
    rc = inflate(&zs, Z_NO_FLUSH);
    consumed += in_chunk - zs.avail_in;
    produced += out_chunk - zs.avail_out;
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

bool write_all(std::FILE* f, std::string_view data) {
  return std::fwrite(data.data(), 1, data.size(), f) == data.size();
}

bool deflate_to(std::FILE* f, std::string_view data, int level, std::string& error) {
  z_stream zs{};
  if (deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    error = "zlib could not start";
    return false;
  }
  std::string buf(1 << 20, '\0');
  std::size_t consumed = 0;
  int rc = Z_OK;
  do {
    std::size_t in_chunk = std::min<std::size_t>(data.size() - consumed, 1u << 30);
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + consumed));
    zs.avail_in = static_cast<uInt>(in_chunk);
    int flush = consumed + in_chunk == data.size() ? Z_FINISH : Z_NO_FLUSH;
    do {
      zs.next_out = reinterpret_cast<Bytef*>(buf.data());
      zs.avail_out = static_cast<uInt>(buf.size());
      rc = deflate(&zs, flush);
      if (!write_all(f, std::string_view(buf.data(), buf.size() - zs.avail_out))) {
        error = std::strerror(errno);
        deflateEnd(&zs);
        return false;
      }
    } while (zs.avail_out == 0);
    consumed += in_chunk - zs.avail_in;
  } while (rc != Z_STREAM_END);
  deflateEnd(&zs);
  return true;
}

}  // namespace

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool read_file_maybe_gzip(const std::string& path, std::string& out, std::string& error) {
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
    return inflate_gzip(raw, out, error);
  }
  out = std::move(raw);
  return true;
}

bool write_file_atomic(const std::string& path, std::string_view data, bool gzip, int gzip_level,
                       std::string& error) {
  const std::string tmp = path + ".tmp";
  File f(std::fopen(tmp.c_str(), "wb"));
  if (!f) {
    error = std::string("cannot create ") + tmp + ": " + std::strerror(errno);
    return false;
  }
  bool ok = gzip ? deflate_to(f.get(), data, gzip_level, error) : write_all(f.get(), data);
  if (ok && std::fflush(f.get()) != 0) ok = false;
  if (!ok && error.empty()) error = std::strerror(errno);
  std::FILE* raw = f.release();
  if (std::fclose(raw) != 0 && ok) {
    ok = false;
    error = std::strerror(errno);
  }
  if (ok && std::rename(tmp.c_str(), path.c_str()) != 0) {
    ok = false;
    error = std::string("cannot rename ") + tmp + " to " + path + ": " + std::strerror(errno);
  }
  if (!ok) std::remove(tmp.c_str());
  return ok;
}

}  // namespace flopline::trace
