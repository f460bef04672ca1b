// Names one slice among several loaded traces: which trace (index into the list the
// viewer loaded, one per file) and where the slice sits in it. Every viewer structure
// that points at a slice uses this, so two files whose pids clash never mix.
#pragma once

#include <cstdint>
#include <span>

#include "flopline/trace/model.h"

namespace flopline::viewer {

// The traces the viewer shows, in load order. Pointers, so the caller owns them.
using TraceList = std::span<const trace::Trace* const>;

struct SliceHandle {
  std::uint32_t trace = trace::kNone;  // index into the TraceList
  trace::SliceRef ref;                 // track, row, index inside that trace
  bool valid() const { return trace != trace::kNone && ref.valid(); }
  friend bool operator==(const SliceHandle& a, const SliceHandle& b) {
    return a.trace == b.trace && a.ref.track == b.ref.track && a.ref.row == b.ref.row &&
           a.ref.index == b.ref.index;
  }
};

// The slice a valid handle names. The handle must come from the same TraceList.
inline const trace::Slice& slice_of(TraceList traces, const SliceHandle& h) {
  return traces[h.trace]->tracks[h.ref.track].at(h.ref);
}

}  // namespace flopline::viewer
