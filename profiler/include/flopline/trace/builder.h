// TraceBuilder: the one way events enter a Trace. Readers and capture add events in
// any order; finalize() sorts every track, assigns nesting and extra rows, sorts
// instants and counters, and binds flow ends to slices.
#pragma once

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "flopline/trace/model.h"

namespace flopline::trace {

class TraceBuilder {
 public:
  explicit TraceBuilder(Trace& trace);

  // Processes and tracks are found or created by key. A pid/tid written as a string
  // that is a decimal integer is the same as that number (Kineto writes one thread
  // both ways); other strings get synthetic ids and keep their text as the label.
  std::uint32_t process(std::int64_t pid);
  std::uint32_t process(std::string_view pid_text);
  // Thread and GPU-stream tracks share one key space (pid, tid): asking for kGpuStream
  // marks an existing thread track as a stream (and its process as a GPU process).
  // Async tracks have their own key space per process.
  std::uint32_t track(std::uint32_t process, std::int64_t tid, TrackKind kind = TrackKind::kThread);
  std::uint32_t track(std::uint32_t process, std::string_view tid_text,
                      TrackKind kind = TrackKind::kThread);

  // Adds a complete slice (dur >= 0). Returns nothing: slices move during finalize.
  void add_slice(std::uint32_t track, const Slice& s);
  void add_instant(std::uint32_t track, const Instant& i);
  // Counter series are keyed by (process, name, key).
  std::uint32_t counter_series(std::uint32_t process, StringId name, StringId key, StringId cat);
  void add_counter_point(std::uint32_t series, TimeNs ts, double value);
  void add_flow(const Flow& f);
  std::uint32_t add_metrics(const SliceMetrics& m);

  // Sorts and lays out everything. Call once, after the last add.
  void finalize();

  Trace& trace() { return trace_; }

 private:
  struct PendingTrack {
    std::vector<Slice> slices;
  };

  Trace& trace_;
  std::unordered_map<std::int64_t, std::uint32_t> process_by_pid_;
  std::unordered_map<StringId, std::uint32_t> process_by_label_;
  struct TrackKey {
    std::uint32_t process;
    std::int64_t tid;
    TrackKind kind;
    bool operator==(const TrackKey&) const = default;
  };
  struct TrackKeyHash {
    std::size_t operator()(const TrackKey& k) const;
  };
  std::unordered_map<TrackKey, std::uint32_t, TrackKeyHash> track_by_key_;
  std::unordered_map<StringId, std::int64_t> synthetic_tid_by_label_;
  struct CounterKey {
    std::uint32_t process;
    StringId name, key;
    bool operator==(const CounterKey&) const = default;
  };
  struct CounterKeyHash {
    std::size_t operator()(const CounterKey& k) const;
  };
  std::unordered_map<CounterKey, std::uint32_t, CounterKeyHash> counter_by_key_;
  std::vector<PendingTrack> pending_;
  std::int64_t next_synthetic_pid_ = -1000000000;
  std::int64_t next_synthetic_tid_ = -1000000000;
  // One-entry cache: consecutive events usually share a track.
  TrackKey last_key_{kNone, 0, TrackKind::kThread};
  std::uint32_t last_track_ = kNone;
};

// Lays out slices (any order) into rows as described in model.h. Exposed for tests.
// Returns the number of nesting rows; extra rows follow.
std::uint32_t assign_rows(std::vector<Slice>& slices, std::vector<std::vector<Slice>>& rows);

// Binds each flow end to a slice (see FlowEnd). Exposed for tests.
void bind_flows(Trace& trace);

}  // namespace flopline::trace
