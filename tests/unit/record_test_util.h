// Hand-built capture records for the decoder's unit tests, as CUPTI would give them.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "flopline/capture/records.h"

namespace flopline::capture {

// An NVTX marker of thread `thread` in process `pid`: a push (kMarkerStart, with its
// name), a pop (kMarkerEnd) or an instant.
inline MarkerRecord thread_marker(std::uint32_t id, TimeNs ts, std::uint32_t flags,
                                  std::string name, std::uint32_t pid, std::uint32_t thread) {
  MarkerRecord m;
  m.id = id;
  m.flags = flags;
  m.timestamp = ts;
  m.name = std::move(name);
  m.object.kind = ObjectKind::kThread;
  m.object.process_id = pid;
  m.object.thread_id = thread;
  return m;
}

}  // namespace flopline::capture
