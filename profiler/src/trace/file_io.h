// Whole-file input and crash-safe output, with gzip on both sides.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace flopline::trace {

// Compressed bytes consumed / compressed size while inflating; false cancels.
using InflateProgress = std::function<bool(std::uint64_t done, std::uint64_t total)>;

// Reads all of `path` into `out`, inflating it when it starts with the gzip magic
// bytes (whatever its name). On failure returns false and sets `error` to a reason
// without the path ("no such file", "gzip data is corrupt at byte N", "cancelled", ...).
// `progress`, when set, is called every few MB of compressed input and at the end.
bool read_file_maybe_gzip(const std::string& path, std::string& out, std::string& error,
                          const InflateProgress& progress = {});

// Writes `data` to PATH.tmp, gzip-compressed when `gzip` is set, flushes, then renames
// to PATH. On failure removes PATH.tmp, leaves any old PATH alone, returns false and
// sets `error` to a reason.
bool write_file_atomic(const std::string& path, std::string_view data, bool gzip, int gzip_level,
                       std::string& error);

// Writes a file in pieces to PATH.tmp, gzip-compressed when asked, and renames it to
// PATH on commit(). Until commit() succeeds PATH is untouched; a writer destroyed
// without commit() (an error, an exception) removes PATH.tmp. Lets a multi-GB trace
// go to disk through a small buffer instead of being rendered whole first.
class AtomicFileWriter {
 public:
  AtomicFileWriter();
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  bool open(const std::string& path, bool gzip, int gzip_level);
  bool write(std::string_view data);
  bool commit();
  // Why the last call failed ("cannot create P.tmp: No space left on device").
  const std::string& error() const { return error_; }
  std::uint64_t bytes_in() const { return bytes_in_; }  // uncompressed bytes written

 private:
  struct Deflater;
  void abort();
  std::string path_;
  std::FILE* file_ = nullptr;
  std::unique_ptr<Deflater> deflater_;
  std::string error_;
  std::uint64_t bytes_in_ = 0;
};

bool ends_with(std::string_view s, std::string_view suffix);

}  // namespace flopline::trace
