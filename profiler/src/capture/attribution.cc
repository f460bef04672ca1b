// Operator attribution; the rules are in attribution.h.
#include "flopline/capture/attribution.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <unordered_map>

namespace flopline::capture {
namespace {

bool contains(const NvtxRange& r, const ApiRecord& a) {
  return r.start <= a.start && a.end <= r.end;
}

// For each launch call: the ranges of its thread containing it, innermost first.
// Ranges are sorted by (thread, start, longer first), so on one thread a later range
// that contains a call is nested in (or overlaps) the earlier ones: a stack sweep finds
// them. Ranges that ended before the call, or before a range pushed after them started,
// are popped from the top; others that ended (under a range they overlap) are skipped
// when scanned.
std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> containing_ranges(
    const RecordBatch& batch, const std::vector<std::uint32_t>& launches,
    const PairedMarkers& markers) {
  std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> out;
  const auto& api = batch.api_calls;
  std::vector<std::uint32_t> calls = launches;
  std::sort(calls.begin(), calls.end(), [&](std::uint32_t a, std::uint32_t b) {
    if (api[a].thread_id != api[b].thread_id) return api[a].thread_id < api[b].thread_id;
    return api[a].start < api[b].start;
  });
  const auto& ranges = markers.ranges;
  std::size_t next = 0;  // next range to push
  std::vector<std::uint32_t> stack;
  std::uint32_t thread = 0;
  bool first = true;
  for (const std::uint32_t c : calls) {
    const ApiRecord& call = api[c];
    if (first || call.thread_id != thread) {
      first = false;
      thread = call.thread_id;
      stack.clear();
      while (next < ranges.size() && ranges[next].thread_id < thread) ++next;
    }
    while (next < ranges.size() && ranges[next].thread_id == thread &&
           ranges[next].start <= call.start) {
      // A range that ended before this one starts contains no later call: popped before
      // the push, or it stays buried under this one and every call scans past it.
      while (!stack.empty() && ranges[stack.back()].end < ranges[next].start) stack.pop_back();
      stack.push_back(static_cast<std::uint32_t>(next++));
    }
    while (!stack.empty() && ranges[stack.back()].end < call.start) stack.pop_back();
    std::vector<std::uint32_t> found;
    for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
      if (contains(ranges[*it], call)) found.push_back(*it);
    }
    if (!found.empty()) out.emplace(c, std::move(found));
  }
  return out;
}

// Nesting depth of each range on its thread.
std::vector<std::uint32_t> depths(const PairedMarkers& markers) {
  const auto& ranges = markers.ranges;
  std::vector<std::uint32_t> depth(ranges.size(), 0);
  std::vector<std::uint32_t> stack;
  for (std::uint32_t i = 0; i < ranges.size(); ++i) {
    if (i > 0 && ranges[i - 1].thread_id != ranges[i].thread_id) stack.clear();
    while (!stack.empty() && ranges[stack.back()].end < ranges[i].end) stack.pop_back();
    depth[i] = static_cast<std::uint32_t>(stack.size());
    stack.push_back(i);
  }
  return depth;
}

// Union length of intervals (sorted in place).
TimeNs union_length(std::vector<std::pair<TimeNs, TimeNs>>& iv) {
  std::sort(iv.begin(), iv.end());
  TimeNs total = 0;
  TimeNs cur_start = 0;
  TimeNs cur_end = 0;
  bool open = false;
  for (const auto& [s, e] : iv) {
    if (!open || s > cur_end) {
      if (open) total += cur_end - cur_start;
      cur_start = s;
      cur_end = e;
      open = true;
    } else {
      cur_end = std::max(cur_end, e);
    }
  }
  if (open) total += cur_end - cur_start;
  return total;
}

// GPU time: per stream the union of the intervals, summed over streams.
TimeNs gpu_time(const std::vector<GpuWork>& work, const std::vector<std::uint32_t>& items) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::pair<TimeNs, TimeNs>>>
      per_stream;
  for (const std::uint32_t w : items)
    per_stream[{work[w].device, work[w].stream}].emplace_back(work[w].start, work[w].end);
  TimeNs total = 0;
  for (auto& [key, iv] : per_stream) total += union_length(iv);
  return total;
}

