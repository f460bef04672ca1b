// Flow index: joined flows sorted by their `from` slice, plus a permutation sorted by
// `to`, so both directions are binary searches.
#include "core/flows.h"

#include <algorithm>
#include <numeric>
#include <tuple>

namespace flopline::viewer {
namespace {

auto key(std::uint32_t trace, const trace::SliceRef& r) {
  return std::make_tuple(trace, r.track, r.row, r.index);
}
auto key(const SliceHandle& h) {
  return key(h.trace, h.ref);
}

}  // namespace

bool handle_less(const SliceHandle& a, const SliceHandle& b) {
  return key(a) < key(b);
}

namespace {

std::uint64_t lo_key(const trace::SliceRef& r) {
  return static_cast<std::uint64_t>(r.row) << 32 | r.index;
}

}  // namespace

// Flows come in file order, which for each track is nearly always time order: a
// counting pass by (trace, track) puts them in place, and a track's run is sorted only
// when it is not in order yet. O(n) for Kineto and flopline traces, and no temporary
// copy of the flows (a plain sort of 5 million flows took over a second here).
FlowIndex FlowIndex::build(TraceList traces) {
  FlowIndex idx;
  // Dense bucket ids: (trace, track) in order.
  std::vector<std::size_t> first_track(traces.size() + 1, 0);
  for (std::size_t ti = 0; ti < traces.size(); ++ti) {
    first_track[ti + 1] = first_track[ti] + traces[ti]->tracks.size();
  }
  const std::size_t nb = first_track.back();
  std::vector<std::size_t> begin(nb + 1, 0);
  for (std::size_t ti = 0; ti < traces.size(); ++ti) {
    for (const trace::Flow& f : traces[ti]->flows) {
      if (f.joined()) ++begin[first_track[ti] + f.from.slice.track + 1];
    }
  }
  for (std::size_t b = 0; b < nb; ++b) begin[b + 1] += begin[b];
  idx.links_.resize(begin.back());
  // Where each joined flow (in file order) went, so the `to` order can be built in
  // file order too: that is the order in which each stream's kernels come.
  std::vector<std::uint32_t> position(begin.back());
  std::vector<std::size_t> to_begin(nb + 1, 0);
  {
    std::vector<std::size_t> cursor(begin.begin(), begin.end() - 1);
    std::size_t j = 0;
    for (std::uint32_t ti = 0; ti < traces.size(); ++ti) {
      for (const trace::Flow& f : traces[ti]->flows) {
        if (!f.joined()) continue;
        const std::size_t at = cursor[first_track[ti] + f.from.slice.track]++;
        idx.links_[at] = Packed{ti, f.name, f.from.slice, f.to.slice};
        position[j++] = static_cast<std::uint32_t>(at);
        ++to_begin[first_track[ti] + f.to.slice.track + 1];
      }
    }
  }
  // Sorting moves links: then `position` no longer holds, and the `to` order is made
  // from the final places instead (same result, more sorting).
  bool moved = false;
  auto from_less = [](const Packed& a, const Packed& b) { return lo_key(a.from) < lo_key(b.from); };
  for (std::size_t b = 0; b < nb; ++b) {
    const auto first = idx.links_.begin() + static_cast<std::ptrdiff_t>(begin[b]);
    const auto last = idx.links_.begin() + static_cast<std::ptrdiff_t>(begin[b + 1]);
    if (!std::is_sorted(first, last, from_less)) {
      std::stable_sort(first, last, from_less);
      moved = true;
    }
  }
  if (moved) std::iota(position.begin(), position.end(), 0u);

  const std::vector<Packed>& l = idx.links_;
  for (std::size_t b = 0; b < nb; ++b) to_begin[b + 1] += to_begin[b];
  idx.by_to_.resize(l.size());
  {
    std::vector<std::size_t> cursor(to_begin.begin(), to_begin.end() - 1);
    for (std::uint32_t at : position) {
      idx.by_to_[cursor[first_track[l[at].trace] + l[at].to.track]++] = at;
    }
  }
  std::vector<std::uint32_t>().swap(position);
  auto to_less = [&](std::uint32_t a, std::uint32_t b) {
    return lo_key(l[a].to) < lo_key(l[b].to);
  };
  for (std::size_t b = 0; b < nb; ++b) {
    const auto first = idx.by_to_.begin() + static_cast<std::ptrdiff_t>(to_begin[b]);
    const auto last = idx.by_to_.begin() + static_cast<std::ptrdiff_t>(to_begin[b + 1]);
    if (!std::is_sorted(first, last, to_less)) std::stable_sort(first, last, to_less);
  }
  return idx;
}

void FlowIndex::append(FlowIndex&& other, std::uint32_t trace_offset) {
  if (other.links_.empty()) return;
  std::uint32_t max_trace = 0;
  for (const Packed& p : links_) max_trace = std::max(max_trace, p.trace);
  for (Packed& p : other.links_) p.trace += trace_offset;
  const bool after = links_.empty() || other.links_.front().trace > max_trace;
  const auto base = static_cast<std::uint32_t>(links_.size());
  links_.insert(links_.end(), other.links_.begin(), other.links_.end());
  if (after) {
    // Trace-major order: the other index's orders continue ours.
    for (std::uint32_t i : other.by_to_) by_to_.push_back(base + i);
    return;
  }
  auto from_less = [](const Packed& a, const Packed& b) {
    return std::make_tuple(key(a.trace, a.from), key(a.trace, a.to)) <
           std::make_tuple(key(b.trace, b.from), key(b.trace, b.to));
  };
  std::stable_sort(links_.begin(), links_.end(), from_less);
  by_to_.resize(links_.size());
  std::iota(by_to_.begin(), by_to_.end(), 0u);
  std::stable_sort(by_to_.begin(), by_to_.end(), [&](std::uint32_t a, std::uint32_t b) {
    return key(links_[a].trace, links_[a].to) < key(links_[b].trace, links_[b].to);
  });
}

std::vector<FlowLink> FlowIndex::outgoing(const SliceHandle& s) const {
  const auto k = key(s);
  auto it = std::partition_point(links_.begin(), links_.end(),
                                 [&](const Packed& p) { return key(p.trace, p.from) < k; });
  std::vector<FlowLink> out;
  for (; it != links_.end() && key(it->trace, it->from) == k; ++it) out.push_back(unpack(*it));
  return out;
}

std::vector<FlowLink> FlowIndex::incoming(const SliceHandle& s) const {
  const auto k = key(s);
  auto it = std::partition_point(by_to_.begin(), by_to_.end(), [&](std::uint32_t i) {
    return key(links_[i].trace, links_[i].to) < k;
  });
  std::vector<FlowLink> out;
  for (; it != by_to_.end() && key(links_[*it].trace, links_[*it].to) == k; ++it)
    out.push_back(unpack(links_[*it]));
  return out;
}

std::vector<FlowLink> FlowIndex::links_of(const SliceHandle& s) const {
  std::vector<FlowLink> out = outgoing(s);
  std::vector<FlowLink> in = incoming(s);
  out.insert(out.end(), in.begin(), in.end());
  return out;
}

std::size_t FlowIndex::resident_bytes() const {
  return links_.capacity() * sizeof(Packed) + by_to_.capacity() * sizeof(std::uint32_t);
}

std::size_t release_model_flows(trace::Trace& trace) {
  const std::size_t bytes = trace.flows.capacity() * sizeof(trace::Flow);
  std::vector<trace::Flow>().swap(trace.flows);
  return bytes;
}

}  // namespace flopline::viewer
