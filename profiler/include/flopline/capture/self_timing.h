// flopline's own time, by part (FLOPLINE_SELF_TIMING=1): how many times each part of the
// capture ran, for how long in all and at most once, so that the cost of recording a
// program can be traced to where it is spent. Off by default: each timed part then
// costs one relaxed atomic load.
//
// Parts and the threads they run on: the runtime/driver callback (the program's own
// threads, at every recorded call's entry and exit), CUPTI's buffer requests (mostly
// the program's threads, when a buffer fills) and completions (CUPTI's thread), the
// decoder thread's work, and the appends of the trace written while the program runs;
// under --counters, the counter profiler's share of the callbacks, apart.
#pragma once

#include <time.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace flopline::capture {

enum class SelfPart : int {
  kCallback,
  kBufferRequest,
  kBufferComplete,
  kDecode,
  kAppend,
  // Within kCallback, under --counters: the counter profiler's work at a launch it does not
  // measure (its work key and the shared launch lock), and at one it measures (configuring,
  // Start, Stop and reading the values, not the replay inside the launch call).
  kCounterLaunch,
  kCounterMeasured,
  kCount
};
inline constexpr int kSelfParts = static_cast<int>(SelfPart::kCount);

const char* to_string(SelfPart p);  // "callbacks", "buffer requests", ...

struct SelfPartTotal {
  std::uint64_t count = 0;
  std::uint64_t ns = 0;
  std::uint64_t max_ns = 0;
};
using SelfTotals = std::array<SelfPartTotal, kSelfParts>;

// Turns timing on or off for the process (FLOPLINE_SELF_TIMING, read by the capture).
void set_self_timing(bool on);
bool self_timing_on();

// Adds one run of `part` that took `ns`.
void add_self_time(SelfPart part, std::uint64_t ns);

SelfTotals self_timing_totals();

// Back to zero (a forked child: its parent's time is the parent's to report).
void reset_self_timing();

// One line per part that ran, "PART: COUNT x MEAN = TOTAL (max MAX)", and a last line
// with what one timing itself costs (`timer_ns`, two clock reads), which each part's
// figure includes; "nothing timed" alone when no part ran.
std::vector<std::string> format_self_timing(const SelfTotals& totals, std::uint64_t timer_ns);

// Times its scope as one run of `part` when timing is on.
class SelfTimer {
 public:
  explicit SelfTimer(SelfPart part) : part_(part), on_(self_timing_on()) {
    if (on_) start_ = now_ns();
  }
  ~SelfTimer() {
    if (on_) add_self_time(part_, now_ns() - start_);
  }
  SelfTimer(const SelfTimer&) = delete;
  SelfTimer& operator=(const SelfTimer&) = delete;

  static std::uint64_t now_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
           static_cast<std::uint64_t>(ts.tv_nsec);
  }

 private:
  SelfPart part_;
  bool on_;
  std::uint64_t start_ = 0;
};

// What one timing costs here: the fastest of 1000 back-to-back pairs of clock reads.
std::uint64_t self_timer_cost_ns();

// The FLOPLINE_SELF_TIMING value: "1", "on", "yes", "true" -> true; anything else false.
bool parse_self_timing(const char* value);

}  // namespace flopline::capture