void summarize(OperatorSummary& op, const std::vector<GpuWork>& work,
               const std::vector<std::uint32_t>& items) {
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<std::pair<TimeNs, TimeNs>>>
      per_stream;
  for (const std::uint32_t w : items) {
    const GpuWork& g = work[w];
    per_stream[{g.device, g.stream}].emplace_back(g.start, g.end);
    switch (g.kind) {
      case GpuWorkKind::kKernel:
        ++op.kernels;
        op.kernel_time_ns += g.end - g.start;
        break;
      case GpuWorkKind::kMemcpy:
        ++op.memcpys;
        break;
      case GpuWorkKind::kMemset:
        ++op.memsets;
        break;
    }
  }
  for (auto& [key, iv] : per_stream) {
    StreamExtent e;
    e.device = key.first;
    e.stream = key.second;
    e.records = static_cast<std::uint32_t>(iv.size());
    e.start = iv.front().first;
    e.end = iv.front().second;
    for (const auto& [s, t] : iv) {
      e.start = std::min(e.start, s);
      e.end = std::max(e.end, t);
    }
    e.busy_ns = union_length(iv);
    op.gpu_time_ns += e.busy_ns;
    op.streams.push_back(e);
  }
}

}  // namespace

Attribution attribute_operators(const RecordBatch& batch, const LaunchIndex& launches,
                                const PairedMarkers& markers,
                                std::span<const std::optional<WorkCount>> counted) {
  const std::vector<GpuWork>& work = launches.gpu_work();
  const auto& ranges = markers.ranges;
  Attribution out;
  out.owner.assign(work.size(), kNoId);
  out.counts_from.assign(work.size(), kNoId);
  out.precision_from.assign(work.size(), kNoId);

  std::vector<std::uint32_t> launch_calls;
  for (const GpuWork& w : work) {
    if (w.launch != kNoId) launch_calls.push_back(w.launch);
  }
  std::sort(launch_calls.begin(), launch_calls.end());
  launch_calls.erase(std::unique(launch_calls.begin(), launch_calls.end()), launch_calls.end());
  const auto containing = containing_ranges(batch, launch_calls, markers);

  std::vector<std::vector<std::uint32_t>> inclusive(ranges.size());
  std::vector<std::vector<std::uint32_t>> self(ranges.size());
  std::vector<std::uint32_t> launch_count(ranges.size(), 0);
  for (const auto& [call, owners] : containing) {
    for (const std::uint32_t r : owners) ++launch_count[r];
  }
  for (std::uint32_t w = 0; w < work.size(); ++w) {
    if (work[w].launch == kNoId) continue;
    const auto it = containing.find(work[w].launch);
    if (it == containing.end()) continue;
    out.owner[w] = it->second.front();
    self[it->second.front()].push_back(w);
    for (const std::uint32_t r : it->second) inclusive[r].push_back(w);
  }
  for (std::uint32_t w = 0; w < work.size(); ++w) {
    if (out.owner[w] == kNoId) continue;
    const std::vector<std::uint32_t>& owners = containing.at(work[w].launch);
    for (const std::uint32_t r : owners) {
      const auto& m = ranges[r].metrics;
      if (!m.has_flops() && !m.has_bytes()) continue;
      if (inclusive[r].size() == 1) out.counts_from[w] = r;
      break;
    }
    for (const std::uint32_t r : owners) {
      if (ranges[r].precision.empty()) continue;
      out.precision_from[w] = r;
      break;
    }
  }

  const std::vector<std::uint32_t> depth = depths(markers);
  out.operators.resize(ranges.size());
  for (std::uint32_t r = 0; r < ranges.size(); ++r) {
    OperatorSummary& op = out.operators[r];
    op.range = r;
    op.name = ranges[r].name;
    op.thread_id = ranges[r].thread_id;
    op.cpu_start = ranges[r].start;
    op.cpu_end = ranges[r].end;
    op.depth = depth[r];
    op.metrics = ranges[r].metrics;
    op.launches = launch_count[r];
    summarize(op, work, inclusive[r]);
    op.self_gpu_time_ns = gpu_time(work, self[r]);
    if (counted.empty()) continue;
    for (const std::uint32_t w : inclusive[r]) {
      if (w >= counted.size() || !counted[w]) continue;
      const WorkCount& c = *counted[w];
      ++op.counted_kernels;
      op.counted_flops = op.counted_flops.value_or(0) + c.flops;
      if (c.bytes) op.counted_bytes = op.counted_bytes.value_or(0) + *c.bytes;
      // The weakest basis among them: measured < same work < estimated.
      if (static_cast<int>(c.basis) > static_cast<int>(op.counted_basis))
        op.counted_basis = c.basis;
    }
  }
  return out;
}

