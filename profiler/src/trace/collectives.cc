// Collective names, nccl-tests' bandwidths and the per-collective summary; see
// collectives.h.
#include "flopline/trace/collectives.h"

#include <algorithm>
#include <array>
#include <tuple>

#include "flopline/trace/json_value.h"
#include "flopline/trace/types.h"

namespace flopline::trace {
namespace {

constexpr std::array<std::pair<Collective, const char*>, 10> kNames = {{
    {Collective::kAllReduce, "AllReduce"},
    {Collective::kAllGather, "AllGather"},
    {Collective::kReduceScatter, "ReduceScatter"},
    {Collective::kBroadcast, "Broadcast"},
    {Collective::kReduce, "Reduce"},
    {Collective::kAlltoAll, "AlltoAll"},
    {Collective::kGather, "Gather"},
    {Collective::kScatter, "Scatter"},
    {Collective::kSend, "Send"},
    {Collective::kRecv, "Recv"},
}};

// Whether nccl-tests' S is the message times the rank count (the collectives in which
// one rank receives or sends a message per rank).
bool size_is_per_rank(Collective c) {
  switch (c) {
    case Collective::kAllGather:
    case Collective::kReduceScatter:
    case Collective::kAlltoAll:
    case Collective::kGather:
    case Collective::kScatter:
      return true;
    default:
      return false;
  }
}

}  // namespace

bool is_nccl_kernel(std::string_view name) {
  return name.find("ncclDevKernel") != std::string_view::npos ||
         name.find("ncclKernel") != std::string_view::npos;
}

bool is_communication_kernel(std::string_view name) {
  return is_nccl_kernel(name) || name.find("nvshmem") != std::string_view::npos ||
         name.find("symmetric_memory") != std::string_view::npos;
}

const char* to_string(Collective c) {
  for (const auto& [k, name] : kNames) {
    if (k == c) return name;
  }
  return "?";
}

std::optional<Collective> collective_from_name(std::string_view name) {
  for (const auto& [k, n] : kNames) {
    if (name == n) return k;
  }
  return std::nullopt;
}

CollectiveBandwidth nccl_tests_bandwidth(Collective c, std::uint64_t message_bytes,
                                         std::optional<std::uint32_t> ranks,
                                         std::int64_t duration_ns) {
  CollectiveBandwidth b;
  const double n = static_cast<double>(ranks.value_or(0));  // 0: unknown
  const double message = static_cast<double>(message_bytes);
  if (size_is_per_rank(c) && n == 0) return b;
  const double size = size_is_per_rank(c) ? message * n : message;
  b.size_bytes = size;
  if (duration_ns <= 0) return b;
  const double algbw = size / static_cast<double>(duration_ns);  // bytes/ns = GB/s
  b.algbw_gbps = algbw;
  switch (c) {
    case Collective::kAllReduce:
      if (n > 0) b.busbw_gbps = algbw * 2.0 * (n - 1) / n;
      break;
    case Collective::kBroadcast:
    case Collective::kReduce:
    case Collective::kSend:
    case Collective::kRecv:
      b.busbw_gbps = algbw;
      break;
    default:  // the per-rank ones, whose rank count is known here
      b.busbw_gbps = algbw * (n - 1) / n;
      break;
  }
  return b;
}

std::vector<CollectiveInstance> collective_instances(const Trace& t) {
  std::vector<CollectiveInstance> out;
  const StringId kernel = t.strings.find("kernel");
  if (kernel == kNone) return out;
  for (const Track& track : t.tracks) {
    for (const auto& row : track.rows) {
      for (const Slice& s : row) {
        if (s.cat != kernel || s.args == kNoArgs) continue;
        const std::string_view args = t.args.json(s.args);
        const auto name = json_member(args, kCollectiveArg);
        if (!name) continue;
        const std::optional<std::string> text = json_string(*name);
        if (!text) continue;
        const std::optional<Collective> c = collective_from_name(*text);
        const auto bytes_text = json_member(args, kCollectiveMessageBytesArg);
        const std::int64_t bytes = bytes_text ? json_int(*bytes_text).value_or(-1) : -1;
        if (!c || bytes < 0) continue;
        CollectiveInstance i;
        if (const auto comm = json_member(args, kCollectiveCommunicatorArg)) {
          i.communicator = json_string(*comm).value_or(std::string());
        }
        if (const auto r = json_member(args, kCollectiveRanksArg)) {
          const std::int64_t n = json_int(*r).value_or(-1);
          if (n > 0 && n <= 0xffffffffLL) i.ranks = static_cast<std::uint32_t>(n);
        }
        i.collective = *c;
        i.message_bytes = static_cast<std::uint64_t>(bytes);
        i.start = s.start;
        i.end = add_saturating(s.start, std::max<TimeNs>(0, s.dur));
        out.push_back(std::move(i));
      }
    }
  }
  std::stable_sort(
      out.begin(), out.end(),
      [](const CollectiveInstance& a, const CollectiveInstance& b) { return a.start < b.start; });
  return out;
}

void CollectiveSummary::add(std::span<const CollectiveInstance> instances) {
  for (const CollectiveInstance& i : instances) {
    const Key key{static_cast<int>(i.collective), i.message_bytes,
                  i.ranks ? std::int64_t{*i.ranks} : -1};
    const auto [at, added] = index_.emplace(key, rows_.size());
    if (added) {
      CollectiveRow added_row;
      added_row.collective = i.collective;
      added_row.message_bytes = i.message_bytes;
      added_row.ranks = i.ranks;
      rows_.push_back(added_row);
    }
    CollectiveRow& r = rows_[at->second];
    ++r.kernels;
    r.total_ns = add_saturating(r.total_ns, sub_saturating(i.end, i.start));
  }
}

std::vector<CollectiveRow> CollectiveSummary::rows() const {
  std::vector<CollectiveRow> out = rows_;
  for (CollectiveRow& r : out) {
    const std::int64_t mean = r.kernels > 0 ? r.total_ns / static_cast<std::int64_t>(r.kernels) : 0;
    r.bandwidth = nccl_tests_bandwidth(r.collective, r.message_bytes, r.ranks, mean);
  }
  std::stable_sort(out.begin(), out.end(), [](const CollectiveRow& a, const CollectiveRow& b) {
    return std::tie(b.total_ns, a.message_bytes) < std::tie(a.total_ns, b.message_bytes);
  });
  return out;
}

}  // namespace flopline::trace
