// What changed between two runs: the rows of two `flopline stats` summaries (kernels by
// name, or operators by name) matched by name, each change classified and sorted by
// its effect on time (docs/DIFF.md). A pure function over two row lists.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "flopline/trace/analysis.h"

namespace flopline::trace {

enum class DiffKind : std::uint8_t {
  kNew,               // only in B
  kRemoved,           // only in A
  kPrecisionChanged,  // both carry a precision and they differ (a TF32 fallback to FP32)
  kMoreWork,          // FLOPs per call grew (both known)
  kLessWork,          // FLOPs per call shrank
  kMoreCalls,         // the same work per call, called more often
  kFewerCalls,        // called less often
  kSlower,            // the same work per call and as many calls, longer per call
  kFaster,            // shorter per call
  kSame,              // within the tolerances
};
const char* to_string(DiffKind k);  // "new", "removed", "precision changed", ...

struct DiffTolerances {
  double work_pct = 1.0;  // FLOPs per call further apart than this are other work
  double time_pct = 2.0;  // time per call further apart than this is another speed
};

struct DiffRow {
  std::string name;
  std::optional<StatsRow> a, b;
  DiffKind kind = DiffKind::kSame;
  TimeNs delta_ns = 0;                 // B's total time - A's (saturating)
  std::optional<double> delta_pct;     // of A's total time, when A has the row
  std::optional<double> per_call_pct;  // time per call, B against A (%)
  std::optional<double> work_pct;      // FLOPs per call, B against A (%)
};

// Every name in either list, by |delta_ns| (largest first, then name).
std::vector<DiffRow> diff_rows(const std::vector<StatsRow>& a, const std::vector<StatsRow>& b,
                               const DiffTolerances& tol = {});

}  // namespace flopline::trace
