// Step windows: the glob, the span of the matching CPU slices with warm-up steps left
// out, and `flopline stats --steps` on a trace whose backward kernels run on another
// thread than the step ranges (they count: the window is time, not ownership).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_parse.h"
#include "cli_test_util.h"
#include "flopline/trace/builder.h"
#include "flopline/trace/step_window.h"

namespace flopline::trace {
namespace {

TEST(GlobMatch, StarsQuestionMarksAndLiterals) {
  EXPECT_TRUE(glob_match("step 12", "step *"));
  EXPECT_TRUE(glob_match("ProfilerStep#3", "ProfilerStep#*"));
  EXPECT_TRUE(glob_match("step 1", "step ?"));
  EXPECT_FALSE(glob_match("step 12", "step ?"));
  EXPECT_TRUE(glob_match("anything", "*"));
  EXPECT_TRUE(glob_match("", "*"));
  EXPECT_FALSE(glob_match("", "?"));
  EXPECT_TRUE(glob_match("a_b_c", "a*c"));
  EXPECT_TRUE(glob_match("abcbcd", "a*bcd"));  // the star must give back what it took
  EXPECT_FALSE(glob_match("forward", "step *"));
  EXPECT_FALSE(glob_match("step 1x", "step 1"));
  // Long inputs stay fast: no exponential backtracking with several stars.
  const std::string long_name(100000, 'a');
  EXPECT_FALSE(glob_match(long_name, "*a*a*a*a*b"));
}

TEST(StepWindow, SpanOfTheKeptStepsOnCpuThreads) {
  Trace t;
  TraceBuilder b(t);
  const std::uint32_t cpu = b.track(b.process(100), 100);
  const std::uint32_t gpu = b.track(b.process(0), 7, TrackKind::kGpuStream);
  for (int i = 0; i < 4; ++i) {
    b.add_slice(cpu, Slice{i * 1000, 900, t.strings.intern("step " + std::to_string(i)),
                           t.strings.intern("user_annotation"), kNoArgs, kNone});
  }
  // A GPU twin with the same name is not a step of its own.
  b.add_slice(gpu, Slice{0, 5000, t.strings.intern("step 0"),
                         t.strings.intern("gpu_user_annotation"), kNoArgs, kNone});
  b.finalize();
  const auto all = step_window(t, "step *", 0);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->begin, 0);
  EXPECT_EQ(all->end, 3900);
  EXPECT_EQ(all->steps, 4u);
  const auto warm = step_window(t, "step *", 2);
  ASSERT_TRUE(warm);
  EXPECT_EQ(warm->begin, 2000);
  EXPECT_EQ(warm->steps, 2u);
  EXPECT_EQ(warm->skipped, 2u);
  EXPECT_FALSE(step_window(t, "step *", 4));
  EXPECT_FALSE(step_window(t, "epoch *", 0));
}

}  // namespace
}  // namespace flopline::trace

namespace flopline::cli {
namespace {

using ::flopline::cli::testing::CliRun;
using ::flopline::cli::testing::run_flopline;

// Steps 0-2 on the main thread (tid 1), each 1000 us; the forward kernel of each step
// launched in it and a backward kernel from another thread (tid 2) later in the step;
// a kernel after the last step.
constexpr const char* kSteps = R"({"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"step 0","pid":1,"tid":1,"ts":0,"dur":1000},
{"ph":"X","cat":"user_annotation","name":"step 1","pid":1,"tid":1,"ts":1000,"dur":1000},
{"ph":"X","cat":"user_annotation","name":"step 2","pid":1,"tid":1,"ts":2000,"dur":1000},
{"ph":"X","cat":"kernel","name":"fwd","pid":0,"tid":7,"ts":100,"dur":100},
{"ph":"X","cat":"kernel","name":"bwd","pid":0,"tid":7,"ts":500,"dur":200},
{"ph":"X","cat":"kernel","name":"fwd","pid":0,"tid":7,"ts":1100,"dur":100},
{"ph":"X","cat":"kernel","name":"bwd","pid":0,"tid":7,"ts":1500,"dur":200},
{"ph":"X","cat":"kernel","name":"fwd","pid":0,"tid":7,"ts":2100,"dur":100},
{"ph":"X","cat":"kernel","name":"bwd","pid":0,"tid":7,"ts":2500,"dur":200},
{"ph":"X","cat":"kernel","name":"eval","pid":0,"tid":7,"ts":5000,"dur":50}
]})";

