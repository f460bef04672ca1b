// Counter values per kernel; the rules are in kernel_counts.h.
#include "flopline/capture/kernel_counts.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <tuple>

namespace flopline::capture {
namespace {

using Signature = std::tuple<std::string, std::int32_t, std::int32_t, std::int32_t, std::int32_t,
                             std::int32_t, std::int32_t, std::int32_t>;

Signature signature_of(const KernelRecord& k) {
  return {k.name,    k.grid_x,  k.grid_y,  k.grid_z,
          k.block_x, k.block_y, k.block_z, k.dynamic_shared_memory};
}

}  // namespace

namespace {

// Per device, the end of the latest GPU record that started before a time: a replayed
// kernel ran after everything launched before it had finished (the range profiler
// synchronizes the context first).
class PriorWork {
 public:
  void add(std::uint32_t device, TimeNs start, TimeNs end) {
    by_device_[device].emplace_back(start, end);
  }
  void finish() {
    for (auto& [device, v] : by_device_) {
      std::sort(v.begin(), v.end());
      for (std::size_t i = 1; i < v.size(); ++i)
        v[i].second = std::max(v[i].second, v[i - 1].second);
    }
  }
  // The latest end among records of `device` that started before `t`; 0 when none.
  TimeNs end_before(std::uint32_t device, TimeNs t) const {
    const auto it = by_device_.find(device);
    if (it == by_device_.end()) return 0;
    const auto& v = it->second;  // sorted by start, second = running max of the ends
    auto after = std::lower_bound(v.begin(), v.end(), std::make_pair(t, TimeNs{INT64_MIN}));
    return after == v.begin() ? 0 : std::prev(after)->second;
  }

 private:
  std::unordered_map<std::uint32_t, std::vector<std::pair<TimeNs, TimeNs>>> by_device_;
};

}  // namespace

void place_replayed_kernels(RecordBatch& batch) {
  const bool any_untimed =
      std::any_of(batch.kernels.begin(), batch.kernels.end(),
                  [](const KernelRecord& k) { return k.start == 0 && k.end == 0; });
  if (!any_untimed) return;
  std::unordered_map<std::uint64_t, std::uint32_t> record_of_id;
  auto key = [](std::uint32_t device, std::uint32_t id) {
    return static_cast<std::uint64_t>(device) << 32 | id;
  };
  for (std::uint32_t r = 0; r < batch.counter_records.size(); ++r) {
    record_of_id[key(batch.counter_records[r].device, batch.counter_records[r].correlation_id)] = r;
  }
  std::unordered_map<std::uint32_t, std::pair<TimeNs, TimeNs>> call_of;  // correlation id -> call
  for (const ApiRecord& a : batch.api_calls) {
    if (a.start != 0) call_of.emplace(a.correlation_id, std::make_pair(a.start, a.end));
  }
  PriorWork prior;
  for (const KernelRecord& k : batch.kernels) {
    if (k.start != 0 || k.end != 0) prior.add(k.device, k.start, k.end);
  }
  for (const MemcpyRecord& m : batch.memcpys) prior.add(m.device, m.start, m.end);
  for (const MemsetRecord& m : batch.memsets) prior.add(m.device, m.start, m.end);
  prior.finish();
  std::vector<KernelRecord> kept;
  kept.reserve(batch.kernels.size());
  for (KernelRecord& k : batch.kernels) {
    if (k.start != 0 || k.end != 0) {
      kept.push_back(std::move(k));
      continue;
    }
    const auto r = record_of_id.find(key(k.device, k.correlation_id));
    const auto c = call_of.find(k.correlation_id);
    if (r == record_of_id.end() || c == call_of.end()) continue;
    const CountedWork w =
        evaluate_counters(batch.counters.plan, batch.counter_records[r->second].values);
    const auto [call_start, call_end] = c->second;
    k.start = std::max(call_start, prior.end_before(k.device, call_end));
    k.end = k.start + static_cast<TimeNs>(w.duration_ns.value_or(0) + 0.5);
    k.replayed = true;
    kept.push_back(std::move(k));
  }
  batch.kernels = std::move(kept);
}

std::vector<std::uint32_t> unmatched_counter_records(const RecordBatch& batch) {
  std::unordered_map<std::uint64_t, std::uint32_t> kernels_of_id;
  auto key = [](std::uint32_t device, std::uint32_t id) {
    return static_cast<std::uint64_t>(device) << 32 | id;
  };
  for (const KernelRecord& k : batch.kernels) ++kernels_of_id[key(k.device, k.correlation_id)];
  std::vector<std::uint32_t> out;
  for (std::uint32_t r = 0; r < batch.counter_records.size(); ++r) {
    const CounterRecord& c = batch.counter_records[r];
    const auto it = kernels_of_id.find(key(c.device, c.correlation_id));
    if (it == kernels_of_id.end() || it->second != 1) out.push_back(r);
  }
  return out;
}

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
  auto mix = [&h](std::uint64_t v) {
    h ^= std::hash<std::uint64_t>()(v) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  };
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
