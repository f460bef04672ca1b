// The flow source rule of launch_index.h.
#include "flopline/capture/launch_index.h"

#include <algorithm>
#include <numeric>

namespace flopline::capture {
namespace {

// Outer first: earlier start, then later end, then runtime before driver (a runtime call
// and the driver call it makes can carry the same timestamps at coarse clocks).
bool outer_first(const ApiRecord& a, const ApiRecord& b) {
  if (a.start != b.start) return a.start < b.start;
  if (a.end != b.end) return a.end > b.end;
  return a.domain == ApiDomain::kRuntime && b.domain == ApiDomain::kDriver;
}

}  // namespace

LaunchIndex::LaunchIndex(const RecordBatch& batch) {
  const auto& api = batch.api_calls;
  const auto n = static_cast<std::uint32_t>(api.size());

  // Roots: sweep each thread's calls in start order with a stack of open calls.
  root_.resize(n);
  std::iota(root_.begin(), root_.end(), 0u);
  std::vector<std::uint32_t> order;
  order.reserve(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    if (timed(api[i])) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    if (api[a].thread_id != api[b].thread_id) return api[a].thread_id < api[b].thread_id;
    if (outer_first(api[a], api[b])) return true;
    if (outer_first(api[b], api[a])) return false;
    return a < b;
  });
  std::vector<std::uint32_t> open;
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::uint32_t i = order[k];
    if (k > 0 && api[order[k - 1]].thread_id != api[i].thread_id) open.clear();
    while (!open.empty() && api[open.back()].end < api[i].end) open.pop_back();
    if (!open.empty() && api[open.back()].start <= api[i].start) root_[i] = root_[open.back()];
    open.push_back(i);
  }

  for (std::uint32_t i = 0; i < n; ++i) {
    if (!timed(api[i])) continue;
    auto [it, added] = by_correlation_.try_emplace(api[i].correlation_id, i);
    if (!added && outer_first(api[i], api[it->second])) it->second = i;
  }

  work_.reserve(batch.kernels.size() + batch.memcpys.size() + batch.memsets.size());
  auto add = [&](GpuWorkKind kind, std::size_t index, std::uint32_t device, std::uint32_t stream,
                 std::uint32_t correlation, TimeNs start, TimeNs end) {
    // A record that ends before it starts (clock trouble) counts as instantaneous.
    work_.push_back(GpuWork{kind, static_cast<std::uint32_t>(index), device, stream, correlation,
                            start, std::max(start, end), launch_of(correlation)});
  };
  for (std::size_t i = 0; i < batch.kernels.size(); ++i) {
    const KernelRecord& k = batch.kernels[i];
    add(GpuWorkKind::kKernel, i, k.device, k.stream, k.correlation_id, k.start, k.end);
  }
  for (std::size_t i = 0; i < batch.memcpys.size(); ++i) {
    const MemcpyRecord& m = batch.memcpys[i];
    add(GpuWorkKind::kMemcpy, i, m.device, m.stream, m.correlation_id, m.start, m.end);
  }
  for (std::size_t i = 0; i < batch.memsets.size(); ++i) {
    const MemsetRecord& m = batch.memsets[i];
    add(GpuWorkKind::kMemset, i, m.device, m.stream, m.correlation_id, m.start, m.end);
  }
}

std::uint32_t LaunchIndex::api_with_correlation(std::uint32_t correlation_id) const {
  const auto it = by_correlation_.find(correlation_id);
  return it == by_correlation_.end() ? kNoId : it->second;
}

std::uint32_t LaunchIndex::launch_of(std::uint32_t correlation_id) const {
  const std::uint32_t api = api_with_correlation(correlation_id);
  return api == kNoId ? kNoId : root_[api];
}

}  // namespace flopline::capture
