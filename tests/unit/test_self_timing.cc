// flopline's own timing (FLOPLINE_SELF_TIMING): what is counted, and the report.
#include "flopline/capture/self_timing.h"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "flopline/capture/capture_config.h"

namespace flopline::capture {
namespace {

TEST(SelfTiming, TimersCountOnlyWhileOn) {
  const SelfTotals before = self_timing_totals();
  set_self_timing(false);
  { const SelfTimer t(SelfPart::kAppend); }
  EXPECT_EQ(self_timing_totals()[static_cast<int>(SelfPart::kAppend)].count,
            before[static_cast<int>(SelfPart::kAppend)].count);
  set_self_timing(true);
  {
    const SelfTimer t(SelfPart::kAppend);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  set_self_timing(false);
  const SelfPartTotal after = self_timing_totals()[static_cast<int>(SelfPart::kAppend)];
  const SelfPartTotal was = before[static_cast<int>(SelfPart::kAppend)];
  EXPECT_EQ(after.count, was.count + 1);
  EXPECT_GE(after.ns - was.ns, 2'000'000u);  // the sleep is inside
  EXPECT_GE(after.max_ns, 2'000'000u);
}

TEST(SelfTiming, ThreadsAddUpAndTheMaximumIsKept) {
  const SelfPartTotal was = self_timing_totals()[static_cast<int>(SelfPart::kDecode)];
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      for (int i = 1; i <= 1000; ++i)
        add_self_time(SelfPart::kDecode, static_cast<std::uint64_t>(i + t));
    });
  }
  for (std::thread& t : threads) t.join();
  const SelfPartTotal now = self_timing_totals()[static_cast<int>(SelfPart::kDecode)];
  EXPECT_EQ(now.count - was.count, 4000u);
  // sum over t of (1..1000) + 1000 t = 4 * 500500 + 1000 * (0 + 1 + 2 + 3)
  EXPECT_EQ(now.ns - was.ns, 4u * 500500u + 6000u);
  EXPECT_GE(now.max_ns, 1003u);
}

TEST(SelfTiming, ResetStartsFromZero) {
  add_self_time(SelfPart::kBufferRequest, 10);
  reset_self_timing();
  for (const SelfPartTotal& t : self_timing_totals()) {
    EXPECT_EQ(t.count, 0u);
    EXPECT_EQ(t.ns, 0u);
    EXPECT_EQ(t.max_ns, 0u);
  }
}

TEST(SelfTiming, ReportNamesEachPartThatRan) {
  SelfTotals t{};
  t[static_cast<int>(SelfPart::kCallback)] = {1'234'567, 1'234'567ull * 95, 8'100};
  t[static_cast<int>(SelfPart::kAppend)] = {2, 5'000'000'000, 3'000'000'000};
  EXPECT_EQ(format_self_timing(t, 42),
            (std::vector<std::string>{"callbacks: 1,234,567 x 95 ns = 117.3 ms (max 8.1 us)",
                                      "appends to the file: 2 x 2.50 s = 5.00 s (max 3.00 s)",
                                      "each figure includes the timing itself: 42 ns a run"}));
  EXPECT_EQ(format_self_timing(SelfTotals{}, 42), std::vector<std::string>{"nothing timed"});
  SelfTotals counters{};
  counters[static_cast<int>(SelfPart::kCounterLaunch)] = {3, 3'000, 1'500};
  EXPECT_EQ(
      format_self_timing(counters, 42)[0],
      "counters at launches not measured (within callbacks): 3 x 1.0 us = 3.0 us (max 1.5 us)");
}

TEST(SelfTiming, EnvironmentTurnsItOn) {
  EXPECT_TRUE(parse_self_timing("1"));
  EXPECT_TRUE(parse_self_timing("on"));
  EXPECT_FALSE(parse_self_timing("0"));
  EXPECT_FALSE(parse_self_timing(""));
  EXPECT_FALSE(parse_self_timing(nullptr));
  const CaptureEnv env = read_capture_env([](const char* n) -> const char* {
    return std::string_view(n) == "FLOPLINE_SELF_TIMING" ? "1" : nullptr;
  });
  EXPECT_TRUE(env.self_timing);
  EXPECT_FALSE(read_capture_env([](const char*) -> const char* { return nullptr; }).self_timing);
}

TEST(SelfTiming, TimerCostIsMeasured) {
  // A pair of clock reads (0 where the clock is coarser than they are apart), never a
  // millisecond.
  EXPECT_LT(self_timer_cost_ns(), 1'000'000u);
}

}  // namespace
}  // namespace flopline::capture