void merge_earlier_work(OperatorSummary& now, const OperatorSummary& earlier) {
  now.launches += earlier.launches;
  now.kernels += earlier.kernels;
  now.memcpys += earlier.memcpys;
  now.memsets += earlier.memsets;
  now.gpu_time_ns += earlier.gpu_time_ns;
  now.kernel_time_ns += earlier.kernel_time_ns;
  now.self_gpu_time_ns += earlier.self_gpu_time_ns;
  for (const StreamExtent& e : earlier.streams) {
    const auto it = std::lower_bound(now.streams.begin(), now.streams.end(), e,
                                     [](const StreamExtent& a, const StreamExtent& b) {
                                       return std::make_pair(a.device, a.stream) <
                                              std::make_pair(b.device, b.stream);
                                     });
    if (it != now.streams.end() && it->device == e.device && it->stream == e.stream) {
      it->start = std::min(it->start, e.start);
      it->end = std::max(it->end, e.end);
      it->busy_ns += e.busy_ns;
      it->records += e.records;
    } else {
      now.streams.insert(it, e);
    }
  }
  now.counted_kernels += earlier.counted_kernels;
  if (earlier.counted_flops)
    now.counted_flops = now.counted_flops.value_or(0) + *earlier.counted_flops;
  if (earlier.counted_bytes)
    now.counted_bytes = now.counted_bytes.value_or(0) + *earlier.counted_bytes;
  if (static_cast<int>(earlier.counted_basis) > static_cast<int>(now.counted_basis))
    now.counted_basis = earlier.counted_basis;
}

std::vector<OperatorTotals> operator_totals(const std::vector<OperatorSummary>& operators) {
  struct Acc {
    OperatorTotals t;
    TimeNs flops_time = 0;
    TimeNs bytes_time = 0;
  };
  std::unordered_map<std::string, Acc> by_name;
  for (const OperatorSummary& op : operators) {
    if (!op.has_gpu_work()) continue;
    Acc& a = by_name[op.name];
    a.t.name = op.name;
    ++a.t.count;
    a.t.gpu_time_ns += op.gpu_time_ns;
    a.t.kernel_time_ns += op.kernel_time_ns;
    if (op.metrics.has_flops()) {
      a.t.flops = a.t.flops.value_or(0) + op.metrics.flops;
      a.flops_time += op.gpu_time_ns;
    }
    if (op.metrics.has_bytes()) {
      a.t.bytes = a.t.bytes.value_or(0) + op.metrics.bytes;
      a.bytes_time += op.gpu_time_ns;
    }
  }
  std::vector<OperatorTotals> out;
  out.reserve(by_name.size());
  for (auto& [name, a] : by_name) {
    // FLOP/ns = GFLOP/s; / 1e3 -> TFLOP/s. bytes/ns = GB/s.
    if (a.t.flops && a.flops_time > 0)
      a.t.tflops = *a.t.flops / static_cast<double>(a.flops_time) / 1e3;
    if (a.t.bytes && a.bytes_time > 0) a.t.gbps = *a.t.bytes / static_cast<double>(a.bytes_time);
    out.push_back(std::move(a.t));
  }
  std::sort(out.begin(), out.end(), [](const OperatorTotals& a, const OperatorTotals& b) {
    if (a.gpu_time_ns != b.gpu_time_ns) return a.gpu_time_ns > b.gpu_time_ns;
    return a.name < b.name;
  });
  return out;
}

}  // namespace flopline::capture
