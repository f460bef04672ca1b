// A plain file mapped read-only for the reader's one pass over it (no copy: the pages
// stay the page cache's, and a trace larger than memory can still be read).
//
// A mapped file that shrinks while it is read (another program truncates or rewrites
// it) would raise SIGBUS on the first page past its new end and kill the process. While
// a MappedFile exists, a process-wide SIGBUS handler (installed once, on first use;
// faults anywhere else go on to the handler that was there before, or the default)
// maps zero pages over the rest of the mapping instead and records it. The reader then
// sees NUL bytes where the text was cut, stops there as at any damage, and the caller
// reports that the file shrank (lost_pages()).
#pragma once

#include <cstddef>
#include <string_view>

namespace flopline::trace {

class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  // Maps the first `size` bytes of `fd` (a regular file). False when it cannot be
  // mapped or guarded; callers then read the file instead.
  bool map(int fd, std::size_t size);
  std::string_view text() const { return {static_cast<const char*>(data_), size_}; }
  // True once a page could not be read because the file had become shorter.
  bool lost_pages() const;

 private:
  void* data_ = nullptr;
  std::size_t size_ = 0;
  int slot_ = -1;  // the guard's record of this mapping
};

}  // namespace flopline::trace
