// Who waits for whom in a multi-rank job: NCCL kernels (with the call the capture tied
// them to, flopline/trace/collectives.h) matched across the ranks' traces, and each
// rank's wait for the last rank to arrive (docs/STATS.md, "Collective waits").
//
// NCCL runs the collectives of one communicator in the same order on every rank, so the
// k-th kernel of a communicator on one rank is the k-th on every other: a collective is
// matched by communicator and order, and checked by its name and message size. A rank
// arrives when its kernel starts; the last arrival starts the transfer, so every other
// rank's kernel spends the difference waiting (no more than its own duration: beyond
// that the clocks disagree, as on two hosts whose clocks are not synchronized).
//
// Capture windows cut each rank's list at slightly different collectives (`flopline
// start` reaches each process when its watcher next looks): when every rank recorded in
// windows on one host (one clock), where a rank's first kernel of a communicator does not
// overlap in time the first kernel of the rank that started recording last, its kernels
// before the first one that does (same collective and size) are left out, and the order
// counts from there. The files of one window of a run (`flopline launch`'s "window
// file") are matched with each other only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "flopline/trace/collectives.h"
#include "flopline/trace/model.h"

namespace flopline::trace {

// CollectiveInstance and collective_instances(): flopline/trace/collectives.h.

// The trace's rank: distributedInfo's "rank", else the "rank" of flopline's metadata,
// when it is a whole number.
std::optional<std::int64_t> trace_rank(const Trace& t);

// The window of a run a trace holds alone ("window 2 of the run", from the "window
// file" metadata of `flopline launch`'s files), or "" for a trace of a whole process.
std::string trace_window_group(const Trace& t);
// Whether the trace was recorded in capture windows ("capture range" in its metadata).
bool trace_recorded_in_windows(const Trace& t);
// The host whose clock the trace's times are on ("host" in its metadata; "" unknown).
std::string trace_host(const Trace& t);

struct RankCollectives {
  std::string file;
  std::optional<std::int64_t> rank;
  std::vector<CollectiveInstance> instances;  // by start time
  // The rank's window (--range, --steps): a matched collective counts, for every rank,
  // when the last rank to arrive arrives inside its own window. Matching always uses the
  // whole trace, so windows that cut a communicator's collectives differently on two
  // ranks cannot break the order.
  TimeNs window_begin = INT64_MIN;
  TimeNs window_end = INT64_MAX;
  // trace_window_group(): collectives are matched among inputs of one group only.
  std::string group = {};
  // trace_recorded_in_windows() and trace_host(): when every member of a communicator
  // was recorded in windows on one host, its lists are aligned by time at their start.
  bool windowed = false;
  std::string host = {};
};

struct RankWaits {
  std::string file;
  std::optional<std::int64_t> rank;
  std::uint64_t matched = 0;        // its kernels matched with every other rank's
  std::int64_t kernel_ns = 0;       // their GPU time
  std::int64_t wait_ns = 0;         // of it, waiting for the last rank to arrive
  std::uint64_t last_arrivals = 0;  // collectives it was the last to arrive at
  std::uint64_t clock_suspect = 0;  // waits longer than its kernel (cut to the kernel)
};

// One rank's kernel of a matched collective.
struct CollectiveArrival {
  std::size_t rank = 0;  // index into the inputs
  TimeNs start = 0;      // its arrival
  TimeNs end = 0;
  std::int64_t wait_ns = 0;  // for the last to arrive (cut to the kernel, as in RankWaits)
};

// One collective matched across ranks.
struct MatchedCollective {
  std::string communicator;
  std::uint64_t order = 0;  // its place among its communicator's collectives, from 0
  Collective collective = Collective::kAllReduce;
  std::uint64_t message_bytes = 0;
  std::size_t last_rank = 0;                // index into the inputs of the last to arrive
  std::vector<CollectiveArrival> arrivals;  // one per rank of the communicator, by index
};

struct CollectiveWaits {
  std::vector<RankWaits> ranks;           // one per input, in input order
  std::uint64_t collectives = 0;          // matched across ranks (with windows: whose last
                                          // arrival is inside the last rank's window)
  std::uint64_t unmatched = 0;            // kernels left out: no communicator, one rank only,
                                          // a rank's trace shorter, or order broken
  std::optional<std::size_t> waited_for;  // the rank last to arrive most often (index)
  // Each matched collective, by communicator then order: only with keep_matched (the
  // viewer's table of the longest waits), since it grows with collectives x ranks.
  std::vector<MatchedCollective> matched;
};

CollectiveWaits collective_waits(const std::vector<RankCollectives>& ranks,
                                 bool keep_matched = false);

}  // namespace flopline::trace
