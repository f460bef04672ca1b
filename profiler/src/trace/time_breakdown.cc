// Computation, communication, memory and idle time per device; see time_breakdown.h.
#include "flopline/trace/time_breakdown.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <utility>

#include "flopline/trace/collectives.h"
#include "flopline/trace/json_value.h"
#include "flopline/trace/operator_time.h"
#include "flopline/trace/trace_args.h"
#include "flopline/trace/types.h"

namespace flopline::trace {
namespace {

using Intervals = std::vector<std::pair<TimeNs, TimeNs>>;

// Sorted, disjoint.
Intervals merged(Intervals v) {
  std::sort(v.begin(), v.end());
  Intervals out;
  for (const auto& [b, e] : v) {
    if (!out.empty() && b <= out.back().second) {
      out.back().second = std::max(out.back().second, e);
    } else {
      out.emplace_back(b, e);
    }
  }
  return out;
}

std::int64_t length(const Intervals& v) {
  std::int64_t n = 0;
  for (const auto& [b, e] : v) n = add_saturating(n, sub_saturating(e, b));
  return n;
}

// Of two merged lists: the length of their intersection.
std::int64_t overlap(const Intervals& a, const Intervals& b) {
  std::int64_t n = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const TimeNs lo = std::max(a[i].first, b[j].first);
    const TimeNs hi = std::min(a[i].second, b[j].second);
    if (hi > lo) n = add_saturating(n, sub_saturating(hi, lo));
    (a[i].second < b[j].second) ? ++i : ++j;
  }
  return n;
}

Intervals joined(const Intervals& a, const Intervals& b) {
  Intervals all = a;
  all.insert(all.end(), b.begin(), b.end());
  return merged(std::move(all));
}

struct Item {
  TimeNs lo = 0, hi = 0;
  std::optional<TimeNs> launch;  // when its launch call began
};

struct DeviceWork {
  Intervals compute, communication, memory;
  std::vector<Item> items;  // every piece of work in the window
  double flops = 0, peak_time_ns = 0;
  bool any_flops = false, missing_peak = false;
  std::uint64_t kernels = 0;
  TimeNs first = 0, last = 0;
  bool any = false;
};

const DeviceProperties* properties_of(const Trace& t, std::int32_t device) {
  for (const DeviceProperties& d : t.devices) {
    if (d.id == device) return &d;
  }
  return nullptr;
}

// The operators' model FLOPs per device, over each device's window (time_breakdown.h).
void add_model_flops(const Trace& t, const OperatorIndex& index,
                     std::vector<DeviceBreakdown>& out) {
  if (out.empty() || !index.owns_gpu_work()) return;
  std::map<std::int32_t, std::pair<double, double>> model;  // device -> flops, peak time
  std::map<std::int32_t, bool> missing_peak;
  const auto& ops = index.operators();
  for (std::uint32_t i = 0; i < ops.size(); ++i) {
    const OperatorTime& op = ops[i];
    if (!op.flops_in_total || op.busy_ns <= 0 || op.gpu_track == kNone) continue;
    if (op.flops_source != FlopsSource::kTrace && op.flops_source != FlopsSource::kShapes &&
        op.flops_source != FlopsSource::kNested)
      continue;
    if (!op.metrics.has_flops() || op.metrics.flops <= 0) continue;
    const Process& p = t.processes[t.tracks[op.gpu_track].process];
    if (!p.is_gpu) continue;
    const auto b = std::find_if(out.begin(), out.end(),
                                [&](const DeviceBreakdown& d) { return d.device == p.device; });
    if (b == out.end()) continue;
    const TimeNs inside = index.busy_within(i, b->window_begin, b->window_end);
    if (inside <= 0) continue;
    const double flops =
        op.metrics.flops * static_cast<double>(inside) / static_cast<double>(op.busy_ns);
    auto& [sum, peak_time] = model[p.device];
    sum += flops;
    const DeviceProperties* props = properties_of(t, p.device);
    const double peak = props != nullptr ? props->peak_flops_for(op.precision) : 0;
    if (peak > 0) {
      peak_time += flops / peak * 1e9;
    } else {
      missing_peak[p.device] = true;
    }
  }
  for (DeviceBreakdown& b : out) {
    const auto it = model.find(b.device);
    if (it == model.end()) continue;
    b.model_flops = it->second.first;
    if (!missing_peak[b.device]) b.model_peak_time_ns = it->second.second;
  }
}

}  // namespace

