// The streaming capture's decoder; what it holds and why is in streaming_decoder.h.
#include "flopline/capture/streaming_decoder.h"

#include <algorithm>
#include <iterator>
#include <numeric>
#include <optional>
#include <set>
#include <unordered_set>
#include <utility>

#include "flopline/capture/kernel_counts.h"
#include "flopline/capture/launch_index.h"
#include "flopline/capture/nccl_calls.h"
#include "flopline/capture/nvtx_ranges.h"

#include "capture/append_moved.h"

namespace flopline::capture {
namespace {

// Appends a marker data record may wait for the marker it belongs to.
constexpr std::uint8_t kOrphanAppends = 2;

std::uint64_t device_key(std::uint32_t device, std::uint32_t id) {
  return static_cast<std::uint64_t>(device) << 32 | id;
}

TimeNs saturating_sub(TimeNs a, TimeNs b) {
  return a < INT64_MIN + b ? INT64_MIN : a - b;
}

// The OS thread of a marker, as pair_markers() places it; nothing for other objects.
std::optional<std::uint32_t> marker_thread(const MarkerRecord& m) {
  if (m.object.kind == ObjectKind::kThread) return m.object.thread_id;
  if (m.object.kind == ObjectKind::kProcess) return m.object.process_id;
  return std::nullopt;
}

// Moves the elements `release` marks to `out` and keeps the others in `v`, in order.
template <class T>
void split(std::vector<T>& v, const std::vector<bool>& release, std::vector<T>& out) {
  std::vector<T> kept;
  kept.reserve(v.size() -
               static_cast<std::size_t>(std::count(release.begin(), release.end(), true)));
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (release[i]) {
      out.push_back(std::move(v[i]));
    } else {
      kept.push_back(std::move(v[i]));
    }
  }
  v = std::move(kept);
}

// The same, with a parallel vector of ages that follows the kept elements; released
// ones are dropped from it, kept ones age by one.
template <class T>
void split_aged(std::vector<T>& v, std::vector<std::uint8_t>& age, const std::vector<bool>& release,
                const std::vector<bool>& drop, std::vector<T>& out) {
  std::vector<T> kept;
  std::vector<std::uint8_t> kept_age;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (release[i]) {
      out.push_back(std::move(v[i]));
    } else if (!drop[i]) {
      kept.push_back(std::move(v[i]));
      kept_age.push_back(static_cast<std::uint8_t>(std::min<int>(age[i] + 1, 255)));
    }
  }
  v = std::move(kept);
  age = std::move(kept_age);
}

// Drops the oldest elements of `v` (its front) beyond the newest `max`.
template <class T>
void keep_newest(std::vector<T>& v, std::size_t max) {
  if (v.size() > max) v.erase(v.begin(), v.end() - static_cast<std::ptrdiff_t>(max));
}

// One NVTX range as the decoder pairs it: its start marker and end marker (indices into
// the pending markers), mirroring pair_markers().
struct MarkerPair {
  std::uint32_t start = 0;
  std::uint32_t end = kNoId;  // kNoId: still open
  std::uint32_t thread = 0;
  TimeNs start_ts = 0;
  TimeNs end_ts = 0;  // the capture's end while open
  bool counted = false;
  bool final = false;
};

struct PairedIndices {
  std::vector<MarkerPair> pairs;
  std::vector<std::uint32_t> instants;        // marker indices
  std::vector<std::uint32_t> unmatched_ends;  // ends whose start has not arrived (yet)
};

PairedIndices pair_indices(const std::vector<MarkerRecord>& markers, TimeNs capture_end) {
  PairedIndices out;
  std::vector<std::uint32_t> order(markers.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    return markers[a].timestamp < markers[b].timestamp;
  });
  std::unordered_map<std::uint32_t, std::size_t> open;  // id -> index in out.pairs
  for (const std::uint32_t i : order) {
    const MarkerRecord& m = markers[i];
    if (m.is_end()) {
      const auto it = open.find(m.id);
      if (it == open.end()) {
        out.unmatched_ends.push_back(i);
        continue;
      }
      MarkerPair& p = out.pairs[it->second];
      p.end = i;
      p.end_ts = std::max(m.timestamp, p.start_ts);
      open.erase(it);
      continue;
    }
    const auto thread = marker_thread(m);
    if (!thread) continue;
    if (m.is_instant() && !m.is_start()) {
      out.instants.push_back(i);
      continue;
    }
    if (!m.is_start()) continue;
    MarkerPair p;
    p.start = i;
    p.thread = *thread;
    p.start_ts = m.timestamp;
    p.end_ts = std::max(capture_end, m.timestamp);
    open[m.id] = out.pairs.size();  // a start with a used id leaves the older one open
    out.pairs.push_back(p);
  }
  return out;
}

