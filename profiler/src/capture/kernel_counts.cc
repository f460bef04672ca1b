// Counter values per kernel; the rules are in kernel_counts.h.
#include "flopline/capture/kernel_counts.h"

#include <algorithm>
#include <functional>
#include <map>
#include <tuple>

namespace flopline::capture {
namespace {

using Signature = std::tuple<std::string, std::int32_t, std::int32_t, std::int32_t, std::int32_t,
                             std::int32_t, std::int32_t, std::int32_t>;

Signature signature_of(const KernelRecord& k) {
  return {k.name, k.grid_x, k.grid_y, k.grid_z, k.block_x, k.block_y, k.block_z,
          k.dynamic_shared_memory};
}

}  // namespace

std::vector<KernelCounts> assign_kernel_counts(const RecordBatch& batch) {
  std::vector<KernelCounts> out(batch.kernels.size());
  if (batch.counter_records.empty()) return out;
  // Correlation ids that name exactly one kernel: only such a launch can be measured.
  std::unordered_map<std::uint64_t, std::uint32_t> kernels_of_id;  // (device, id) -> count
  auto key = [](std::uint32_t device, std::uint32_t id) {
    return static_cast<std::uint64_t>(device) << 32 | id;
  };
  for (const KernelRecord& k : batch.kernels) ++kernels_of_id[key(k.device, k.correlation_id)];
  std::unordered_map<std::uint64_t, std::uint32_t> record_of_id;
  for (std::uint32_t r = 0; r < batch.counter_records.size(); ++r) {
    const CounterRecord& c = batch.counter_records[r];
    record_of_id[key(c.device, c.correlation_id)] = r;
  }
  // Measured kernels, then per signature their start times.
  std::map<Signature, std::vector<std::pair<TimeNs, std::uint32_t>>> measured_at;
  for (std::uint32_t i = 0; i < batch.kernels.size(); ++i) {
    const KernelRecord& k = batch.kernels[i];
    const std::uint64_t id = key(k.device, k.correlation_id);
    const auto r = record_of_id.find(id);
    if (r == record_of_id.end() || kernels_of_id[id] != 1) continue;
    out[i] = {r->second, true};
    measured_at[signature_of(k)].emplace_back(k.start, r->second);
  }
  for (auto& [sig, v] : measured_at) std::sort(v.begin(), v.end());
  for (std::uint32_t i = 0; i < batch.kernels.size(); ++i) {
    if (out[i].measured) continue;
    const KernelRecord& k = batch.kernels[i];
    const auto it = measured_at.find(signature_of(k));
    if (it == measured_at.end()) continue;
    const auto& v = it->second;
    // The last measured launch that started at or before this one, else the first.
    auto after = std::upper_bound(v.begin(), v.end(), std::make_pair(k.start, kNoId));
    out[i].record = after == v.begin() ? v.front().second : std::prev(after)->second;
  }
  return out;
}

std::size_t LaunchKeyHash::operator()(const LaunchKey& k) const {
  std::size_t h = std::hash<std::uint64_t>()(k.function);
  auto mix = [&h](std::uint64_t v) { h ^= std::hash<std::uint64_t>()(v) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
  for (int d = 0; d < 3; ++d) mix(static_cast<std::uint64_t>(k.grid[d]) << 32 | k.block[d]);
  mix(k.shared_memory);
  return h;
}

bool LaunchSampler::take(const LaunchKey& key) {
  if (per_signature_ == 0) return true;
  std::uint32_t& n = seen_[key];
  if (n >= per_signature_) return false;
  ++n;
  return true;
}

}  // namespace flopline::capture
