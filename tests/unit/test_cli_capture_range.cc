// Capture ranges on the way from `flopline run` to the injected library: the options,
// their errors (exit 2, the option named), the variables the child gets, and what the
// library reads back from them.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cli_app.h"
#include "flopline/capture/capture_config.h"
#include "run_command.h"

namespace flopline::cli {
namespace {

using Args = std::vector<std::string>;

capture::GetEnv env_of(const std::map<std::string, std::string>& m) {
  return [m](const char* name) -> const char* {
    const auto it = m.find(name);
    return it == m.end() ? nullptr : it->second.c_str();
  };
}

// The child's variables as a map, from build_run_environment's NAME=VALUE entries.
std::map<std::string, std::string> child_env(const RunOptions& o) {
  RunEnvironment run;
  run.inject_library = "/lib/libflopline_inject.so";
  run.values = o.capture;
  std::map<std::string, std::string> m;
  for (const std::string& e : build_run_environment(Args{}, run)) {
    const auto eq = e.find('=');
    m[e.substr(0, eq)] = e.substr(eq + 1);
  }
  return m;
}

TEST(RunCaptureRange, OptionsReachTheChildAndTheLibraryReadsThem) {
  auto r = parse_run_args(Args{"--capture-range=nvtx", "--nvtx-capture", "step 1*",
                               "--capture-range-end=repeat:3", "--delay", "2.5", "--duration=500ms",
                               "--", "python3", "train.py"});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.value->command, (Args{"python3", "train.py"}));
  const auto env = child_env(*r.value);
  EXPECT_EQ(env.at("FLOPLINE_CAPTURE_RANGE"), "nvtx");
  EXPECT_EQ(env.at("FLOPLINE_NVTX_CAPTURE"), "step 1*");
  EXPECT_EQ(env.at("FLOPLINE_CAPTURE_RANGE_END"), "repeat:3");
  EXPECT_EQ(env.at("FLOPLINE_DELAY"), "2.5");
  EXPECT_EQ(env.at("FLOPLINE_DURATION"), "500ms");
  // What the injected library makes of them.
  const capture::CaptureEnv c = capture::read_capture_env(env_of(env));
  EXPECT_TRUE(c.warnings.empty()) << c.warnings.front();
  EXPECT_EQ(c.windows.range, capture::CaptureRangeKind::kNvtx);
  EXPECT_TRUE(c.windows.nvtx.matches("step 12", ""));
  EXPECT_FALSE(c.windows.nvtx.matches("step 2", ""));
  EXPECT_EQ(c.windows.max_windows, 3u);
  EXPECT_EQ(c.windows.delay_ns, 2'500'000'000);
  EXPECT_EQ(c.windows.duration_ns, 500'000'000);
}

TEST(RunCaptureRange, NothingGivenSetsNothing) {
  auto r = parse_run_args(Args{"--", "ls"});
  ASSERT_TRUE(r.ok()) << r.error;
  const auto env = child_env(*r.value);
  for (const char* v : {"FLOPLINE_CAPTURE_RANGE", "FLOPLINE_NVTX_CAPTURE",
                        "FLOPLINE_CAPTURE_RANGE_END", "FLOPLINE_DELAY", "FLOPLINE_DURATION"}) {
    EXPECT_EQ(env.count(v), 0u) << v;
  }
  EXPECT_FALSE(capture::read_capture_env(env_of(env)).windows.gated());
}

TEST(RunCaptureRange, ProfilerApiWithRepeatAndDurationAlone) {
  auto r = parse_run_args(
      Args{"--capture-range", "cudaProfilerApi", "--capture-range-end", "repeat", "ls"});
  ASSERT_TRUE(r.ok()) << r.error;
  auto c = capture::read_capture_env(env_of(child_env(*r.value)));
  EXPECT_EQ(c.windows.range, capture::CaptureRangeKind::kCudaProfilerApi);
  EXPECT_EQ(c.windows.max_windows, 0u);

  r = parse_run_args(Args{"--duration", "30", "ls"});
  ASSERT_TRUE(r.ok()) << r.error;
  c = capture::read_capture_env(env_of(child_env(*r.value)));
  EXPECT_EQ(c.windows.range, capture::CaptureRangeKind::kNone);
  EXPECT_EQ(c.windows.duration_ns, 30'000'000'000);
  EXPECT_TRUE(c.windows.gated());

  // An '@' in the name reaches the library as written.
  r = parse_run_args(Args{"--capture-range=nvtx", "--nvtx-capture=loss\\@scale@amp", "ls"});
  ASSERT_TRUE(r.ok()) << r.error;
  c = capture::read_capture_env(env_of(child_env(*r.value)));
  EXPECT_TRUE(c.windows.nvtx.matches("loss@scale", "amp"));
}

TEST(RunCaptureRange, BadValuesNameTheirOption) {
  struct Bad {
    Args args;
    const char* says;
  };
  for (const Bad& b : std::vector<Bad>{
           {{"--capture-range=hotkey", "ls"}, "--capture-range: 'hotkey'"},
           {{"--capture-range=nvtx", "ls"}, "--capture-range: nvtx needs --nvtx-capture"},
           {{"--nvtx-capture=step", "ls"}, "--nvtx-capture: needs --capture-range=nvtx"},
           {{"--capture-range=nvtx", "--nvtx-capture=step@", "ls"}, "--nvtx-capture: 'step@'"},
           {{"--capture-range=nvtx", "--nvtx-capture=", "ls"}, "--nvtx-capture needs a value"},
           {{"--capture-range-end=repeat", "ls"}, "--capture-range-end: needs --capture-range"},
           {{"--capture-range=cudaProfilerApi", "--capture-range-end=repeat:0", "ls"},
            "--capture-range-end: 'repeat:0'"},
           {{"--capture-range=cudaProfilerApi", "--capture-range-end=sometimes", "ls"},
            "--capture-range-end: 'sometimes'"},
           {{"--delay=-1", "ls"}, "--delay: '-1'"},
           {{"--delay", "soon", "ls"}, "--delay: 'soon'"},
           {{"--duration=0", "ls"}, "--duration: '0'"},
           {{"--duration"}, "--duration needs a value"},
       }) {
    const auto r = parse_run_args(b.args);
    ASSERT_FALSE(r.ok()) << b.says;
    EXPECT_NE(r.error.find(b.says), std::string::npos) << r.error;
  }
}

TEST(RunCaptureRange, ABadValueExits2BeforeAnythingRuns) {
  std::ostringstream out, err;
  EXPECT_EQ(run_cli(Args{"run", "--capture-range=nvtx", "--nvtx-capture=a\\b", "--",
                         "flopline-no-such-command-xyz"},
                    out, err),
            kExitUsage);
  EXPECT_NE(err.str().find("--nvtx-capture: 'a\\b' has '\\b', which is no escape"),
            std::string::npos)
      << err.str();
  // Refused before the command is looked up.
  EXPECT_EQ(err.str().find("command not found"), std::string::npos) << err.str();
}

TEST(RunCaptureRange, HelpListsTheOptions) {
  std::ostringstream out, err;
  EXPECT_EQ(run_cli(Args{"run", "--help"}, out, err), kExitOk);
  for (const char* o : {"--capture-range=KIND", "cudaProfilerApi", "--nvtx-capture=NAME[@DOMAIN]",
                        "--capture-range-end=stop|repeat[:N]", "--delay T", "--duration T"}) {
    EXPECT_NE(out.str().find(o), std::string::npos) << o;
  }
}

TEST(CaptureEnvWindows, BadVariablesWarnAndRecordTheWholeRun) {
  auto e = capture::read_capture_env(env_of({{"FLOPLINE_CAPTURE_RANGE", "nvtx"}}));
  EXPECT_FALSE(e.windows.gated());
  ASSERT_EQ(e.warnings.size(), 1u);
  EXPECT_EQ(e.warnings[0],
            "FLOPLINE_CAPTURE_RANGE: nvtx needs FLOPLINE_NVTX_CAPTURE=NAME[@DOMAIN] (the ranges "
            "that open windows); recording the whole run");
  e = capture::read_capture_env(env_of({{"FLOPLINE_DURATION", "-5"}}));
  EXPECT_FALSE(e.windows.gated());
  ASSERT_EQ(e.warnings.size(), 1u);
  EXPECT_EQ(e.warnings[0].rfind("FLOPLINE_DURATION: '-5'", 0), 0u) << e.warnings[0];
  e = capture::read_capture_env(
      env_of({{"FLOPLINE_CAPTURE_RANGE", "cudaProfilerApi"}, {"FLOPLINE_DELAY", "1m"}}));
  EXPECT_TRUE(e.warnings.empty());
  EXPECT_EQ(e.windows.range, capture::CaptureRangeKind::kCudaProfilerApi);
  EXPECT_EQ(e.windows.delay_ns, 60'000'000'000);
  // Empty variables are unset ones.
  e = capture::read_capture_env(env_of({{"FLOPLINE_CAPTURE_RANGE", ""}, {"FLOPLINE_DELAY", ""}}));
  EXPECT_TRUE(e.warnings.empty());
  EXPECT_FALSE(e.windows.gated());
}

}  // namespace
}  // namespace flopline::cli