// The launch groups of the pending calls: a call and the calls it encloses on its
// thread (LaunchIndex's outermost call), with the records tied to them.
struct Group {
  TimeNs call_end = INT64_MIN;
  TimeNs record_end = INT64_MIN;
  bool has_record = false;
  bool expects = false;
  bool unplaced = false;      // a replayed kernel still waiting for its counter record
  bool graph = false;         // a graph launch: its kernels keep coming while it runs
  bool held = false;          // inside a counted range that is not final
  std::uint32_t records = 0;  // GPU records it started
};

}  // namespace

bool expects_gpu_record(const ApiRecord& call, std::uint32_t kinds) {
  if (!LaunchIndex::timed(call) || call.return_value != 0) return false;
  const std::string_view name = api_base_name(call.name);
  auto has = [&](std::string_view part) { return name.find(part) != std::string_view::npos; };
  if (has("HostFunc")) return false;  // runs a host function: no GPU record
  if (has("Launch")) return (kinds & kKindKernel) != 0;
  if (has("Memcpy")) return (kinds & kKindMemcpy) != 0;
  if (has("Memset")) return (kinds & kKindMemset) != 0;
  if (has("Synchronize") || has("StreamWaitEvent")) return (kinds & kKindSync) != 0;
  return false;
}

StreamingDecoder::StreamingDecoder(StreamingOptions options) : options_(std::move(options)) {}

void StreamingDecoder::add(RecordBatch&& fresh) {
  RecordBatch& p = pending_;
  auto later = [&](TimeNs t) { capture_end_ = std::max(capture_end_, t); };
  for (const auto& r : fresh.api_calls) later(r.end);
  for (const auto& r : fresh.kernels) later(r.end);
  for (const auto& r : fresh.memcpys) later(r.end);
  for (const auto& r : fresh.memsets) later(r.end);
  for (const auto& r : fresh.syncs) later(r.end);
  for (const auto& r : fresh.markers) later(r.timestamp);
  gpu_work_seen_ =
      gpu_work_seen_ || !fresh.kernels.empty() || !fresh.memcpys.empty() || !fresh.memsets.empty();

  for (const auto& k : fresh.kernels) context_.context_devices.emplace(k.context, k.device);
  for (const auto& m : fresh.memcpys) context_.context_devices.emplace(m.context, m.device);
  for (const auto& m : fresh.memsets) context_.context_devices.emplace(m.context, m.device);
  p.process_id = fresh.process_id;
  p.process_name = std::move(fresh.process_name);
  p.dropped_records = fresh.dropped_records;
  p.unfinished_records = fresh.unfinished_records;
  p.counters = std::move(fresh.counters);
  p.gpu_metrics = std::move(fresh.gpu_metrics);
  p.world_size = fresh.world_size;
  p.rank = fresh.rank;
  p.time_base = fresh.time_base;
  p.capture_range = std::move(fresh.capture_range);
  p.capture_windows = std::move(fresh.capture_windows);
  for (DeviceInfo& d : fresh.devices) {
    const bool known = std::any_of(p.devices.begin(), p.devices.end(),
                                   [&](const DeviceInfo& k) { return k.ordinal == d.ordinal; });
    if (!known) p.devices.push_back(std::move(d));
  }
  detail::append_moved(p.thread_names, fresh.thread_names);
  detail::append_moved(p.names, fresh.names);
  detail::append_moved(p.kernels, fresh.kernels);
  detail::append_moved(p.memcpys, fresh.memcpys);
  detail::append_moved(p.memsets, fresh.memsets);
  detail::append_moved(p.api_calls, fresh.api_calls);
  detail::append_moved(p.syncs, fresh.syncs);
  detail::append_moved(p.markers, fresh.markers);
  marker_data_age_.resize(p.marker_data.size() + fresh.marker_data.size(), 0);
  detail::append_moved(p.marker_data, fresh.marker_data);
  detail::append_moved(p.overheads, fresh.overheads);
  detail::append_moved(p.counter_records, fresh.counter_records);
  detail::append_moved(p.inferred_launches, fresh.inferred_launches);
  detail::append_moved(p.gpu_metric_samples, fresh.gpu_metric_samples);
  detail::append_moved(p.nccl_calls, fresh.nccl_calls);
}

