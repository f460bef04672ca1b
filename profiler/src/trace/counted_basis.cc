// The words of counted_basis.h and kernel time by basis.
#include "flopline/trace/counted_basis.h"

#include <cstdio>
#include <utility>

#include "flopline/trace/json_value.h"
#include "flopline/trace/trace_args.h"

namespace flopline::trace {

CountedBasis counted_basis(std::string_view s) {
  if (s == kSourceMeasured) return CountedBasis::kMeasured;
  if (s == kSourceSameWork) return CountedBasis::kSameWork;
  if (s == kSourceEstimated || s == kSourceSameSignature) return CountedBasis::kEstimated;
  if (s.starts_with(kSourceNotCountedPrefix)) return CountedBasis::kNotCounted;
  return CountedBasis::kNoCounts;
}

const char* to_string(CountedBasis b) {
  switch (b) {
    case CountedBasis::kMeasured:
      return "measured";
    case CountedBasis::kSameWork:
      return "same work";
    case CountedBasis::kEstimated:
      return "estimated";
    case CountedBasis::kNotCounted:
      return "not counted";
    case CountedBasis::kNoCounts:
      break;
  }
  return "none";
}

// Sums of kernel time saturate, as every sum of times in a table does.
void CountedCoverage::add(const CountedCoverage& o) {
  kernel_ns = add_saturating(kernel_ns, o.kernel_ns);
  measured_ns = add_saturating(measured_ns, o.measured_ns);
  same_work_ns = add_saturating(same_work_ns, o.same_work_ns);
  estimated_ns = add_saturating(estimated_ns, o.estimated_ns);
  not_counted_ns = add_saturating(not_counted_ns, o.not_counted_ns);
  none_ns = add_saturating(none_ns, o.none_ns);
  kernels += o.kernels;
  measured += o.measured;
  same_work += o.same_work;
  estimated += o.estimated;
  not_counted += o.not_counted;
}

CountedCoverage counted_coverage(const Trace& t) {
  CountedCoverage c;
  const StringId kernel = t.strings.find("kernel");
  if (kernel == kNone) return c;
  for (const Track& track : t.tracks) {
    for (const auto& row : track.rows) {
      for (const Slice& s : row) {
        if (s.cat != kernel) continue;
        const std::int64_t dur = s.dur > 0 ? s.dur : 0;
        c.kernel_ns = add_saturating(c.kernel_ns, dur);
        ++c.kernels;
        CountedBasis b = CountedBasis::kNoCounts;
        if (s.args != kNoArgs) {
          if (const auto m = json_member(t.args.json(s.args), kArgFlopsSource)) {
            if (const auto text = json_string(*m)) b = counted_basis(*text);
          }
        }
        std::uint64_t none = 0;  // kernels without a basis are not counted by number
        auto [ns, count] = [&]() -> std::pair<std::int64_t*, std::uint64_t*> {
          switch (b) {
            case CountedBasis::kMeasured:
              return {&c.measured_ns, &c.measured};
            case CountedBasis::kSameWork:
              return {&c.same_work_ns, &c.same_work};
            case CountedBasis::kEstimated:
              return {&c.estimated_ns, &c.estimated};
            case CountedBasis::kNotCounted:
              return {&c.not_counted_ns, &c.not_counted};
            case CountedBasis::kNoCounts:
              break;
          }
          return {&c.none_ns, &none};
        }();
        *ns = add_saturating(*ns, dur);
        ++*count;
      }
    }
  }
  return c;
}

std::string counted_coverage_line(const CountedCoverage& c) {
  auto pct = [&c](std::int64_t ns) {
    char b[32];
    std::snprintf(
        b, sizeof b, "%.1f%%",
        c.kernel_ns > 0 ? 100.0 * static_cast<double>(ns) / static_cast<double>(c.kernel_ns) : 0.0);
    return std::string(b);
  };
  char total[48];
  std::snprintf(total, sizeof total, "%.3f ms", static_cast<double>(c.kernel_ns) / 1e6);
  return "of " + std::string(total) + " kernel time: " + pct(c.measured_ns) + " measured, " +
         pct(c.same_work_ns) + " same work (exactly inferred), " + pct(c.estimated_ns) +
         " estimated, " + pct(c.not_counted_ns) + " not counted (communication, excluded), " +
         pct(c.none_ns) + " without counted values";
}

}  // namespace flopline::trace
