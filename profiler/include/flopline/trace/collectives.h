// NCCL collectives on kernels: the args the capture writes on an NCCL kernel whose call
// it saw (from the payload of NCCL's own NVTX range), nccl-tests' bandwidth formulas,
// and the per-collective summary `flopline stats` prints. One place for the words, so
// writer and readers agree (docs/TRACE_FORMAT.md, "Collectives").
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "flopline/trace/model.h"

namespace flopline::trace {

enum class Collective : std::uint8_t {
  kAllReduce,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kAlltoAll,
  kGather,
  kScatter,
  kSend,
  kRecv,
};

const char* to_string(Collective c);  // NCCL's names: "AllReduce", "AllGather", ...

// Kernels that wait for another GPU or process, by name (mangled or not): NCCL's
// ncclDevKernel_* and older ncclKernel_*, NVSHMEM's, PyTorch's symmetric-memory
// collectives. Never replayed by the counters; "communication" in time breakdowns.
bool is_communication_kernel(std::string_view name);
// NCCL's alone (ncclDevKernel_*, ncclKernel_*): the ones that carry a collective.
bool is_nccl_kernel(std::string_view name);
std::optional<Collective> collective_from_name(std::string_view name);

// Args of an NCCL kernel (all but the first two only when known).
inline constexpr std::string_view kCollectiveArg = "collective";  // "AllReduce"
// NCCL's "Message size [bytes]": count x type size of the call (for AllGather the bytes
// each rank sends, for ReduceScatter the bytes each rank receives).
inline constexpr std::string_view kCollectiveMessageBytesArg = "collective message bytes";
inline constexpr std::string_view kCollectiveCallsArg = "collective calls";  // > 1: a group
// NCCL's communicator hash as "0x..." (a string: JSON numbers lose 64-bit integers);
// the same on every rank of the communicator.
inline constexpr std::string_view kCollectiveCommunicatorArg = "collective communicator";
inline constexpr std::string_view kCollectiveRanksArg = "collective ranks";
inline constexpr std::string_view kCollectiveRanksSourceArg = "collective ranks source";
inline constexpr std::string_view kCollectiveSizeArg = "collective size (bytes)";  // nccl-tests' S
inline constexpr std::string_view kAlgbwArg = "algbw (GB/s)";
inline constexpr std::string_view kBusbwArg = "busbw (GB/s)";

// nccl-tests' figures (their doc/PERFORMANCE.md) for one call: the size S they print,
// algbw = S / t and busbw = algbw x the collective's factor (2(n-1)/n for AllReduce,
// (n-1)/n for AllGather, ReduceScatter, AlltoAll, Gather and Scatter, 1 for Broadcast,
// Reduce, Send and Recv). S is the message for AllReduce, Broadcast, Reduce, Send and
// Recv, and the message x n for the others (what one rank receives or sends in all),
// so those need the rank count n; without it only what does not depend on n is given.
// GB/s are 1e9 bytes per second; t is the kernel's GPU time (which includes waiting
// for the other ranks to arrive).
struct CollectiveBandwidth {
  std::optional<double> size_bytes;
  std::optional<double> algbw_gbps;
  std::optional<double> busbw_gbps;
};
CollectiveBandwidth nccl_tests_bandwidth(Collective c, std::uint64_t message_bytes,
                                         std::optional<std::uint32_t> ranks,
                                         std::int64_t duration_ns);

// One NCCL kernel with its call, as its args say.
struct CollectiveInstance {
  std::string communicator;  // "0x..."; empty when the trace has none (older NCCL)
  Collective collective = Collective::kAllReduce;
  std::uint64_t message_bytes = 0;
  std::optional<std::uint32_t> ranks;
  TimeNs start = 0;  // absolute (baseTimeNanoseconds added)
  TimeNs end = 0;
};

// Every kernel slice with a collective and a message size, by start time: the one
// reader of the args above, for the summary and the waits across ranks alike.
std::vector<CollectiveInstance> collective_instances(const Trace& t);

// Calls of one collective with one message size and rank count, over traces' kernels.
struct CollectiveRow {
  Collective collective = Collective::kAllReduce;
  std::uint64_t message_bytes = 0;
  std::optional<std::uint32_t> ranks;
  std::uint64_t kernels = 0;
  std::int64_t total_ns = 0;
  CollectiveBandwidth bandwidth;  // over the mean kernel time, as nccl-tests reports
};

class CollectiveSummary {
 public:
  void add(std::span<const CollectiveInstance> instances);
  void add(const Trace& t) { add(collective_instances(t)); }
  // Rows by total time, longest first.
  std::vector<CollectiveRow> rows() const;
  bool empty() const { return rows_.empty(); }

 private:
  using Key = std::tuple<int, std::uint64_t, std::int64_t>;  // collective, message, ranks
  std::vector<CollectiveRow> rows_;  // kernels and total_ns summed; bandwidth in rows()
  std::map<Key, std::size_t> index_;
};

}  // namespace flopline::trace