trace::Trace StreamingDecoder::take(TimeNs upto, DecodeResult* result) {
  RecordBatch& p = pending_;
  const bool at_end = upto == kEndOfRun;
  const TimeNs gave_up = saturating_sub(upto, options_.pending_limit_ns);
  // A graph launch whose last kernel so far ended this long before is taken as done.
  const TimeNs graph_done = saturating_sub(upto, options_.graph_quiet_ns);

  // Replayed kernels take their place now that their counter records and calls are here.
  if (std::any_of(p.kernels.begin(), p.kernels.end(),
                  [](const KernelRecord& k) { return k.start == 0 && k.end == 0; })) {
    place_replayed_kernels(p, earlier_end_, context_.written_calls, !at_end);
  }

  // Launch groups and the records tied to them.
  const LaunchIndex launches(p);
  const std::vector<GpuWork>& work = launches.gpu_work();
  std::vector<Group> groups(p.api_calls.size());
  for (std::uint32_t i = 0; i < p.api_calls.size(); ++i) {
    const ApiRecord& a = p.api_calls[i];
    Group& g = groups[launches.outermost(i)];
    g.call_end = std::max(g.call_end, a.end);
    if (expects_gpu_record(a, options_.kinds)) g.expects = true;
    const std::string_view name = a.name;
    if (name.find("Graph") != std::string_view::npos &&
        name.find("Launch") != std::string_view::npos)
      g.graph = true;
  }
  for (const GpuWork& w : work) {
    if (w.launch == kNoId) continue;
    Group& g = groups[w.launch];
    g.has_record = true;
    ++g.records;
    g.record_end = std::max(g.record_end, w.end);
    if (w.kind == GpuWorkKind::kKernel && w.start == 0 && w.end == 0) g.unplaced = true;
  }
  std::vector<std::uint32_t> sync_call(p.syncs.size(), kNoId);
  for (std::size_t s = 0; s < p.syncs.size(); ++s) {
    const std::uint32_t c = launches.api_with_correlation(p.syncs[s].correlation_id);
    if (c == kNoId) continue;
    sync_call[s] = launches.outermost(c);
    Group& g = groups[sync_call[s]];
    g.has_record = true;
    g.record_end = std::max(g.record_end, p.syncs[s].end);
  }
  auto ready = [&](std::uint32_t root) {
    if (at_end) return true;
    const Group& g = groups[root];
    return !g.held && !g.unplaced && g.call_end <= upto &&
           g.record_end <= (g.graph ? graph_done : upto) &&
           (g.has_record || !g.expects || g.call_end <= gave_up);
  };

  // The timed outermost calls of each thread, by start: what a range may contain.
  std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> roots_of_thread;
  for (std::uint32_t i = 0; i < p.api_calls.size(); ++i) {
    if (launches.outermost(i) == i && LaunchIndex::timed(p.api_calls[i]))
      roots_of_thread[p.api_calls[i].thread_id].push_back(i);
  }
  for (auto& [thread, roots] : roots_of_thread) {
    std::sort(roots.begin(), roots.end(), [&](std::uint32_t a, std::uint32_t b) {
      return p.api_calls[a].start < p.api_calls[b].start;
    });
  }
  // Calls f(root) for each outermost call inside the range (its thread, within its times).
  auto for_each_inside = [&](const MarkerPair& r, auto&& f) {
    const auto it = roots_of_thread.find(r.thread);
    if (it == roots_of_thread.end()) return;
    const auto& roots = it->second;
    auto first =
        std::lower_bound(roots.begin(), roots.end(), r.start_ts,
                         [&](std::uint32_t c, TimeNs t) { return p.api_calls[c].start < t; });
    for (auto c = first; c != roots.end() && p.api_calls[*c].start <= r.end_ts; ++c) {
      if (p.api_calls[*c].end <= r.end_ts && f(*c)) return;
    }
  };

  // Ranges: final when closed by `upto` with every launch inside ready. The launches
  // inside a counted range that is not final wait with it, which may hold more ranges.
  PairedIndices paired = pair_indices(p.markers, capture_end_);
  {
    const PairedMarkers ranges = pair_markers(p, capture_end_, options_.decode.counts);
    std::set<RangeKey> counted;
    for (const NvtxRange& r : ranges.ranges) {
      if (r.metrics.has_flops() || r.metrics.has_bytes()) counted.insert({r.id, r.start});
    }
    for (MarkerPair& m : paired.pairs)
      m.counted = counted.count({p.markers[m.start].id, m.start_ts}) > 0;
  }
  // NCCL kernels of a thread go out in launch order: the calls a kernel carried out are
  // those made since the previous NCCL launch of its thread (match_nccl_calls()).
  std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> nccl_roots;  // by thread
  for (const GpuWork& w : work) {
    if (w.kind != GpuWorkKind::kKernel || w.launch == kNoId) continue;
    if (!is_nccl_kernel(p.kernels[w.index].name)) continue;
    nccl_roots[p.api_calls[w.launch].thread_id].push_back(w.launch);
  }
  for (auto& [thread, roots] : nccl_roots) {
    std::sort(roots.begin(), roots.end(), [&](std::uint32_t a, std::uint32_t b) {
      return p.api_calls[a].start < p.api_calls[b].start;
    });
    roots.erase(std::unique(roots.begin(), roots.end()), roots.end());
  }
  auto keep_nccl_order = [&] {
    bool held_more = false;
    for (const auto& [thread, roots] : nccl_roots) {
      bool earlier_waits = false;
      for (const std::uint32_t r : roots) {
        if (earlier_waits && !groups[r].held) {
          groups[r].held = true;
          held_more = true;
        }
        earlier_waits = earlier_waits || !ready(r);
      }
    }
    return held_more;
  };
  keep_nccl_order();
  for (bool changed = true; changed;) {
    changed = false;
    for (MarkerPair& m : paired.pairs) {
      m.final = at_end;
      if (at_end || m.end == kNoId || m.end_ts > upto) continue;
      bool blocked = false;
      for_each_inside(m, [&](std::uint32_t c) { return blocked = !ready(c); });
      m.final = !blocked;
    }
    if (at_end) break;
    for (const MarkerPair& m : paired.pairs) {
      if (m.final || !m.counted) continue;
      // Owning two records already, it gives its counts to none of them: nothing waits.
      std::uint64_t known = 0;
      if (const auto c = context_.carry.find({p.markers[m.start].id, m.start_ts});
          c != context_.carry.end()) {
        known = c->second.kernels + c->second.memcpys + c->second.memsets;
      }
      for_each_inside(m, [&](std::uint32_t c) { return (known += groups[c].records) >= 2; });
      if (known >= 2) continue;
      for_each_inside(m, [&](std::uint32_t c) {
        if (!groups[c].held) {
          groups[c].held = true;
          changed = true;
        }
        return false;
      });
    }
    if (changed) keep_nccl_order();
  }

  // What this append writes.
  RecordBatch chunk;
  chunk.process_id = p.process_id;
  chunk.process_name = p.process_name;
  chunk.devices = p.devices;
  chunk.names = p.names;
  chunk.thread_names = p.thread_names;
  chunk.dropped_records = p.dropped_records;
  chunk.counters = p.counters;
  chunk.gpu_metrics = p.gpu_metrics;
  chunk.world_size = p.world_size;
  chunk.rank = p.rank;
  chunk.time_base = p.time_base;
  chunk.capture_range = p.capture_range;
  chunk.capture_windows = p.capture_windows;

  std::vector<bool> release(p.api_calls.size());
  std::unordered_set<std::uint32_t> waiting_correlations;  // of calls and kernels kept
  for (std::uint32_t i = 0; i < p.api_calls.size(); ++i) {
    release[i] = !LaunchIndex::timed(p.api_calls[i]) || ready(launches.outermost(i));
    if (!release[i]) waiting_correlations.insert(p.api_calls[i].correlation_id);
  }
  // NCCL kernels written now, per thread the latest launch start: the NCCL calls made
  // up to it go with them.
  std::unordered_map<std::uint32_t, TimeNs> nccl_launched;
  std::vector<bool> release_kernel(p.kernels.size(), false);
  std::vector<bool> release_memcpy(p.memcpys.size(), false);
  std::vector<bool> release_memset(p.memsets.size(), false);
  std::unordered_set<std::uint64_t> written_kernels;  // (device, correlation)
  std::vector<std::uint32_t> late_correlations;       // records of calls written before
  for (const GpuWork& w : work) {
    const bool placed = !(w.kind == GpuWorkKind::kKernel && w.start == 0 && w.end == 0);
    const bool go = at_end || (placed && w.end <= upto && (w.launch == kNoId || ready(w.launch)));
    if (go && w.launch == kNoId && context_.written_calls.count(w.correlation_id) > 0) {
      ++late_records_;
      late_correlations.push_back(w.correlation_id);
    }
    switch (w.kind) {
      case GpuWorkKind::kKernel: {
        release_kernel[w.index] = go;
        const KernelRecord& k = p.kernels[w.index];
        if (!go) {
          waiting_correlations.insert(k.correlation_id);
          break;
        }
        written_kernels.insert(device_key(k.device, k.correlation_id));
        if (is_nccl_kernel(k.name)) context_.nccl_seen = true;
        if (w.launch != kNoId && is_nccl_kernel(k.name)) {
          const ApiRecord& call = p.api_calls[w.launch];
          TimeNs& latest = nccl_launched.try_emplace(call.thread_id, INT64_MIN).first->second;
          latest = std::max(latest, call.start);
        }
        break;
      }
      case GpuWorkKind::kMemcpy:
        release_memcpy[w.index] = go;
        break;
      case GpuWorkKind::kMemset:
        release_memset[w.index] = go;
        break;
    }
  }
  for (std::size_t i = 0; i < p.kernels.size(); ++i) {
    if (!release_kernel[i]) continue;
    TimeNs& e = earlier_end_.try_emplace(p.kernels[i].device, INT64_MIN).first->second;
    e = std::max(e, p.kernels[i].end);
  }
  std::vector<bool> release_sync(p.syncs.size());
  for (std::size_t s = 0; s < p.syncs.size(); ++s) {
    const SyncRecord& y = p.syncs[s];
    // A sync names its device through GPU work of its context: it waits for some to
    // arrive (decode() finds it anywhere in the run).
    const bool device_known = context_.context_devices.count(y.context) > 0 || y.end <= gave_up;
    release_sync[s] =
        at_end || (device_known && (sync_call[s] != kNoId ? ready(sync_call[s]) : y.end <= upto));
  }
  std::vector<bool> release_overhead(p.overheads.size());
  for (std::size_t i = 0; i < p.overheads.size(); ++i)
    release_overhead[i] = at_end || p.overheads[i].end <= upto;
  std::vector<bool> release_sample(p.gpu_metric_samples.size());
  for (std::size_t i = 0; i < p.gpu_metric_samples.size(); ++i)
    release_sample[i] = at_end || p.gpu_metric_samples[i].end <= upto;
  std::vector<bool> release_nccl(p.nccl_calls.size());
  std::vector<bool> drop_nccl(p.nccl_calls.size(), false);
  for (std::size_t i = 0; i < p.nccl_calls.size(); ++i) {
    const NcclCallRecord& c = p.nccl_calls[i];
    const auto it = nccl_launched.find(c.thread_id);
    release_nccl[i] = at_end || (it != nccl_launched.end() && c.start <= it->second);
    if (release_nccl[i]) context_.nccl_seen = true;
    drop_nccl[i] = !release_nccl[i] && c.start <= gave_up;  // no kernel carried it
  }

  // Markers: a final range's two markers and the instants that happened go out; the
  // markers of ranges not final go along as context and stay.
  std::vector<bool> release_marker(p.markers.size(), true);  // unpaired ends and the like
  std::vector<bool> context_marker(p.markers.size(), false);
  std::unordered_map<std::uint32_t, bool> data_owner;  // marker id -> its marker is written
  for (const MarkerPair& m : paired.pairs) {
    const std::uint32_t id = p.markers[m.start].id;
    data_owner[id] = data_owner[id] || m.final;
    if (m.final) continue;
    release_marker[m.start] = false;
    context_marker[m.start] = true;
    if (m.end != kNoId) {
      release_marker[m.end] = false;
      context_marker[m.end] = true;
    }
    context_.held_ranges.insert({id, m.start_ts});
  }
  // An end whose start has not arrived waits for it a while; decode() drops it after.
  for (const std::uint32_t i : paired.unmatched_ends)
    release_marker[i] = at_end || p.markers[i].timestamp <= gave_up;
  for (const std::uint32_t i : paired.instants) {
    release_marker[i] = at_end || p.markers[i].timestamp <= upto;
    data_owner[p.markers[i].id] = data_owner[p.markers[i].id] || release_marker[i];
  }
  std::vector<bool> release_data(p.marker_data.size());
  std::vector<bool> drop_data(p.marker_data.size());
  std::vector<bool> context_data(p.marker_data.size(), false);
  for (std::size_t i = 0; i < p.marker_data.size(); ++i) {
    const auto it = data_owner.find(p.marker_data[i].id);
    release_data[i] = at_end || (it != data_owner.end() && it->second);
    context_data[i] = it != data_owner.end() && !it->second;
    drop_data[i] = it == data_owner.end() && marker_data_age_[i] >= kOrphanAppends;
  }
  for (std::size_t i = 0; i < p.markers.size(); ++i) {
    if (context_marker[i]) chunk.markers.push_back(p.markers[i]);
  }
  for (std::size_t i = 0; i < p.marker_data.size(); ++i) {
    if (context_data[i]) chunk.marker_data.push_back(p.marker_data[i]);
  }

  // Inferred launches go with their kernels; a kept call or kernel keeps its own.
  // Kept however long their kernel takes (CUPTI hands a buffer over when it is full, so
  // on a quiet device a kernel can come minutes after its launch): the newest
  // max_counter_sources, below.
  std::vector<bool> release_inferred(p.inferred_launches.size());
  for (std::size_t i = 0; i < p.inferred_launches.size(); ++i) {
    const InferredLaunch& l = p.inferred_launches[i];
    release_inferred[i] = written_kernels.count(device_key(l.device, l.correlation_id)) > 0;
  }

  // Calls written before their GPU record came: the record gets its flow from the call
  // when it comes, and a measured launch's replayed kernel is placed at it.
  for (std::uint32_t i = 0; i < p.api_calls.size(); ++i) {
    if (!release[i] || at_end || launches.outermost(i) != i) continue;
    const Group& g = groups[i];
    if (!g.expects || g.has_record) continue;
    const ApiRecord& a = p.api_calls[i];
    if (context_.written_calls.emplace(a.correlation_id, WrittenCall{a.start, a.end, a.thread_id})
            .second)
      written_calls_order_.push_back(a.correlation_id);
  }
  split(p.api_calls, release, chunk.api_calls);
  split(p.kernels, release_kernel, chunk.kernels);
  split(p.memcpys, release_memcpy, chunk.memcpys);
  split(p.memsets, release_memset, chunk.memsets);
  split(p.syncs, release_sync, chunk.syncs);
  split(p.overheads, release_overhead, chunk.overheads);
  split(p.gpu_metric_samples, release_sample, chunk.gpu_metric_samples);
  split(p.markers, release_marker, chunk.markers);
  split_aged(p.marker_data, marker_data_age_, release_data, drop_data, chunk.marker_data);
  split(p.inferred_launches, release_inferred, chunk.inferred_launches);
  if (at_end) p.inferred_launches.clear();  // their kernels never came
  keep_newest(p.inferred_launches, options_.max_counter_sources);
  for (std::size_t k = 0; k + options_.max_counter_sources < written_calls_order_.size(); ++k)
    context_.written_calls.erase(written_calls_order_[k]);
  keep_newest(written_calls_order_, options_.max_counter_sources);
  {
    std::vector<std::uint8_t> no_age(p.nccl_calls.size(), 0);
    split_aged(p.nccl_calls, no_age, release_nccl, drop_nccl, chunk.nccl_calls);
  }
  // Counter records: the sources kept from earlier appends first (context), then every
  // record not matched yet.
  context_.context_counter_records = sources_.size();
  chunk.counter_records = sources_;
  chunk.counter_records.insert(chunk.counter_records.end(), p.counter_records.begin(),
                               p.counter_records.end());

  // Decode what goes out, with the context.
  context_.capture_end = capture_end_;
  context_.instants_after = last_upto_;
  context_.instants_upto = upto;
  DecodeOptions options = options_.decode;
  options.stream = &context_;
  DecodeResult decoded;
  trace::Trace t = decode_to_trace(chunk, options, &decoded);
  if (!context_.pids) context_.pids = decoded.pids;
  // A written call's entry has served once its record went out with its flow.
  for (const std::uint32_t c : late_correlations) context_.written_calls.erase(c);
  // Every name the run demangled, written once with the metadata at the end.
  mangled_names_.insert(decoded.mangled_names.begin(), decoded.mangled_names.end());
  if (at_end) {
    add_mangled_kernel_names(t, mangled_names_);
    mangled_names_.clear();
  }

  // Ranges written now leave the carry; the others carry what they own so far.
  for (std::size_t i = 0; i < decoded.markers.ranges.size(); ++i) {
    const NvtxRange& r = decoded.markers.ranges[i];
    const RangeKey key{r.id, r.start};
    if (context_.held_ranges.count(key) == 0) {
      context_.carry.erase(key);
    } else if (i < decoded.attribution.operators.size()) {
      OperatorSummary& op = decoded.attribution.operators[i];
      if (op.kernels + op.memcpys + op.memsets + op.launches > 0) context_.carry[key] = op;
    }
  }
  context_.held_ranges.clear();

  // Counter records matched to a kernel written now become sources (when measurements).
  std::vector<CounterRecord> unmatched;
  for (CounterRecord& c : p.counter_records) {
    if (at_end) continue;
    if (written_kernels.count(device_key(c.device, c.correlation_id)) == 0) {
      unmatched.push_back(std::move(c));
    } else if (c.measurement != kNoId) {
      sources_.push_back(std::move(c));
    }
  }
  p.counter_records = std::move(unmatched);
  keep_newest(sources_, options_.max_counter_sources);
  if (at_end) add_unfinished_records(t, p.unfinished_records);
  if (at_end && late_records_ > 0) {
    // How late CUPTI handed records over: each came after its call had waited
    // pending_limit_ns and gone out alone.
    t.info.emplace_back("GPU records after their call was written",
                        std::to_string(late_records_) + " (with their flows; no operator)");
  }
  if (at_end) {
    sources_.clear();
    context_.carry.clear();
    context_.written_calls.clear();
    written_calls_order_.clear();
  }
  last_upto_ = upto;
  if (result != nullptr) *result = std::move(decoded);
  return t;
}

