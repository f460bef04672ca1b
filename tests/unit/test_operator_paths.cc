// Operators by name path: the same operator name under two parents stays two rows, and
// `flopline diff --by path` tells a change in one place from the other.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cli_parse.h"
#include "cli_test_util.h"
#include "flopline/trace/chrome_reader.h"
#include "flopline/trace/operator_paths.h"

namespace flopline::trace {

// "linear" inside "attention" and inside "mlp", each launching one kernel (flows by
// correlation); "mlp"'s linear takes `mlp_us`.
static std::string model_trace(int mlp_us) {
  return R"({"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"attention","pid":1,"tid":1,"ts":0,"dur":200},
{"ph":"X","cat":"user_annotation","name":"linear","pid":1,"tid":1,"ts":10,"dur":50},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":20,"dur":5,"args":{"correlation":1}},
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":100,"dur":100,"args":{"correlation":1}},
{"ph":"X","cat":"user_annotation","name":"mlp","pid":1,"tid":1,"ts":250,"dur":50},
{"ph":"X","cat":"user_annotation","name":"linear","pid":1,"tid":1,"ts":260,"dur":30},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":270,"dur":5,"args":{"correlation":2}},
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":300,"dur":)" +
         std::to_string(mlp_us) + R"(,"args":{"correlation":2}},
{"ph":"s","id":1,"pid":1,"tid":1,"ts":20,"cat":"ac2g","name":"ac2g"},
{"ph":"f","id":1,"pid":0,"tid":7,"ts":100,"cat":"ac2g","name":"ac2g","bp":"e"},
{"ph":"s","id":2,"pid":1,"tid":1,"ts":270,"cat":"ac2g","name":"ac2g"},
{"ph":"f","id":2,"pid":0,"tid":7,"ts":)" +
         std::to_string(300) + R"(,"cat":"ac2g","name":"ac2g","bp":"e"}
]})";
}

namespace {

TEST(OperatorPaths, TheSameNameUnderTwoParentsIsTwoRows) {
  ReadResult r = read_chrome_trace_text(model_trace(100), "model.json");
  ASSERT_TRUE(r.ok());
  OperatorPathRows rows;
  rows.add(r.trace);
  const auto out = rows.finish();
  std::vector<std::string> names;
  for (const StatsRow& row : out) names.push_back(row.name + "=" + std::to_string(row.total_ns));
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"attention / linear=100000", "attention=100000",
                                             "mlp / linear=100000", "mlp=100000"}));
}

}  // namespace
}  // namespace flopline::trace

namespace flopline::cli {
namespace {

using ::flopline::cli::testing::CliRun;
using ::flopline::cli::testing::run_flopline;

TEST(DiffByPath, AChangeInOnePlaceIsNotBlurredWithTheOther) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("flopline_test_paths_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string a = (dir / "a.json").string(), b = (dir / "b.json").string();
  std::ofstream(a) << trace::model_trace(100);
  std::ofstream(b) << trace::model_trace(250);  // only the mlp's linear got slower
  const CliRun path = run_flopline({"diff", a, b, "--by", "path", "--csv"});
  ASSERT_EQ(path.rc, kExitOk) << path.err;
  EXPECT_NE(path.out.find("mlp / linear,slower,1,1,100000,250000,150000,150,"), std::string::npos)
      << path.out;
  EXPECT_NE(path.out.find("attention / linear,same,1,1,100000,100000,0,0,"), std::string::npos)
      << path.out;
  // By name the two linears are one row, half of it slower.
  const CliRun name = run_flopline({"diff", a, b, "--by", "op", "--csv"});
  EXPECT_NE(name.out.find("linear,slower,2,2,200000,350000,150000,75,"), std::string::npos)
      << name.out;
  EXPECT_EQ(run_flopline({"diff", a, b, "--by", "stream"}).rc, kExitUsage);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace flopline::cli
