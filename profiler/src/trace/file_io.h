// Getting the JSON text of a trace file, whatever the path is: a plain file (mapped),
// a gzip file (inflated as it is read), or something that is not a plain file (a pipe,
// /dev/stdin, a device, a /proc file) read as a stream with a size limit. File output
// is in flopline/trace/atomic_file.h.
//
// Nothing here trusts what a file says about itself: gzip's size trailer is at most a
// capped first guess, and memory grows only as text actually arrives. Damage keeps
// what came before it: a cut-off or corrupt .gz, a stream past the limit, or a file
// that shrinks while it is read leave the text read so far with a warning, as
// truncated JSON does; the reader decides what of it is usable.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "flopline/trace/atomic_file.h"
#include "trace/mapped_file.h"
#include "trace/text_buffer.h"

namespace flopline::trace {

// Compressed bytes consumed / compressed size while inflating; false cancels.
using InflateProgress = std::function<bool(std::uint64_t done, std::uint64_t total)>;

struct InputOptions {
  // The most text taken from a stream or inflated from gzip; 0: default_text_limit().
  std::uint64_t max_text_bytes = 0;
  // How long a named pipe may stay without a writer before reading gives up.
  int fifo_wait_ms = 10000;
  // Called every few MB of compressed input while a gzip file is inflated, and at the end.
  InflateProgress progress;
  // Stop reading a stream or inflating once the text's first byte shows it is not
  // JSON ('{' or '['): the start is all the reader needs to say what it is, and a
  // /dev/zero or a gzip bomb of zeros costs nothing.
  bool stop_at_non_json = true;
};

// Half of this machine's physical memory (and of the address-space limit, if one is
// set): the text must fit beside the model built from it.
std::uint64_t default_text_limit();

// The text of one file and what happened getting it. The text lives as long as this.
struct FileText {
  std::string_view text() const { return mapped_ok ? mapped.text() : buffer.view(); }
  // Damage met while getting the text, each with where it stopped; the text is what
  // came before it.
  std::vector<std::string> warnings;
  // For paths that are not plain files: "a character device, read as a stream", ...
  std::string kind;
  // A mapped file that became shorter while it was read: its old and new sizes.
  bool shrank() const { return mapped_ok && mapped.lost_pages(); }
  std::uint64_t size_at_open = 0;
  int fd = -1;  // kept open until the text is no longer needed, for the size after reading
  ~FileText();

  MappedFile mapped;
  bool mapped_ok = false;
  TextBuffer buffer;
};

// Fills `out` with the JSON text of `path`. On failure returns false and sets `error`
// to a reason without the path ("No such file or directory", "is a directory",
// "cancelled", "the gzip data is cut off at compressed byte 10 (the file is truncated);
// nothing could be inflated", ...).
bool read_file_text(const std::string& path, const InputOptions& options, FileText& out,
                    std::string& error);

// All of `path` as text, inflated when it is gzip; false (with the reason) when the
// file cannot be read whole. For tests and tools that want the bytes, not a trace.
bool read_file_maybe_gzip(const std::string& path, std::string& out, std::string& error,
                          const InflateProgress& progress = {});

bool ends_with(std::string_view s, std::string_view suffix);

}  // namespace flopline::trace
