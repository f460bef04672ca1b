#include "core/rank_summary.h"

#include <algorithm>

namespace flopline::viewer {
namespace {

std::string rank_label(const std::optional<std::int64_t>& rank, const std::string& file) {
  return rank ? "rank " + std::to_string(*rank) : file;
}

double share(std::int64_t part, std::int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

}  // namespace

RankInputs rank_inputs(const trace::Trace& t) {
  RankInputs in;
  in.rank = trace::trace_rank(t);
  in.breakdown = trace::time_breakdown(t);
  in.collectives = trace::collective_instances(t);
  in.window_group = trace::trace_window_group(t);
  in.windowed = trace::trace_recorded_in_windows(t);
  in.host = trace::trace_host(t);
  return in;
}

BreakdownShares shares_of(const trace::DeviceBreakdown& b) {
  const std::int64_t w = b.window_ns();
  return {.compute = share(b.compute_ns, w),
          .communication = share(b.communication_ns, w),
          .memory = share(b.memory_ns, w),
          .idle = share(b.idle_ns, w)};
}

const char* bar_part_name(int part) {
  static constexpr const char* kNames[kBarParts] = {"compute", "communication", "memory", "idle"};
  return part >= 0 && part < kBarParts ? kNames[part] : "";
}

std::array<BarSegment, kBarParts> bar_segments(const BreakdownShares& s, float x0, float width) {
  const double parts[kBarParts] = {s.compute, s.communication, s.memory, s.idle};
  double total = 0;
  for (double p : parts) total += p;
  std::array<BarSegment, kBarParts> out{};
  // Each edge from the running sum, so rounding never opens a gap between two parts.
  double sum = 0;
  float left = x0;
  for (int i = 0; i < kBarParts; ++i) {
    sum += parts[i];
    const float right =
        total > 0 ? x0 + static_cast<float>(static_cast<double>(width) * sum / total) : x0;
    out[static_cast<std::size_t>(i)] = {left, i == kBarParts - 1 && total > 0 ? x0 + width : right};
    left = out[static_cast<std::size_t>(i)].x1;
  }
  return out;
}

int bar_part_at(const BreakdownShares& s, float x0, float width, float x) {
  const auto segs = bar_segments(s, x0, width);
  for (int i = 0; i < kBarParts; ++i) {
    const BarSegment& g = segs[static_cast<std::size_t>(i)];
    if (x >= g.x0 && x < g.x1) return i;
  }
  return -1;
}

std::int64_t bar_part_ns(const trace::DeviceBreakdown& b, int part) {
  switch (part) {
    case 0:
      return b.compute_ns;
    case 1:
      return b.communication_ns;
    case 2:
      return b.memory_ns;
    case 3:
      return b.idle_ns;
    default:
      return 0;
  }
}

RankSummary build_rank_summary(std::span<const RankInputs* const> inputs,
                               std::span<const std::string> labels, std::size_t longest_limit) {
  RankSummary s;
  auto label_of = [&](std::size_t i) { return i < labels.size() ? labels[i] : std::string(); };
  std::size_t with_communicators = 0;
  for (std::uint32_t i = 0; i < inputs.size(); ++i) {
    const RankInputs& in = *inputs[i];
    for (const trace::DeviceBreakdown& b : in.breakdown) {
      s.bars.push_back(
          RankBar{.trace = i,
                  .rank = in.rank,
                  .label = rank_label(in.rank, label_of(i)) + " GPU " + std::to_string(b.device),
                  .breakdown = b,
                  .shares = shares_of(b)});
    }
    with_communicators +=
        std::any_of(in.collectives.begin(), in.collectives.end(),
                    [](const trace::CollectiveInstance& c) { return !c.communicator.empty(); });
  }
  // As `flopline stats` decides: waits across ranks need two ranks with communicators.
  if (with_communicators < 2) return s;
  std::vector<trace::RankCollectives> ranks;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    trace::RankCollectives& r = ranks.emplace_back(
        trace::RankCollectives{label_of(i), inputs[i]->rank, inputs[i]->collectives});
    r.group = inputs[i]->window_group;
    r.windowed = inputs[i]->windowed;
    r.host = inputs[i]->host;
  }
  s.waits = trace::collective_waits(ranks, true);
  const trace::CollectiveWaits& w = *s.waits;
  for (std::uint32_t i = 0; i < w.ranks.size(); ++i) {
    s.wait_rows.push_back(RankWaitRow{.trace = i,
                                      .label = rank_label(w.ranks[i].rank, label_of(i)),
                                      .waits = w.ranks[i],
                                      .waited_for = w.waited_for == i});
  }
  for (std::size_t m = 0; m < w.matched.size(); ++m) {
    const trace::MatchedCollective& c = w.matched[m];
    if (c.arrivals.empty()) continue;
    CollectiveWaitRow row;
    row.matched = m;
    row.label = std::string(trace::to_string(c.collective)) + " #" + std::to_string(c.order);
    row.message_bytes = c.message_bytes;
    row.last_to_arrive = static_cast<std::uint32_t>(c.last_rank);
    row.begin_ns = c.arrivals.front().start;
    row.end_ns = c.arrivals.front().end;
    row.longest_waiter = static_cast<std::uint32_t>(c.arrivals.front().rank);
    row.longest_wait_ns = -1;
    for (const trace::CollectiveArrival& a : c.arrivals) {
      row.total_wait_ns = trace::add_saturating(row.total_wait_ns, a.wait_ns);
      row.begin_ns = std::min(row.begin_ns, a.start);
      row.end_ns = std::max(row.end_ns, a.end);
      if (a.wait_ns > row.longest_wait_ns) {
        row.longest_wait_ns = a.wait_ns;
        row.longest_waiter = static_cast<std::uint32_t>(a.rank);
      }
    }
    s.longest.push_back(std::move(row));
  }
  // Longest wait first; among equals the earlier collective first.
  auto before = [](const CollectiveWaitRow& a, const CollectiveWaitRow& b) {
    if (a.longest_wait_ns != b.longest_wait_ns) return a.longest_wait_ns > b.longest_wait_ns;
    if (a.begin_ns != b.begin_ns) return a.begin_ns < b.begin_ns;
    return a.matched < b.matched;
  };
  if (s.longest.size() > longest_limit) {
    std::partial_sort(s.longest.begin(),
                      s.longest.begin() + static_cast<std::ptrdiff_t>(longest_limit),
                      s.longest.end(), before);
    s.longest.resize(longest_limit);
  } else {
    std::sort(s.longest.begin(), s.longest.end(), before);
  }
  return s;
}

namespace {

// The layout process of `trace`'s process `process`, or kNone.
std::uint32_t layout_process_of(const TimelineLayout& layout, std::uint32_t trace,
                                std::uint32_t process) {
  for (std::uint32_t i = 0; i < layout.processes().size(); ++i) {
    const LayoutProcess& p = layout.processes()[i];
    if (p.trace == trace && p.process == process) return i;
  }
  return trace::kNone;
}

}  // namespace

JumpTarget jump_to_bar(const RankBar& bar, TraceList traces, const TimelineLayout& layout) {
  // Assigned, not designated: gcc 12 warns (-Wmissing-field-initializers) on a
  // designated initializer that leaves out a member without a default.
  JumpTarget j;
  j.begin_ns = bar.breakdown.window_begin;
  j.end_ns = bar.breakdown.window_end;
  if (j.end_ns <= j.begin_ns) j.end_ns = j.begin_ns + 1;
  if (bar.trace >= traces.size()) return j;
  const trace::Trace& t = *traces[bar.trace];
  for (std::uint32_t p = 0; p < t.processes.size(); ++p) {
    if (t.processes[p].is_gpu && t.processes[p].device == bar.breakdown.device) {
      j.layout_process = layout_process_of(layout, bar.trace, p);
      if (j.layout_process != trace::kNone) break;
    }
  }
  return j;
}

SliceHandle gpu_slice_at(TraceList traces, std::uint32_t trace, std::int64_t start,
                         std::int64_t end) {
  if (trace >= traces.size()) return {};
  const trace::Trace& t = *traces[trace];
  for (std::uint32_t k = 0; k < t.tracks.size(); ++k) {
    const trace::Track& track = t.tracks[k];
    if (track.kind != trace::TrackKind::kGpuStream) continue;
    for (std::uint32_t r = 0; r < track.rows.size(); ++r) {
      const std::vector<trace::Slice>& row = track.rows[r];
      // Rows are sorted by start.
      auto it = std::lower_bound(row.begin(), row.end(), start,
                                 [](const trace::Slice& s, std::int64_t v) { return s.start < v; });
      for (; it != row.end() && it->start == start; ++it) {
        if (it->end() == end) {
          return {
              .trace = trace,
              .ref = {.track = k, .row = r, .index = static_cast<std::uint32_t>(it - row.begin())}};
        }
      }
    }
  }
  return {};
}

JumpTarget jump_to_collective(const RankSummary& summary, const CollectiveWaitRow& row,
                              TraceList traces, const TimelineLayout& layout) {
  // The collective in the middle third of the view: its context on both sides.
  const std::int64_t span = std::max<std::int64_t>(1, row.end_ns - row.begin_ns);
  JumpTarget j;
  j.begin_ns = row.begin_ns - span;
  j.end_ns = row.end_ns + span;
  if (!summary.waits || row.matched >= summary.waits->matched.size()) return j;
  const trace::MatchedCollective& c = summary.waits->matched[row.matched];
  for (const trace::CollectiveArrival& a : c.arrivals) {
    if (a.rank != row.longest_waiter) continue;
    j.slice = gpu_slice_at(traces, row.longest_waiter, a.start, a.end);
  }
  if (j.slice.valid()) {
    const trace::Track& track = traces[j.slice.trace]->tracks[j.slice.ref.track];
    j.layout_process = layout_process_of(layout, j.slice.trace, track.process);
  }
  return j;
}

}  // namespace flopline::viewer
