// Step windows by name pattern; see step_window.h.
#include "flopline/trace/step_window.h"

#include <algorithm>
#include <vector>

#include "flopline/trace/types.h"

namespace flopline::trace {

bool glob_match(std::string_view name, std::string_view pattern) {
  std::size_t n = 0, p = 0;
  std::size_t star = std::string_view::npos, resume = 0;
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++n;
      ++p;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::optional<StepWindow> step_window(const Trace& t, std::string_view pattern, std::size_t skip) {
  std::vector<std::pair<TimeNs, TimeNs>> steps;
  for (const Track& track : t.tracks) {
    if (track.kind != TrackKind::kThread) continue;
    for (const auto& row : track.rows) {
      for (const Slice& s : row) {
        if (glob_match(t.str(s.name), pattern))
          steps.emplace_back(s.start, add_saturating(s.start, std::max<TimeNs>(0, s.dur)));
      }
    }
  }
  if (steps.size() <= skip) return std::nullopt;
  std::sort(steps.begin(), steps.end());
  StepWindow w;
  w.skipped = skip;
  w.steps = steps.size() - skip;
  w.begin = steps[skip].first;
  w.end = steps[skip].second;
  for (std::size_t i = skip; i < steps.size(); ++i) w.end = std::max(w.end, steps[i].second);
  return w;
}

}  // namespace flopline::trace
