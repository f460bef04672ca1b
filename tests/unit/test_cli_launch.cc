// `flopline launch`, `start` and `stop` on the command line: launch's options become an
// ondemand capture range, the child learns its control directory, and start/stop parse
// their run selector and --wait.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "control_command.h"
#include "run_command.h"

namespace flopline::cli {
namespace {

using Args = std::vector<std::string>;

TEST(CliLaunch, OptionsBecomeAnOndemandRange) {
  auto p = parse_launch_args(Args{"-o", "t.json", "--capture-range-end=repeat:2", "--", "a.out"});
  ASSERT_TRUE(p.ok()) << p.error;
  EXPECT_EQ(p.value->capture[capture::CaptureOptionId::kCaptureRange], "ondemand");
  EXPECT_EQ(p.value->capture[capture::CaptureOptionId::kCaptureRangeEnd], "repeat:2");
  EXPECT_EQ(p.value->command, Args{"a.out"});
  EXPECT_TRUE(parse_launch_args(Args{"--capture-range=onDemand", "a.out"}).ok());
  p = parse_launch_args(Args{"--capture-range=nvtx", "--nvtx-capture=x", "a.out"});
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error.find("flopline run takes the other capture ranges"), std::string::npos);
  p = parse_launch_args(Args{"--nvtx-capture=x", "a.out"});
  EXPECT_FALSE(p.ok());
  EXPECT_FALSE(parse_launch_args(Args{}).ok());  // no command
  p = parse_launch_args(Args{"--help"});
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(p.value->help);
  EXPECT_NE(launch_usage().find("flopline start"), std::string::npos);
}

TEST(CliLaunch, TheChildGetsItsControlDirectory) {
  RunEnvironment run;
  run.inject_library = "/lib/libflopline_inject.so";
  run.values[capture::CaptureOptionId::kControlDir] = "/tmp/flopline-runs-1/abc-1";
  const std::vector<std::string> env = build_run_environment({}, run);
  EXPECT_NE(std::find(env.begin(), env.end(), "FLOPLINE_CONTROL_DIR=/tmp/flopline-runs-1/abc-1"),
            env.end());
  run.values[capture::CaptureOptionId::kControlDir].clear();
  for (const std::string& e : build_run_environment({}, run)) {
    EXPECT_NE(e.rfind("FLOPLINE_CONTROL_DIR=", 0), 0u) << e;
  }
}

TEST(CliLaunch, StartAndStopArguments) {
  auto p = parse_control_args(Args{});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p.value->run, "");
  EXPECT_EQ(p.value->wait_ns, 10'000'000'000);
  p = parse_control_args(Args{"4711", "--wait=500ms"});
  ASSERT_TRUE(p.ok()) << p.error;
  EXPECT_EQ(p.value->run, "4711");
  EXPECT_EQ(p.value->wait_ns, 500'000'000);
  EXPECT_EQ(parse_control_args(Args{"--wait", "0"}).value->wait_ns, 0);
  EXPECT_FALSE(parse_control_args(Args{"--wait", "-1"}).ok());
  EXPECT_FALSE(parse_control_args(Args{"a", "b"}).ok());
  EXPECT_FALSE(parse_control_args(Args{"--session=x"}).ok());
  EXPECT_NE(control_usage(capture::ControlVerb::kStop).find("usage: flopline stop [RUN]"),
            std::string::npos);
}

}  // namespace
}  // namespace flopline::cli