class StatsSteps : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("flopline_test_steps_" + std::to_string(::getpid()) + ".json"))
                .string();
    std::ofstream(path_) << kSteps;
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::string path_;
};

TEST_F(StatsSteps, OnlyWorkInsideTheKeptStepsCounts) {
  const CliRun t = run_flopline({"stats", path_, "--steps", "step *", "--skip-first", "1"});
  ASSERT_EQ(t.rc, kExitOk) << t.err;
  EXPECT_NE(t.out.find("Steps:      2 matching 'step *' after the first 1"), std::string::npos)
      << t.out;
  // bwd and fwd of steps 1 and 2; nothing of step 0, not the eval kernel.
  EXPECT_NE(t.out.find("Total: 600,000 ns in 4 slices, 2 rows"), std::string::npos) << t.out;
  const CliRun b =
      run_flopline({"stats", path_, "--report", "breakdown", "--steps", "step *", "--json"});
  ASSERT_EQ(b.rc, kExitOk) << b.err;
  EXPECT_NE(b.out.find(R"("window_begin_ns":0,"window_ns":3000000,"compute_ns":900000,)"),
            std::string::npos)
      << b.out;
}

// --per-step: one breakdown row per kept step, each over its own span.
TEST_F(StatsSteps, BreakdownStepByStep) {
  const CliRun t = run_flopline(
      {"stats", path_, "--report", "breakdown", "--steps", "step *", "--per-step", "--csv"});
  ASSERT_EQ(t.rc, kExitOk) << t.err;
  // Each step: 1000 us, fwd 100 + bwd 200 of compute, the rest idle (no launch flows).
  for (int i = 0; i < 3; ++i) {
    const std::string line = ",," + std::string("0,") + std::to_string(i * 1000000) +
                             ",1000000,300000,0,0,700000,0,0,700000,0,0,2,,,step " +
                             std::to_string(i) + ",,\n";
    EXPECT_NE(t.out.find(line), std::string::npos) << line << t.out;
  }
  const CliRun table = run_flopline({"stats", path_, "--report", "breakdown", "--steps", "step *",
                                     "--per-step", "--skip-first", "2"});
  ASSERT_EQ(table.rc, kExitOk) << table.err;
  EXPECT_NE(table.out.find("Time breakdown per rank and GPU and step"), std::string::npos);
  EXPECT_NE(table.out.find("    -    0  step 2    1,000,000       30.0"), std::string::npos)
      << table.out;
  EXPECT_EQ(table.out.find("step 1 "), std::string::npos) << table.out;
  EXPECT_EQ(run_flopline({"stats", path_, "--per-step"}).rc, kExitUsage);
  EXPECT_EQ(run_flopline({"stats", path_, "--steps", "step *", "--per-step"}).rc, kExitUsage);
}

TEST_F(StatsSteps, PatternsThatMatchTooLittleAndBadLines) {
  const CliRun none = run_flopline({"stats", path_, "--steps", "epoch *"});
  EXPECT_EQ(none.rc, kExitFailure);
  EXPECT_NE(none.err.find("--steps 'epoch *' matches no CPU slice in "), std::string::npos)
      << none.err;
  const CliRun few = run_flopline({"stats", path_, "--steps", "step *", "--skip-first", "3"});
  EXPECT_EQ(few.rc, kExitFailure);
  EXPECT_NE(few.err.find("matches fewer than 4 CPU slices (--skip-first 3)"), std::string::npos)
      << few.err;
  EXPECT_EQ(run_flopline({"stats", path_, "--skip-first", "2"}).rc, kExitUsage);
  EXPECT_EQ(run_flopline({"stats", path_, "--steps", "step *", "--range", "0:1ms"}).rc, kExitUsage);
  EXPECT_EQ(run_flopline({"stats", path_, "--steps", "step *", "--skip-first", "-1"}).rc,
            kExitUsage);
}

}  // namespace
}  // namespace flopline::cli
