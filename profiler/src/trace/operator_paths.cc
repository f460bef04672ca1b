// Operators by name path; see operator_paths.h.
#include "flopline/trace/operator_paths.h"

#include <algorithm>

#include "flopline/trace/operator_time.h"
#include "flopline/trace/types.h"

namespace flopline::trace {

void OperatorPathRows::add(const Trace& t) {
  const OperatorIndex index = OperatorIndex::build(t);
  const std::vector<OperatorTime>& ops = index.operators();
  std::vector<std::string> path(ops.size());
  // Parents come before their children in the index (they start first on their
  // thread); a parent not yet named is named on the way.
  auto name_of = [&](std::uint32_t o, auto&& self) -> const std::string& {
    if (!path[o].empty()) return path[o];
    const OperatorTime& op = ops[o];
    const std::string own(t.str(t.tracks[op.slice.track].at(op.slice).name));
    path[o] = op.parent == kNone || op.parent >= ops.size() || op.parent == o
                  ? own
                  : self(op.parent, self) + std::string(kPathSeparator) + own;
    return path[o];
  };
  for (std::uint32_t o = 0; o < ops.size(); ++o) {
    const OperatorTime& op = ops[o];
    if (op.items == 0) continue;
    Sum& s = sums_[name_of(o, name_of)];
    ++s.count;
    s.total_ns = add_saturating(s.total_ns, op.busy_ns);
    if (op.metrics.has_flops()) {
      s.flops += op.metrics.flops;
      s.flops_ns = add_saturating(s.flops_ns, op.busy_ns);
      s.any_flops = true;
    }
    if (!op.precision.empty()) {
      if (s.precision.empty()) {
        s.precision = op.precision;
      } else if (s.precision != op.precision) {
        s.mixed = true;
      }
    }
  }
}

std::vector<StatsRow> OperatorPathRows::finish() const {
  std::vector<StatsRow> rows;
  TimeNs total = 0;
  for (const auto& [name, s] : sums_) total = add_saturating(total, s.total_ns);
  for (const auto& [name, s] : sums_) {
    StatsRow r;
    r.name = name;
    r.count = s.count;
    r.total_ns = s.total_ns;
    r.avg_ns = s.count > 0 ? add_saturating(s.total_ns, static_cast<TimeNs>(s.count / 2)) /
                                 static_cast<TimeNs>(s.count)
                           : 0;
    r.pct = total > 0 ? 100.0 * static_cast<double>(s.total_ns) / static_cast<double>(total) : 0;
    if (s.any_flops) {
      r.flops = s.flops;
      if (s.flops_ns > 0) r.tflops = s.flops / static_cast<double>(s.flops_ns) / 1e3;
    }
    r.precision = s.mixed ? "mixed" : s.precision;
    r.busy_ns = s.total_ns;
    rows.push_back(std::move(r));
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const StatsRow& a, const StatsRow& b) { return a.total_ns > b.total_ns; });
  return rows;
}

}  // namespace flopline::trace
