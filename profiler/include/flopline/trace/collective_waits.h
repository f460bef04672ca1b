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

struct RankCollectives {
  std::string file;
  std::optional<std::int64_t> rank;
  std::vector<CollectiveInstance> instances;  // by start time
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

struct CollectiveWaits {
  std::vector<RankWaits> ranks;           // one per input, in input order
  std::uint64_t collectives = 0;          // matched across ranks
  std::uint64_t unmatched = 0;            // kernels left out: no communicator, one rank only,
                                          // a rank's trace shorter, or order broken
  std::optional<std::size_t> waited_for;  // the rank last to arrive most often (index)
};

CollectiveWaits collective_waits(const std::vector<RankCollectives>& ranks);

}  // namespace flopline::trace
