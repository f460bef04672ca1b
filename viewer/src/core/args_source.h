// The args of one event, for the tooltip and the details panel.
//
// A trace read for the viewer keeps its args in the file (trace::ArgsMode::kOnDemand:
// the model holds each args object's byte position, 8 bytes, instead of its text,
// ~130 bytes for a Kineto kernel), and this class reads one object back when it is
// asked for. Plain JSON files are read at the position (pread: microseconds). For
// .json.gz files, one pass over the file (started by start_indexing(), on its own
// thread) records inflate checkpoints every 8 MB of JSON (the 32 KB zlib window at a
// deflate block boundary, the technique of zlib's examples/zran.c); after that one
// args object costs at most 8 MB of inflating (~20 ms). Args kept as text
// (ArgsMode::kKeep, or events carrying FLOPs/bytes) come from the model directly.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "flopline/trace/model.h"

namespace flopline::viewer {

class ArgsSource {
 public:
  // `path` is the file the trace was read from (empty for traces made in memory).
  explicit ArgsSource(std::string path);
  ArgsSource(ArgsSource&&) noexcept;
  ArgsSource& operator=(ArgsSource&&) noexcept;
  ~ArgsSource();  // stops and joins the indexing thread

  // For a gzip file: builds the checkpoint index on a background thread now, so the
  // first tooltip does not wait for it. Nothing to do for plain files.
  void start_indexing();
  // The args object as strict JSON text ("{...}"), "{}" when the event has none.
  // Waits for the gzip index when it is still being built. On failure (file changed
  // or gone since loading) returns "{}" and sets *error. Thread-safe.
  std::string args_json(const trace::Trace& trace, trace::ArgsId id,
                        std::string* error = nullptr) const;
  // The same without waiting: nullopt while a gzip index is still being built.
  std::optional<std::string> try_args_json(const trace::Trace& trace, trace::ArgsId id,
                                           std::string* error = nullptr) const;
  // Bytes held by the gzip index (checkpoint windows).
  std::size_t resident_bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace flopline::viewer
