// The flopline trace model: processes -> tracks (CPU threads, GPU streams, async
// lanes) -> slices, instants, counters and flows, on one int64-nanosecond clock.
//
// A finalized track keeps its slices in rows. Rows [0, nesting_rows) are nesting
// depths: row d holds the slices at depth d, sorted by start and never overlapping,
// so a viewer finds the visible range of a row by binary search. Slices that overlap
// a sibling without nesting (kernels under programmatic dependent launch, async
// spans) go to the extra rows [nesting_rows, rows.size()), which obey the same
// invariant. No slice is ever dropped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "flopline/trace/args.h"
#include "flopline/trace/string_table.h"
#include "flopline/trace/types.h"

namespace flopline::trace {

// The hot struct: 32 bytes. Args and metrics live in side tables.
struct Slice {
  TimeNs start = 0;  // ns
  TimeNs dur = 0;    // ns, >= 0
  StringId name = 0;
  StringId cat = 0;
  ArgsId args = kNoArgs;
  std::uint32_t metrics = kNone;  // index into Trace::metrics, kNone when unknown
  TimeNs end() const { return start + dur; }
};
static_assert(sizeof(Slice) == 32, "Slice is the hot struct; keep it small");

// Work done by an operator or kernel. Negative means unknown.
struct SliceMetrics {
  double flops = -1;  // floating-point operations
  double bytes = -1;  // bytes moved to/from memory
  bool has_flops() const { return flops >= 0; }
  bool has_bytes() const { return bytes >= 0; }
};

enum class InstantScope : std::uint8_t { kThread, kProcess, kGlobal };

struct Instant {
  TimeNs ts = 0;
  StringId name = 0;
  StringId cat = 0;
  ArgsId args = kNoArgs;
  InstantScope scope = InstantScope::kThread;
  char phase = 'i';  // 'i'/'I', 'R' mark, 'P' sample, 'O'/'N'/'D' object events
};

struct CounterPoint {
  TimeNs ts = 0;
  double value = 0;
};

// One counter series. A "C" event {"name":N,"id":I,"args":{"k1":v1,"k2":v2}} feeds the
// series (N[I], k1) and (N[I], k2): catapult names a counter "N[I]" when it has an id,
// and draws each args member as its own series.
struct CounterSeries {
  std::uint32_t process = kNone;
  StringId name = 0;  // event name, with "[id]" appended when the event had an id
  StringId key = 0;   // the args member
  StringId cat = 0;
  std::vector<CounterPoint> points;  // sorted by ts after finalize
};

// Where a slice sits in its track after finalize.
struct SliceRef {
  std::uint32_t track = kNone;
  std::uint32_t row = kNone;
  std::uint32_t index = kNone;
  bool valid() const { return track != kNone; }
};

// One end of a flow arrow. `ts` and `track` are what the event said; `slice` is the
// slice it binds to after finalize (invalid when nothing was found there).
struct FlowEnd {
  std::uint32_t track = kNone;
  TimeNs ts = 0;
  // true: bind to the slice enclosing ts ("bp":"e", Kineto, v2 flows);
  // false: bind to the next slice starting at or after ts (v1 flow "f" without bp).
  bool enclosing = true;
  SliceRef slice;
};

// One arrow. A chain s -> t -> f becomes two arrows.
struct Flow {
  std::uint64_t id = 0;
  StringId name = 0;
  StringId cat = 0;
  FlowEnd from;
  FlowEnd to;
  bool joined() const { return from.slice.valid() && to.slice.valid(); }
};

enum class TrackKind : std::uint8_t {
  kThread,     // CPU thread (OS tid)
  kGpuStream,  // GPU stream under a device process
  kAsync,      // async spans (b/e, S/F) of one process
};

struct Track {
  std::uint32_t process = kNone;  // index into Trace::processes
  std::int64_t tid = 0;           // OS tid, stream number, or a synthetic id
  StringId tid_label = 0;         // the tid as written when it was not a number
  StringId name = 0;              // thread_name metadata, "" when none
  std::int64_t sort_index = 0;    // thread_sort_index, defaults to tid
  TrackKind kind = TrackKind::kThread;
  std::vector<std::vector<Slice>> rows;  // see the file comment
  std::uint32_t nesting_rows = 0;
  std::vector<Instant> instants;  // sorted by ts after finalize

