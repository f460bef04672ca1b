// The records a capture has decoded so far, held as a list of sealed segments that are
// never changed again.
//
// The capture's decoder thread appends under a lock that the program's own threads also
// take (to hand over buffers and recorded calls). A snapshot of everything, which the
// trace written while the program runs takes every few seconds, must not copy a long
// run's records under that lock: the program's launching thread would wait for the copy.
// So seal() under the lock only moves the open segment into the list and copies the list
// of pointers; flatten() copies the records afterwards, without the lock. Bounded
// segments also keep one append from reallocating a vector of every record so far.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "flopline/capture/records.h"

namespace flopline::capture {

// Records of the kinds a batch holds (kernels, copies, sets, calls, syncs, markers,
// marker data, overheads, names), devices and thread names aside.
std::size_t record_count(const RecordBatch& b);

class SegmentedBatch {
 public:
  using Segments = std::vector<std::shared_ptr<const RecordBatch>>;

  explicit SegmentedBatch(std::size_t records_per_segment = 65536)
      : records_per_segment_(records_per_segment) {}

  // Moves `part`'s records in; the open segment is sealed once it holds
  // records_per_segment records.
  void append(RecordBatch&& part);

  // Seals the open segment and returns every segment, oldest first: what flatten()
  // turns into one batch. Copies no record.
  Segments seal();

  // One batch with every segment's records in order.
  static RecordBatch flatten(const Segments& segments);

  // Seals the open segment and hands every segment over, leaving none: a streaming
  // capture's append takes the records, devices and thread names that arrived since the
  // last take(). Copies no record.
  Segments take();
  // flatten() for segments no one else holds: their records are moved, not copied.
  static RecordBatch merge(Segments&& segments);

  // Forgets the records; devices and thread names stay (the decoder reports each once).
  void clear_records();

  std::size_t segment_count() const { return sealed_.size() + (open_empty() ? 0 : 1); }

 private:
  bool open_empty() const;

  std::size_t records_per_segment_;
  Segments sealed_;
  RecordBatch open_;
};

}  // namespace flopline::capture
