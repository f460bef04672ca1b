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

std::vector<Step> steps_of(const Trace& t, std::string_view pattern, std::size_t skip) {
  std::vector<Step> steps;
  for (const Track& track : t.tracks) {
    if (track.kind != TrackKind::kThread) continue;
    for (const auto& row : track.rows) {
      for (const Slice& s : row) {
        const std::string_view name = t.str(s.name);
        if (glob_match(name, pattern))
          steps.push_back(Step{std::string(name), s.start,
                               add_saturating(s.start, std::max<TimeNs>(0, s.dur))});
      }
    }
  }
  if (steps.size() <= skip) return {};
  std::stable_sort(steps.begin(), steps.end(),
                   [](const Step& a, const Step& b) { return a.begin < b.begin; });
  steps.erase(steps.begin(), steps.begin() + static_cast<std::ptrdiff_t>(skip));
  return steps;
}

std::optional<StepWindow> step_window(const Trace& t, std::string_view pattern, std::size_t skip) {
  const std::vector<Step> steps = steps_of(t, pattern, skip);
  if (steps.empty()) return std::nullopt;
  StepWindow w;
  w.skipped = skip;
  w.steps = steps.size();
  w.begin = steps.front().begin;
  w.end = steps.front().end;
  for (const Step& s : steps) w.end = std::max(w.end, s.end);
  return w;
}

}  // namespace flopline::trace