  std::size_t slice_count() const;
  const Slice& at(SliceRef r) const { return rows[r.row][r.index]; }
};

struct Process {
  std::int64_t pid = 0;    // OS pid, device pid, or a synthetic id
  StringId pid_label = 0;  // the pid as written when it was not a number
  StringId name = 0;       // process_name metadata
  StringId labels = 0;     // process_labels metadata
  std::int64_t sort_index = 0;
  bool is_gpu = false;       // a GPU device process (holds streams)
  std::int32_t device = -1;  // CUDA device ordinal when is_gpu
};

// One GPU as described by a trace's deviceProperties entry, plus the peaks used for
// "% of peak". Peaks are 0 when unknown.
struct DeviceProperties {
  std::int32_t id = 0;
  std::string name;
  std::int32_t num_sms = 0;
  std::int32_t compute_major = 0;
  std::int32_t compute_minor = 0;
  std::uint64_t total_global_mem = 0;  // bytes
  std::int64_t clock_khz = 0;          // SM clock
  std::int64_t memory_clock_khz = 0;
  std::int32_t memory_bus_width = 0;  // bits
  // Peak dense FLOP/s per precision, keyed "fp64", "fp32", "tf32", "bf16", "fp16", "fp8".
  std::vector<std::pair<std::string, double>> peak_flops;
  double peak_bytes_per_s = 0;  // memory bandwidth
  std::string peak_source;      // "table", "calibrated", or "" (how peaks were obtained)
  std::string raw_json;         // the whole entry as read, for round trips of unknown keys

  double peak_flops_for(std::string_view precision) const;
};

// What loading or capturing cost: events read, skipped (with why), records dropped.
struct TraceReport {
  std::uint64_t events_total = 0;     // entries in traceEvents (or the top-level array)
  std::uint64_t events_loaded = 0;    // turned into model objects
  std::uint64_t events_metadata = 0;  // M events applied
  std::uint64_t events_skipped = 0;   // could not be used; see skip_reasons
  std::vector<std::pair<std::string, std::uint64_t>> skip_reasons;  // reason -> count
  std::vector<std::string> warnings;  // e.g. "truncated at byte 1234 (line 5:6): ..."
  std::uint64_t dropped_records = 0;  // capture: records CUPTI could not deliver
  // The JSON text read (after inflating), and how much of it errors left unread: bytes
  // skipped to the next event after syntax errors, and everything after an error
  // reading could not go on from. A read leaving more than half unread is an error.
  std::uint64_t text_bytes = 0;
  std::uint64_t text_bytes_unread = 0;
  void skip(std::string_view reason, std::uint64_t n = 1);
};

struct Trace {
  StringTable strings;
  ArgStore args;
  std::vector<Process> processes;
  std::vector<Track> tracks;
  std::vector<CounterSeries> counters;
  std::vector<Flow> flows;
  std::vector<SliceMetrics> metrics;
  std::vector<DeviceProperties> devices;
  // Chrome-trace baseTimeNanoseconds: model times are absolute (base already added).
  TimeNs base_time_ns = 0;
  // flopline's own metadata (written under the "flopline" key): version, command...
  std::vector<std::pair<std::string, std::string>> info;
  // Other top-level members of a read trace, as "key":value JSON text, kept for output.
  std::vector<std::pair<std::string, std::string>> extra_top_level;
  TraceReport report;

  std::size_t slice_count() const;
  std::size_t instant_count() const;
  std::size_t counter_point_count() const;
  // Earliest start and latest end over slices, instants and counters; {0,0} if empty.
  std::pair<TimeNs, TimeNs> time_bounds() const;
  SliceMetrics metrics_of(const Slice& s) const {
    return s.metrics == kNone ? SliceMetrics{} : metrics[s.metrics];
  }
  std::string_view str(StringId id) const { return strings.view(id); }
};

}  // namespace flopline::trace