HeldRecords StreamingDecoder::held() const {
  const RecordBatch& p = pending_;
  HeldRecords h;
  h.api_calls = p.api_calls.size();
  h.kernels = p.kernels.size();
  h.memcpys = p.memcpys.size();
  h.memsets = p.memsets.size();
  h.syncs = p.syncs.size();
  h.markers = p.markers.size();
  h.marker_data = p.marker_data.size();
  h.overheads = p.overheads.size();
  h.names = p.names.size() + p.thread_names.size() + p.devices.size();
  h.counter_records = p.counter_records.size();
  h.counter_sources = sources_.size();
  h.inferred_launches = p.inferred_launches.size();
  h.gpu_metric_samples = p.gpu_metric_samples.size();
  h.nccl_calls = p.nccl_calls.size();
  h.carried_ranges = context_.carry.size();
  h.written_calls = context_.written_calls.size();
  return h;
}

std::uint64_t StreamingDecoder::held_bytes() const {
  const RecordBatch& p = pending_;
  std::uint64_t b = 0;
  for (const ApiRecord& a : p.api_calls) b += sizeof a + a.name.capacity();
  for (const KernelRecord& k : p.kernels) b += sizeof k + k.name.capacity();
  b += p.memcpys.size() * sizeof(MemcpyRecord) + p.memsets.size() * sizeof(MemsetRecord) +
       p.syncs.size() * sizeof(SyncRecord) + p.marker_data.size() * sizeof(MarkerDataRecord) +
       p.overheads.size() * sizeof(OverheadRecord) + p.nccl_calls.size() * sizeof(NcclCallRecord) +
       p.inferred_launches.size() * sizeof(InferredLaunch) +
       context_.written_calls.size() * (sizeof(std::uint32_t) + sizeof(WrittenCall) + 16);
  for (const MarkerRecord& m : p.markers) b += sizeof m + m.name.capacity() + m.domain.capacity();
  for (const NameRecord& n : p.names) b += sizeof n + n.name.capacity();
  for (const ThreadName& n : p.thread_names) b += sizeof n + n.name.capacity();
  for (const DeviceInfo& d : p.devices) b += sizeof d + d.name.capacity();
  for (const CounterRecord& c : p.counter_records)
    b += sizeof c + c.values.capacity() * sizeof(double);
  for (const CounterRecord& c : sources_) b += sizeof c + c.values.capacity() * sizeof(double);
  for (const GpuMetricSample& s : p.gpu_metric_samples)
    b += sizeof s + s.values.capacity() * sizeof(double);
  b += context_.carry.size() * (sizeof(OperatorSummary) + 64);
  return b;
}

}  // namespace flopline::capture