std::vector<DeviceBreakdown> time_breakdown(const Trace& t, std::optional<TimeNs> begin,
                                            std::optional<TimeNs> end,
                                            const OperatorIndex* operators) {
  const StringId kernel = t.strings.find("kernel");
  const StringId copy = t.strings.find("gpu_memcpy");
  const StringId set = t.strings.find("gpu_memset");
  // GPU work -> the start of the CPU call that launched it (the launch flows).
  auto key = [](std::uint32_t track, const SliceRef& r) {
    return static_cast<std::uint64_t>(track) << 40 | static_cast<std::uint64_t>(r.row) << 32 |
           r.index;
  };
  std::unordered_map<std::uint64_t, TimeNs> launch_of;
  for (const Flow& f : t.flows) {
    if (!f.joined() || f.to.slice.row >= 256 || f.to.slice.track >= (1u << 24)) continue;
    if (t.tracks[f.to.slice.track].kind != TrackKind::kGpuStream ||
        t.tracks[f.from.slice.track].kind != TrackKind::kThread)
      continue;
    launch_of.emplace(key(f.to.slice.track, f.to.slice),
                      t.tracks[f.from.slice.track].at(f.from.slice).start);
  }
  std::map<std::int32_t, DeviceWork> devices;
  for (std::uint32_t ti = 0; ti < t.tracks.size(); ++ti) {
    const Track& track = t.tracks[ti];
    const Process& p = t.processes[track.process];
    if (track.kind != TrackKind::kGpuStream || !p.is_gpu) continue;
    const DeviceProperties* props = nullptr;
    for (const DeviceProperties& d : t.devices) {
      if (d.id == p.device) props = &d;
    }
    for (std::uint32_t ri = 0; ri < track.rows.size(); ++ri) {
      const auto& row = track.rows[ri];
      for (std::uint32_t si = 0; si < row.size(); ++si) {
        const Slice& s = row[si];
        const bool is_kernel = s.cat == kernel && kernel != kNone;
        const bool is_memory = (s.cat == copy && copy != kNone) || (s.cat == set && set != kNone);
        if (!is_kernel && !is_memory) continue;
        const TimeNs s_end = add_saturating(s.start, std::max<TimeNs>(0, s.dur));
        DeviceWork& w = devices[p.device];
        w.first = w.any ? std::min(w.first, s.start) : s.start;
        w.last = w.any ? std::max(w.last, s_end) : s_end;
        w.any = true;
        const TimeNs lo = begin ? std::max(*begin, s.start) : s.start;
        const TimeNs hi = end ? std::min(*end, s_end) : s_end;
        if (hi < lo || (hi == lo && s.dur > 0)) continue;  // outside the window
        Item item{lo, hi, std::nullopt};
        if (ri < 256 && ti < (1u << 24)) {
          const auto it = launch_of.find(key(ti, SliceRef{ti, ri, si}));
          if (it != launch_of.end()) item.launch = it->second;
        }
        w.items.push_back(item);
        if (is_memory) {
          w.memory.emplace_back(lo, hi);
          continue;
        }
        ++w.kernels;
        const bool communication = is_communication_kernel(t.str(s.name));
        (communication ? w.communication : w.compute).emplace_back(lo, hi);
        const SliceMetrics m = t.metrics_of(s);
        if (!m.has_flops() || m.flops <= 0) continue;
        // The part of the kernel inside the window, by time.
        const double part =
            s.dur > 0 ? static_cast<double>(sub_saturating(hi, lo)) / static_cast<double>(s.dur)
                      : 1.0;
        w.flops += m.flops * part;
        w.any_flops = true;
        std::string precision;
        if (s.args != kNoArgs) {
          if (const auto v = json_member(t.args.json(s.args), kArgPrecision))
            precision = json_string(*v).value_or(std::string());
        }
        const double peak = props != nullptr ? props->peak_flops_for(precision) : 0;
        if (peak > 0) {
          w.peak_time_ns += m.flops * part / peak * 1e9;
        } else {
          w.missing_peak = true;
        }
      }
    }
  }
  std::vector<DeviceBreakdown> out;
  for (auto& [device, w] : devices) {
    DeviceBreakdown b;
    b.device = device;
    b.window_begin = begin.value_or(w.first);
    b.window_end = end.value_or(w.last);
    if (b.window_end < b.window_begin) b.window_end = b.window_begin;
    const Intervals compute = merged(std::move(w.compute));
    const Intervals comm = merged(std::move(w.communication));
    const Intervals memory = merged(std::move(w.memory));
    const Intervals kernels = joined(compute, comm);
    const Intervals all = joined(kernels, memory);
    b.compute_ns = length(compute);
    b.communication_total_ns = length(comm);
    b.communication_hidden_ns = overlap(comm, compute);
    b.communication_ns = b.communication_total_ns - b.communication_hidden_ns;
    b.memory_ns = length(all) - length(kernels);
    b.idle_ns = std::max<std::int64_t>(0, b.window_ns() - length(all));
    // Each gap before a piece of work, by when that work was launched.
    std::sort(w.items.begin(), w.items.end(),
              [](const Item& x, const Item& y) { return x.lo < y.lo; });
    TimeNs busy_until = b.window_begin;
    for (const Item& item : w.items) {
      if (item.lo > busy_until) {
        const std::int64_t gap = sub_saturating(item.lo, busy_until);
        if (item.launch) {
          const std::int64_t host =
              std::clamp<std::int64_t>(sub_saturating(*item.launch, busy_until), 0, gap);
          b.idle_host_ns = add_saturating(b.idle_host_ns, host);
          b.idle_queued_ns = add_saturating(b.idle_queued_ns, gap - host);
        } else {
          b.idle_other_ns = add_saturating(b.idle_other_ns, gap);
        }
      }
      busy_until = std::max(busy_until, item.hi);
    }
    if (b.window_end > busy_until)
      b.idle_other_ns = add_saturating(b.idle_other_ns, sub_saturating(b.window_end, busy_until));
    b.kernels = w.kernels;
    if (w.any_flops) {
      b.flops = w.flops;
      if (!w.missing_peak) b.peak_time_ns = w.peak_time_ns;
    }
    out.push_back(b);
  }
  if (operators != nullptr) {
    add_model_flops(t, *operators, out);
  } else if (!out.empty()) {
    add_model_flops(t, OperatorIndex::build(t), out);
  }
  return out;
}

}  // namespace flopline::trace
