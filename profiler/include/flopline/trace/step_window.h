// The window a trace's training steps span: the CPU slices (NVTX ranges, torch.profiler's
// ProfilerStep#N) whose names match a pattern such as "step *", in start order, with the
// first few (warm-up) left out. Used by `flopline stats --report breakdown --steps`.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flopline/trace/model.h"

namespace flopline::trace {

// A glob over bytes: '*' matches any run (the empty one too), '?' one byte, every other
// byte itself. Linear in practice (the classic backtracking of one star).
bool glob_match(std::string_view name, std::string_view pattern);

struct StepWindow {
  TimeNs begin = 0;         // the first kept step's start
  TimeNs end = 0;           // the latest end of the kept steps
  std::size_t steps = 0;    // kept
  std::size_t skipped = 0;  // left out at the start
};

// Slices on CPU thread tracks whose name matches `pattern`; none when fewer than
// `skip` + 1 match.
std::optional<StepWindow> step_window(const Trace& t, std::string_view pattern, std::size_t skip);

struct Step {
  std::string name;
  TimeNs begin = 0;
  TimeNs end = 0;
};
// The kept steps themselves, by start (empty when fewer than `skip` + 1 match).
std::vector<Step> steps_of(const Trace& t, std::string_view pattern, std::size_t skip);

}  // namespace flopline::trace
