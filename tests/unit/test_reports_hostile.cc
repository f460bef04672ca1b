// Hostile inputs to the multi-rank reports: collective args of the wrong type or out of
// range, durations near the end of time, a flow to nowhere, names with control bytes.
// Every report must finish with exit 0 and sane numbers, never crash or wrap.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_parse.h"
#include "cli_test_util.h"
#include "flopline/trace/chrome_reader.h"
#include "flopline/trace/collective_waits.h"
#include "flopline/trace/collectives.h"
#include "flopline/trace/time_breakdown.h"

namespace flopline::cli {
namespace {

using ::flopline::cli::testing::CliRun;
using ::flopline::cli::testing::run_flopline;

constexpr const char* kHostile = R"json({"distributedInfo":{"rank":"zero"},"traceEvents":[
{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce","pid":0,"tid":1,"ts":0,"dur":10,
 "args":{"collective":"AllReduce","collective message bytes":"lots"}},
{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce","pid":0,"tid":1,"ts":20,"dur":10,
 "args":{"collective":"AllReduce","collective message bytes":-5}},
{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce","pid":0,"tid":1,"ts":40,"dur":10,
 "args":{"collective":"AllReduce","collective message bytes":1e30,"collective ranks":1e30}},
{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce","pid":0,"tid":1,"ts":60,"dur":10,
 "args":{"collective":"Teleport","collective message bytes":8}},
{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllGather","pid":0,"tid":1,"ts":80,"dur":0,
 "args":{"collective":"AllGather","collective message bytes":8,"collective ranks":0,
 "collective communicator":12}},
{"ph":"X","cat":"kernel","name":"k\u001b[2J","pid":0,"tid":1,"ts":100,"dur":9223372036854775},
{"ph":"X","cat":"kernel","name":"late","pid":0,"tid":2,"ts":9223372036854775,"dur":9223372036854775},
{"ph":"X","cat":"kernel","name":"early","pid":0,"tid":3,"ts":-9223372036854775,"dur":5},
{"ph":"X","cat":"user_annotation","name":"","pid":5,"tid":5,"ts":0,"dur":50},
{"ph":"s","id":1,"pid":5,"tid":5,"ts":1,"cat":"ac2g","name":"launch"},
{"ph":"f","id":1,"pid":0,"tid":99,"ts":2,"cat":"ac2g","name":"launch","bp":"e"}
]})json";

class ReportsHostile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("flopline_test_hostile_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    a_ = (dir_ / "a.json").string();
    b_ = (dir_ / "b.json").string();
    std::ofstream(a_) << kHostile;
    std::ofstream(b_) << kHostile;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
  std::string a_, b_;
};

TEST_F(ReportsHostile, EveryReportFinishesAndStaysSane) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"stats", a_, b_},
           {"stats", a_, b_, "--json"},
           {"stats", a_, b_, "--report", "breakdown"},
           {"stats", a_, b_, "--report", "breakdown", "--json"},
           {"stats", a_, "--report", "overview"},
           {"stats", a_, "--names", "base"},
           {"diff", a_, b_},
           {"diff", a_, b_, "--json", "--names", "base"},
       }) {
    const CliRun r = run_flopline(args);
    SCOPED_TRACE(args[1] + " " + (args.size() > 3 ? args[3] : std::string()));
    EXPECT_EQ(r.rc, kExitOk) << r.err;
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << "a control byte reached the terminal";
    EXPECT_EQ(r.out.find("-9223372036854775808"), std::string::npos) << r.out;
  }
  // Only the sane collective counts: the 8-byte AllGather (ranks 0 means unknown).
  const CliRun j = run_flopline({"stats", a_, "--json"});
  EXPECT_NE(
      j.out.find(R"("collectives":[{"collective":"AllGather","message_bytes":8,"ranks":null)"),
      std::string::npos)
      << j.out;
  // A communicator that is not a string is none: nothing to match across the two files.
  EXPECT_EQ(j.out.find("collective_waits"), std::string::npos) << j.out;
}

TEST_F(ReportsHostile, BreakdownSaturatesInsteadOfWrapping) {
  trace::ReadResult r = trace::read_chrome_trace_file(a_);
  ASSERT_TRUE(r.ok());
  for (const trace::DeviceBreakdown& b : trace::time_breakdown(r.trace)) {
    EXPECT_GE(b.compute_ns, 0);
    EXPECT_GE(b.idle_ns, 0);
    EXPECT_GE(b.window_ns(), 0);
    EXPECT_LE(b.idle_host_ns + b.idle_queued_ns, b.idle_ns);
  }
}

}  // namespace
}  // namespace flopline::cli
