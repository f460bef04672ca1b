// NCCL payloads and their kernels; see nccl_calls.h.
#include "flopline/capture/nccl_calls.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <unordered_map>

namespace flopline::capture {
namespace {

using trace::Collective;

// NCCL's NVTX_SID_* numbers (src/include/nvtx.h) of its collective and point-to-point
// calls; the communicator-creating ones carry no message and are not needed.
std::optional<Collective> collective_of_sid(std::uint64_t sid) {
  switch (sid) {
    case 4:
      return Collective::kAllGather;
    case 5:
      return Collective::kAllReduce;
    case 6:
      return Collective::kBroadcast;
    case 7:
      return Collective::kReduceScatter;
    case 8:
      return Collective::kReduce;
    case 9:
      return Collective::kSend;
    case 10:
      return Collective::kRecv;
    case 16:
      return Collective::kAlltoAll;
    case 17:
      return Collective::kGather;
    case 18:
      return Collective::kScatter;
    default:
      return std::nullopt;
  }
}

std::uint64_t read_u64(const void* data, std::size_t offset) {
  std::uint64_t v = 0;
  std::memcpy(&v, static_cast<const unsigned char*>(data) + offset, sizeof v);
  return v;
}

bool runs_as_send_recv(Collective c) {
  return c == Collective::kAlltoAll || c == Collective::kGather || c == Collective::kScatter ||
         c == Collective::kSend || c == Collective::kRecv;
}

bool name_fits(Collective c, std::string_view kernel) {
  if (kernel.find(trace::to_string(c)) != std::string_view::npos) {
    // "Reduce" is in "AllReduce" and "ReduceScatter": the kernel must not be those.
    if (c != Collective::kReduce) return true;
    return kernel.find("AllReduce") == std::string_view::npos &&
           kernel.find("ReduceScatter") == std::string_view::npos;
  }
  return runs_as_send_recv(c) && kernel.find("SendRecv") != std::string_view::npos;
}

}  // namespace

std::optional<NcclPayload> decode_nccl_payload(std::uint64_t schema_id, const void* data,
                                               std::size_t size) {
  if (data == nullptr || schema_id < kNvtxStaticSchemaStart) return std::nullopt;
  const auto c = collective_of_sid(schema_id - kNvtxStaticSchemaStart);
  if (!c) return std::nullopt;
  const bool short_layout = *c == Collective::kAllGather || *c == Collective::kAlltoAll;
  const std::size_t current = short_layout ? 16 : 24;
  NcclPayload p;
  p.collective = *c;
  if (size == current) {
    p.communicator = read_u64(data, 0);
    p.message_bytes = read_u64(data, 8);
    return p;
  }
  // The layout before the communicator was added; AlltoAll, Gather and Scatter came later.
  const bool existed_before = schema_id - kNvtxStaticSchemaStart <= 10;
  if (existed_before && size == current - 8) {
    p.message_bytes = read_u64(data, 0);
    return p;
  }
  return std::nullopt;
}

std::vector<std::optional<KernelCollective>> match_nccl_calls(
    const std::vector<NcclCallRecord>& calls, const std::vector<NcclKernelLaunch>& launches) {
  std::vector<std::optional<KernelCollective>> out(launches.size());
  // Per thread: its calls and its launches, each in time order.
  std::unordered_map<std::uint32_t, std::vector<std::size_t>> calls_of, launches_of;
  for (std::size_t i = 0; i < calls.size(); ++i) calls_of[calls[i].thread_id].push_back(i);
  for (std::size_t i = 0; i < launches.size(); ++i) launches_of[launches[i].thread_id].push_back(i);
  for (auto& [thread, mine] : launches_of) {
    const auto found = calls_of.find(thread);
    if (found == calls_of.end()) continue;
    std::vector<std::size_t>& its_calls = found->second;
    std::stable_sort(its_calls.begin(), its_calls.end(),
                     [&](std::size_t a, std::size_t b) { return calls[a].start < calls[b].start; });
    std::stable_sort(mine.begin(), mine.end(), [&](std::size_t a, std::size_t b) {
      return launches[a].launch_start < launches[b].launch_start;
    });
    std::size_t next = 0;  // the first call not yet given to a launch
    for (const std::size_t l : mine) {
      const TimeNs at = launches[l].launch_start;
      // Every call since the previous launch: one call, or a group's. (A call whose own
      // kernel was dropped would be summed into the next kernel's: records are dropped
      // only over the memory cap, and the trace then says so.)
      const std::size_t first = next;
      while (next < its_calls.size() && calls[its_calls[next]].start <= at) ++next;
      if (first == next) continue;
      const NcclCallRecord& head = calls[its_calls[first]];
      KernelCollective k{head.collective, 0, 0, head.communicator};
      bool same = true;
      for (std::size_t i = first; i < next && same; ++i) {
        const NcclCallRecord& c = calls[its_calls[i]];
        same = c.collective == head.collective && c.communicator == head.communicator;
        k.message_bytes += c.message_bytes;
        ++k.calls;
      }
      if (same && name_fits(k.collective, launches[l].kernel_name)) out[l] = k;
    }
  }
  return out;
}

}  // namespace flopline::capture
