#include "flopline/trace/model.h"

#include <algorithm>
#include <limits>

namespace flopline::trace {

std::size_t Track::slice_count() const {
  std::size_t n = 0;
  for (const auto& row : rows) n += row.size();
  return n;
}

double DeviceProperties::peak_flops_for(std::string_view precision) const {
  for (const auto& [key, flops] : peak_flops) {
    if (key == precision) return flops;
  }
  return 0;
}

void TraceReport::skip(std::string_view reason, std::uint64_t n) {
  events_skipped += n;
  for (auto& [r, count] : skip_reasons) {
    if (r == reason) {
      count += n;
      return;
    }
  }
  skip_reasons.emplace_back(std::string(reason), n);
}

std::size_t Trace::slice_count() const {
  std::size_t n = 0;
  for (const auto& t : tracks) n += t.slice_count();
  return n;
}

std::size_t Trace::instant_count() const {
  std::size_t n = 0;
  for (const auto& t : tracks) n += t.instants.size();
  return n;
}

std::size_t Trace::counter_point_count() const {
  std::size_t n = 0;
  for (const auto& c : counters) n += c.points.size();
  return n;
}

std::pair<TimeNs, TimeNs> Trace::time_bounds() const {
  TimeNs lo = std::numeric_limits<TimeNs>::max();
  TimeNs hi = std::numeric_limits<TimeNs>::min();
  auto take = [&](TimeNs a, TimeNs b) {
    lo = std::min(lo, a);
    hi = std::max(hi, b);
  };
  for (const auto& t : tracks) {
    for (const auto& row : t.rows) {
      if (row.empty()) continue;
      // Rows are sorted by start; the latest end needs a scan only of this row.
      TimeNs row_end = row.front().end();
      for (const Slice& s : row) row_end = std::max(row_end, s.end());
      take(row.front().start, row_end);
    }
    if (!t.instants.empty()) take(t.instants.front().ts, t.instants.back().ts);
  }
  for (const auto& c : counters) {
    if (!c.points.empty()) take(c.points.front().ts, c.points.back().ts);
  }
  if (lo > hi) return {0, 0};
  return {lo, hi};
}

}  // namespace flopline::trace
