// Counter values per kernel; the rules are in kernel_counts.h.
#include "flopline/capture/kernel_counts.h"

#include "flopline/capture/launch_work.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <tuple>

namespace flopline::capture {
namespace {

using Signature = std::tuple<std::string, std::int32_t, std::int32_t, std::int32_t, std::int32_t,
                             std::int32_t, std::int32_t, std::int32_t>;

std::uint64_t id_key(std::uint32_t device, std::uint32_t id) {
  return static_cast<std::uint64_t>(device) << 32 | id;
}

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
  place_replayed_kernels(batch, {}, {}, false);
}

void place_replayed_kernels(RecordBatch& batch,
                            const std::unordered_map<std::uint32_t, TimeNs>& earlier_end,
                            const std::unordered_map<std::uint32_t, WrittenCall>& written_calls,
                            bool keep_unplaced) {
  const bool any_untimed =
      std::any_of(batch.kernels.begin(), batch.kernels.end(),
                  [](const KernelRecord& k) { return k.start == 0 && k.end == 0; });
  if (!any_untimed) return;
  std::unordered_map<std::uint64_t, std::uint32_t> record_of_id;
  for (std::uint32_t r = 0; r < batch.counter_records.size(); ++r) {
    record_of_id[id_key(batch.counter_records[r].device, batch.counter_records[r].correlation_id)] =
        r;
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
    const auto r = record_of_id.find(id_key(k.device, k.correlation_id));
    std::optional<std::pair<TimeNs, TimeNs>> call;  // its launch call's start and end
    if (const auto c = call_of.find(k.correlation_id); c != call_of.end()) {
      call = c->second;
    } else if (const auto w = written_calls.find(k.correlation_id); w != written_calls.end()) {
      call = std::make_pair(w->second.start, w->second.end);
    }
    if (r == record_of_id.end() || !call) {
      if (keep_unplaced) {
        kept.push_back(std::move(k));
      } else {
        ++batch.unfinished_records;  // work still running at a forced flush
      }
      continue;
    }
    const CountedWork w =
        evaluate_counters(batch.counters.plan, batch.counter_records[r->second].values);
    const auto [call_start, call_end] = *call;
    TimeNs before = prior.end_before(k.device, call_end);
    if (const auto e = earlier_end.find(k.device); e != earlier_end.end() && e->second < call_end)
      before = std::max(before, e->second);
    k.start = std::max(call_start, before);
    k.end = k.start + static_cast<TimeNs>(w.duration_ns.value_or(0) + 0.5);
    k.replayed = true;
    kept.push_back(std::move(k));
  }
  batch.kernels = std::move(kept);
}

std::vector<std::uint32_t> unmatched_counter_records(const RecordBatch& batch) {
  std::unordered_map<std::uint64_t, std::uint32_t> kernels_of_id;
  for (const KernelRecord& k : batch.kernels) ++kernels_of_id[id_key(k.device, k.correlation_id)];
  std::vector<std::uint32_t> out;
  for (std::uint32_t r = 0; r < batch.counter_records.size(); ++r) {
    const CounterRecord& c = batch.counter_records[r];
    const auto it = kernels_of_id.find(id_key(c.device, c.correlation_id));
    if (it == kernels_of_id.end() || it->second != 1) out.push_back(r);
  }
  return out;
}

const char* to_string(CountNote n) {
  switch (n) {
    case CountNote::kGraph:
      return "a kernel of a CUDA graph, whose arguments are not seen: values of a measured "
             "launch of the same name, grid and block";
    case CountNote::kNoSameWork:
      return "no launch of the same work was measured: values of a measured launch of the "
             "same name, grid and block";
    case CountNote::kArgumentsUnread:
      return "the driver gave no parameter layout for this function: values of a measured "
             "launch of the same function, grid and block, whatever its arguments";
    case CountNote::kUnlikeItsWork:
      return "its GPU time is unlike that of the other launches of the same work";
    case CountNote::kIncomplete:
      return "measured with the metrics learned for its function, and it did work they "
             "do not count: its values miss that work";
    case CountNote::kNone:
      break;
  }
  return "";
}

bool unlike_its_work(TimeNs duration, TimeNs median, TimeNs mad) {
  const double allowed =
      std::max({4 * 1.4826 * static_cast<double>(mad), 0.2 * static_cast<double>(median), 1000.0});
  return std::fabs(static_cast<double>(duration - median)) > allowed;
}

namespace {

// The check after the fact: per measurement, the unreplayed "same work" launches whose
// GPU time is unlike the others' become estimates.
void check_durations(const RecordBatch& batch, std::vector<KernelCounts>& out) {
  std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> by_record;
  for (std::uint32_t i = 0; i < out.size(); ++i) {
    if (out[i].basis == trace::CountedBasis::kSameWork) by_record[out[i].record].push_back(i);
  }
  std::vector<TimeNs> d;
  for (const auto& [record, kernels] : by_record) {
    if (kernels.size() < 3) continue;  // too few to tell a spread
    d.clear();
    for (std::uint32_t i : kernels) d.push_back(batch.kernels[i].end - batch.kernels[i].start);
    auto median_of = [](std::vector<TimeNs>& v) {
      std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
      return v[v.size() / 2];
    };
    const TimeNs median = median_of(d);
    for (TimeNs& x : d) x = x > median ? x - median : median - x;
    const TimeNs mad = median_of(d);
    for (std::uint32_t i : kernels) {
      const TimeNs dur = batch.kernels[i].end - batch.kernels[i].start;
      if (!unlike_its_work(dur, median, mad)) continue;
      out[i].basis = trace::CountedBasis::kEstimated;
      out[i].note = CountNote::kUnlikeItsWork;
      out[i].time_ratio = median > 0 ? static_cast<double>(dur) / static_cast<double>(median) : 0;
    }
  }
}

}  // namespace

std::vector<KernelCounts> assign_kernel_counts(const RecordBatch& batch) {
  std::vector<KernelCounts> out(batch.kernels.size());
  const bool counting = batch.counters.requested || !batch.counter_records.empty();
  if (!counting) return out;
  const CounterExclusion exclusion(batch.counters.exclude);
  // Correlation ids that name exactly one kernel: only such a launch can be measured.
  std::unordered_map<std::uint64_t, std::uint32_t> kernels_of_id;  // (device, id) -> count
  for (const KernelRecord& k : batch.kernels) ++kernels_of_id[id_key(k.device, k.correlation_id)];
  std::unordered_map<std::uint64_t, std::uint32_t> record_of_id;
  std::unordered_map<std::uint32_t, std::uint32_t> record_of_measurement;
  for (std::uint32_t r = 0; r < batch.counter_records.size(); ++r) {
    const CounterRecord& c = batch.counter_records[r];
    record_of_id[id_key(c.device, c.correlation_id)] = r;
    if (c.measurement != kNoId) record_of_measurement[c.measurement] = r;
  }
  std::unordered_map<std::uint64_t, const InferredLaunch*> inferred_of_id;
  for (const InferredLaunch& l : batch.inferred_launches)
    inferred_of_id[id_key(l.device, l.correlation_id)] = &l;

  // Measured kernels, then per signature their start times (for estimates).
  std::map<Signature, std::vector<std::pair<TimeNs, std::uint32_t>>> measured_at;
  for (std::uint32_t i = 0; i < batch.kernels.size(); ++i) {
    const KernelRecord& k = batch.kernels[i];
    const std::uint64_t id = id_key(k.device, k.correlation_id);
    const auto r = record_of_id.find(id);
    if (r == record_of_id.end() || kernels_of_id[id] != 1) continue;
    out[i].record = r->second;
    out[i].measured = true;
    const CounterRecord& c = batch.counter_records[r->second];
    if (!c.incomplete.empty()) {
      out[i].basis = trace::CountedBasis::kEstimated;
      out[i].note = CountNote::kIncomplete;
      out[i].incomplete = c.incomplete;
      continue;  // never the source of an estimate
    }
    out[i].basis = trace::CountedBasis::kMeasured;
    measured_at[signature_of(k)].emplace_back(k.start, r->second);
  }
  for (auto& [sig, v] : measured_at) std::sort(v.begin(), v.end());
  for (std::uint32_t i = 0; i < batch.kernels.size(); ++i) {
    if (out[i].measured) continue;
    const KernelRecord& k = batch.kernels[i];
    if (const std::string_view why = exclusion.why(k.name); !why.empty()) {
      out[i].basis = trace::CountedBasis::kNotCounted;
      out[i].not_counted = why;
      continue;
    }
    const std::uint64_t id = id_key(k.device, k.correlation_id);
    const bool graph = kernels_of_id[id] != 1 || k.graph_id != 0;
    if (!graph) {
      const auto l = inferred_of_id.find(id);
      if (l != inferred_of_id.end()) {
        const auto r = record_of_measurement.find(l->second->source);
        // An incomplete measurement is no source (the capture measures its key again, but
        // a launch may have named it while it was running).
        if (r != record_of_measurement.end() &&
            batch.counter_records[r->second].incomplete.empty()) {
          out[i].record = r->second;
          out[i].basis =
              l->second->exact ? trace::CountedBasis::kSameWork : trace::CountedBasis::kEstimated;
          if (!l->second->exact) out[i].note = CountNote::kArgumentsUnread;
          continue;
        }
      }
    }
    // An estimate: the measured launch of the same signature nearest before, else the
    // first after.
    const auto it = measured_at.find(signature_of(k));
    if (it == measured_at.end()) continue;
    const auto& v = it->second;
    auto after = std::upper_bound(v.begin(), v.end(), std::make_pair(k.start, kNoId));
    out[i].record = after == v.begin() ? v.front().second : std::prev(after)->second;
    out[i].basis = trace::CountedBasis::kEstimated;
    out[i].note = graph ? CountNote::kGraph : CountNote::kNoSameWork;
  }
  check_durations(batch, out);
  return out;
}

}  // namespace flopline::capture
