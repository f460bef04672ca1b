// Matching and classifying two runs' rows; see trace_diff.h.
#include "flopline/trace/trace_diff.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "flopline/trace/types.h"

namespace flopline::trace {
namespace {

double change_pct(double a, double b) {
  return a != 0 ? 100.0 * (b - a) / a : 0.0;
}

std::optional<double> flops_per_call(const StatsRow& r) {
  if (!r.flops || r.count == 0 || !std::isfinite(*r.flops)) return std::nullopt;
  return *r.flops / static_cast<double>(r.count);
}

DiffKind classify(const StatsRow& a, const StatsRow& b, const DiffTolerances& tol, DiffRow& d) {
  const auto fa = flops_per_call(a), fb = flops_per_call(b);
  if (fa && fb && *fa > 0) d.work_pct = change_pct(*fa, *fb);
  if (a.avg_ns > 0) {
    d.per_call_pct = change_pct(static_cast<double>(a.avg_ns), static_cast<double>(b.avg_ns));
  }
  if (!a.precision.empty() && !b.precision.empty() && a.precision != b.precision)
    return DiffKind::kPrecisionChanged;
  if (d.work_pct && std::fabs(*d.work_pct) > tol.work_pct)
    return *d.work_pct > 0 ? DiffKind::kMoreWork : DiffKind::kLessWork;
  if (a.count != b.count) return b.count > a.count ? DiffKind::kMoreCalls : DiffKind::kFewerCalls;
  if (d.per_call_pct && std::fabs(*d.per_call_pct) > tol.time_pct)
    return *d.per_call_pct > 0 ? DiffKind::kSlower : DiffKind::kFaster;
  return DiffKind::kSame;
}

}  // namespace

const char* to_string(DiffKind k) {
  switch (k) {
    case DiffKind::kNew:
      return "new";
    case DiffKind::kRemoved:
      return "removed";
    case DiffKind::kPrecisionChanged:
      return "precision changed";
    case DiffKind::kMoreWork:
      return "more work";
    case DiffKind::kLessWork:
      return "less work";
    case DiffKind::kMoreCalls:
      return "more calls";
    case DiffKind::kFewerCalls:
      return "fewer calls";
    case DiffKind::kSlower:
      return "slower";
    case DiffKind::kFaster:
      return "faster";
    case DiffKind::kSame:
      return "same";
  }
  return "?";
}

std::vector<DiffRow> diff_rows(const std::vector<StatsRow>& a, const std::vector<StatsRow>& b,
                               const DiffTolerances& tol) {
  std::map<std::string, DiffRow> by_name;
  for (const StatsRow& r : a) {
    DiffRow& d = by_name[r.name];
    d.name = r.name;
    d.a = r;
  }
  for (const StatsRow& r : b) {
    DiffRow& d = by_name[r.name];
    d.name = r.name;
    d.b = r;
  }
  std::vector<DiffRow> out;
  out.reserve(by_name.size());
  for (auto& [name, d] : by_name) {
    const TimeNs ta = d.a ? d.a->total_ns : 0;
    const TimeNs tb = d.b ? d.b->total_ns : 0;
    d.delta_ns = sub_saturating(tb, ta);
    if (d.a && ta > 0) d.delta_pct = change_pct(static_cast<double>(ta), static_cast<double>(tb));
    if (!d.a) {
      d.kind = DiffKind::kNew;
    } else if (!d.b) {
      d.kind = DiffKind::kRemoved;
    } else {
      d.kind = classify(*d.a, *d.b, tol, d);
    }
    out.push_back(std::move(d));
  }
  std::stable_sort(out.begin(), out.end(), [](const DiffRow& x, const DiffRow& y) {
    const auto mx = x.delta_ns < 0 ? -(x.delta_ns + 1) : x.delta_ns;  // no overflow at min
    const auto my = y.delta_ns < 0 ? -(y.delta_ns + 1) : y.delta_ns;
    return mx > my;
  });
  return out;
}

}  // namespace flopline::trace
