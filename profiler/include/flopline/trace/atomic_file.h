// Crash-safe file output: a file is written under a temporary name in its own
// directory and renamed over PATH only once every byte is written, so a reader of PATH
// sees the old file or the new one, never half of one. Used by the trace writer and by
// the viewer's screenshots, CSV exports and state dumps.
//
// The temporary file gets a fresh random name, created exclusively (O_CREAT|O_EXCL,
// no symlink followed): a symlink planted at a predictable name cannot redirect the
// write, and two writers of one PATH never share a temporary file (the last rename
// wins, and PATH is always one writer's complete output). A PATH that exists and is
// not a regular file (/dev/stdout, a pipe, a device) is written in place instead:
// renaming over it would replace it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

namespace flopline::trace {

// Why PATH could not be written, said before the work that produces it starts (a
// screenshot, a CSV export): its directory must exist and be writable and its name
// must fit the file system. Empty when it can; an existing device or pipe is fine.
std::string output_path_problem(const std::string& path);

// Writes a file in pieces, gzip-compressed when asked, and renames it to PATH on
// commit(). Until commit() succeeds PATH is untouched; a writer destroyed without
// commit() (an error, an exception) removes its temporary file. Lets a multi-GB trace
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
  // Why the last call failed ("cannot create DIR/.NAME.3f2a...: No space left on device").
  const std::string& error() const { return error_; }
  std::uint64_t bytes_in() const { return bytes_in_; }  // uncompressed bytes written
  // The temporary file; empty before open() and when PATH is written in place.
  const std::string& temp_path() const { return tmp_; }

 private:
  struct Deflater;
  const std::string& target() const;  // the file being written
  bool fail(const std::string& what, int err);
  void abort();
  std::string path_;
  std::string tmp_;
  std::FILE* file_ = nullptr;
  std::unique_ptr<Deflater> deflater_;
  std::string error_;
  std::uint64_t bytes_in_ = 0;
};

// Writes `data` to PATH through AtomicFileWriter. On failure leaves any old PATH
// alone, returns false and sets `error` to a reason.
bool write_file_atomic(const std::string& path, std::string_view data, bool gzip, int gzip_level,
                       std::string& error);

}  // namespace flopline::trace
