// On-demand recording (docs/CAPTURE.md, "On demand"): the window machine's commands
// (CaptureWindow::command), and run_control.h's files, run lookup and command checks on
// synthetic run directories.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "flopline/capture/capture_window.h"
#include "flopline/capture/run_control.h"

namespace flopline::capture {
namespace {

constexpr TimeNs kSec = 1'000'000'000;

CaptureWindowSetting parsed(const CaptureWindowText& text) {
  std::string error;
  const auto s = parse_capture_window_setting(text, {}, &error);
  EXPECT_TRUE(s) << error;
  return s.value_or(CaptureWindowSetting{});
}

CaptureWindow started(const CaptureWindowSetting& s, TimeNs origin = 0) {
  CaptureWindow w(s, origin);
  w.tick(origin);
  return w;
}

// --- the machine ------------------------------------------------------------------------

TEST(OnDemandWindows, OndemandParsesAndRecordsEveryWindowByDefault) {
  std::string error;
  EXPECT_EQ(parse_capture_range("ondemand", &error), CaptureRangeKind::kOnDemand);
  EXPECT_EQ(parse_capture_range("onDemand", &error), CaptureRangeKind::kOnDemand);
  const CaptureWindowSetting s = parsed({"ondemand", "", "", "", ""});
  EXPECT_EQ(s.range, CaptureRangeKind::kOnDemand);
  EXPECT_EQ(s.max_windows, 0u);
  EXPECT_TRUE(s.gated());
  EXPECT_TRUE(s.takes_commands());
  EXPECT_FALSE(s.needs_callbacks());
  EXPECT_EQ(describe(s), "ondemand, repeat");
  EXPECT_EQ(parsed({"ondemand", "", "stop", "", ""}).max_windows, 1u);
  EXPECT_FALSE(parsed({"cudaProfilerApi", "", "", "", ""}).takes_commands());
  EXPECT_TRUE(parsed({"", "", "", "", ""}).takes_commands());
}

TEST(OnDemandWindows, StartAndStopMakeWindows) {
  CaptureWindow w = started(parsed({"ondemand", "", "", "", ""}), 0);
  EXPECT_FALSE(w.is_open());  // off until the first start
  EXPECT_TRUE(w.windows().empty());
  auto r = w.command(kSec, true, "flopline start");
  EXPECT_EQ(r.result, CommandResult::kApplied);
  ASSERT_EQ(r.changes.size(), 1u);
  EXPECT_TRUE(r.changes[0].opened);
  EXPECT_EQ(r.changes[0].reason, "flopline start");
  EXPECT_EQ(r.changes[0].thread_id, 0u);
  EXPECT_EQ(w.command(2 * kSec, true, "flopline start").result, CommandResult::kAlreadyStarted);
  r = w.command(3 * kSec, false, "flopline stop");
  EXPECT_EQ(r.result, CommandResult::kApplied);
  ASSERT_EQ(r.changes.size(), 1u);
  EXPECT_FALSE(r.changes[0].opened);
  EXPECT_EQ(w.command(4 * kSec, false, "flopline stop").result, CommandResult::kAlreadyStopped);
  w.command(5 * kSec, true, "flopline start");
  w.command(6 * kSec, false, "flopline stop");
  ASSERT_EQ(w.windows().size(), 2u);
  EXPECT_EQ(w.windows()[1].start, 5 * kSec);
  EXPECT_EQ(w.windows()[1].end, 6 * kSec);
  EXPECT_EQ(w.windows()[1].opened_by, "flopline start");
  EXPECT_EQ(w.windows()[1].closed_by, "flopline stop");
  EXPECT_FALSE(w.done());
}

TEST(OnDemandWindows, RangeEndLimitsStarts) {
  CaptureWindow w = started(parsed({"ondemand", "", "stop", "", ""}), 0);
  w.command(1, true, "flopline start");
  w.command(2, false, "flopline stop");
  EXPECT_TRUE(w.done());
  const auto r = w.command(3, true, "flopline start");
  EXPECT_EQ(r.result, CommandResult::kLimitReached);
  EXPECT_TRUE(r.changes.empty());
  EXPECT_EQ(w.windows().size(), 1u);
}

TEST(OnDemandWindows, ARunWithoutTriggerStopsAndStartsAgain) {
  // `flopline run` with no option: recording from the start, switched by commands, and
  // its one-window limit does not apply (the windows come from commands only).
  CaptureWindow w = started(parsed({"", "", "", "", ""}), 10);
  EXPECT_TRUE(w.is_open());
  EXPECT_EQ(w.windows()[0].opened_by, "capture start");
  EXPECT_EQ(w.command(20, true, "flopline start").result, CommandResult::kAlreadyStarted);
  auto r = w.command(30, false, "flopline stop");
  EXPECT_EQ(r.result, CommandResult::kApplied);
  EXPECT_FALSE(w.is_open());
  r = w.command(40, true, "flopline start");
  EXPECT_EQ(r.result, CommandResult::kApplied);
  ASSERT_EQ(r.changes.size(), 1u);
  EXPECT_EQ(r.changes[0].index, 2u);
  EXPECT_EQ(w.finish(50).size(), 1u);
  EXPECT_EQ(w.windows()[1].closed_by, "program end");
  EXPECT_EQ(w.command(60, false, "flopline stop").result, CommandResult::kFinished);
}

TEST(OnDemandWindows, ProgramTriggeredRangesRefuseCommands) {
  CaptureWindowSetting s;
  s.range = CaptureRangeKind::kCudaProfilerApi;
  CaptureWindow w = started(s, 0);
  EXPECT_EQ(w.command(1, true, "flopline start").result, CommandResult::kNotCommanded);
  EXPECT_FALSE(w.is_open());
  w.profiler_start(2, 7);
  EXPECT_EQ(w.command(3, false, "flopline stop").result, CommandResult::kNotCommanded);
  EXPECT_TRUE(w.is_open());
}

TEST(OnDemandWindows, AStartBeforeTheDelayOpensWhenItEnds) {
  CaptureWindow w = started(parsed({"ondemand", "", "", "10", ""}), 0);
  auto r = w.command(kSec, true, "flopline start");
  EXPECT_EQ(r.result, CommandResult::kApplied);
  EXPECT_TRUE(r.changes.empty());
  EXPECT_EQ(w.next_deadline(), 10 * kSec);
  const auto c = w.tick(10 * kSec);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].reason, "delay 10s elapsed, inside flopline start");
}

TEST(OnDemandWindows, AfterTheDurationStopThenStartOpensTheNext) {
  CaptureWindow w = started(parsed({"ondemand", "", "", "", "2"}), 0);
  w.command(kSec, true, "flopline start");
  EXPECT_EQ(w.tick(3 * kSec).size(), 1u);  // duration 2s elapsed
  EXPECT_FALSE(w.is_open());
  EXPECT_EQ(w.command(4 * kSec, true, "flopline start").result, CommandResult::kAlreadyStarted);
  auto r = w.command(5 * kSec, false, "flopline stop");
  EXPECT_EQ(r.result, CommandResult::kApplied);
  EXPECT_TRUE(r.changes.empty());  // nothing open to close
  r = w.command(6 * kSec, true, "flopline start");
  ASSERT_EQ(r.changes.size(), 1u);
  EXPECT_EQ(r.changes[0].index, 2u);
}

TEST(OnDemandWindows, TheLibraryReadsItsControlDirectoryAndRange) {
  const std::map<std::string, std::string> vars = {
      {"FLOPLINE_CONTROL_DIR", "/tmp/flopline-runs-1/abc-1"},
      {"FLOPLINE_CAPTURE_RANGE", "ondemand"},
      {"FLOPLINE_CAPTURE_RANGE_END", "repeat:2"}};
  const CaptureEnv e = read_capture_env([&vars](const char* n) -> const char* {
    const auto it = vars.find(n);
    return it == vars.end() ? nullptr : it->second.c_str();
  });
  EXPECT_EQ(e.control_dir, "/tmp/flopline-runs-1/abc-1");
  EXPECT_EQ(e.windows.range, CaptureRangeKind::kOnDemand);
  EXPECT_EQ(e.windows.max_windows, 2u);
  EXPECT_TRUE(e.warnings.empty());
}

// --- text formats ---------------------------------------------------------------------

TEST(RunControlFormats, RoundTrips) {
  RunInfo i;
  i.id = "18c3-4d2";
  i.pid = 4711;
  i.start_ticks = 99;
  i.how = "launch";
  i.capture_range = "ondemand";
  i.started_unix_ns = 123;
  i.command = "python3\ttrain.py\n--x";
  const auto back = parse_run_info(format_run_info(i));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->id, i.id);
  EXPECT_EQ(back->pid, 4711);
  EXPECT_EQ(back->start_ticks, 99u);
  EXPECT_EQ(back->how, "launch");
  EXPECT_EQ(back->capture_range, "ondemand");
  EXPECT_EQ(back->started_unix_ns, 123);
  EXPECT_EQ(back->command, "python3 train.py --x");  // tabs and newlines flattened
  EXPECT_FALSE(parse_run_info("id\tx\n"));           // no pid
  EXPECT_FALSE(parse_run_info("pid\t5\n"));          // no id

  const ControlCommand c{7, ControlVerb::kStop, 55, 66};
  std::size_t consumed = 0;
  const std::string text = format_command(c) + "garbage\n" + "8\tstart\t1\t2";  // last unfinished
  const auto cs = parse_commands(text, &consumed);
  ASSERT_EQ(cs.size(), 1u);
  EXPECT_EQ(cs[0].seq, 7u);
  EXPECT_EQ(cs[0].verb, ControlVerb::kStop);
  EXPECT_EQ(cs[0].unix_ns, 55);
  EXPECT_EQ(cs[0].from_pid, 66);
  EXPECT_EQ(consumed, text.rfind('\n') + 1);

  const auto p = parse_process(format_process({12, 34, "3"}));
  ASSERT_TRUE(p);
  EXPECT_EQ(p->pid, 12);
  EXPECT_EQ(p->start_ticks, 34u);
  EXPECT_EQ(p->rank, "3");
  EXPECT_FALSE(parse_process("x\t1\n"));

  const auto acks =
      parse_acks(format_ack({12, 3, "already started", "window 1 is open"}) + "bad\n");
  ASSERT_EQ(acks.size(), 1u);
  EXPECT_EQ(acks[0].result, "already started");
  EXPECT_EQ(acks[0].detail, "window 1 is open");
}

TEST(RunControlFormats, RunsDirectory) {
  std::map<std::string, std::string> env;
  const GetEnv get = [&env](const char* n) -> const char* {
    const auto it = env.find(n);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  EXPECT_EQ(runs_directory(get, 1000), "/tmp/flopline-runs-1000");
  env["TMPDIR"] = "/scratch/me/";
  EXPECT_EQ(runs_directory(get, 1000), "/scratch/me/flopline-runs-1000");
  env["FLOPLINE_RUNS_DIR"] = "/x/runs";
  EXPECT_EQ(runs_directory(get, 1000), "/x/runs");
}

// --- the switch, lookup and checks ----------------------------------------------------

RunEntry run(const std::string& id, std::int64_t pid, bool live, const std::string& range,
             std::int64_t started, std::vector<std::int64_t> procs = {}) {
  RunEntry r;
  r.info.id = id;
  r.info.pid = pid;
  r.info.how = range == "ondemand" ? "launch" : "run";
  r.info.capture_range = range;
  r.info.started_unix_ns = started;
  r.live = live;
  for (std::int64_t p : procs) {
    r.processes.push_back({p, 0, ""});
    r.processes_live.push_back(live);
  }
  return r;
}

TEST(RunControlLookup, Switch) {
  EXPECT_EQ(initial_switch("none"), true);
  EXPECT_EQ(initial_switch("ondemand"), false);
  EXPECT_EQ(initial_switch("cudaProfilerApi"), std::nullopt);
  EXPECT_EQ(initial_switch("nvtx"), std::nullopt);
  EXPECT_EQ(initial_switch("bogus"), std::nullopt);
  EXPECT_FALSE(switch_after(false, {}));
  EXPECT_TRUE(switch_after(false, {{1, ControlVerb::kStart, 0, 0}}));
  EXPECT_FALSE(switch_after(true, {{1, ControlVerb::kStart, 0, 0}, {2, ControlVerb::kStop, 0, 0}}));
}

TEST(RunControlLookup, FindsByNothingIdPrefixAndPid) {
  // Newest first, as list_runs gives them.
  const std::vector<RunEntry> runs = {run("bbb2-10", 10, true, "ondemand", 3, {11, 12}),
                                      run("bbb1-20", 20, false, "ondemand", 2, {21}),
                                      run("aaa-30", 30, false, "none", 1, {11})};
  std::string error;
  EXPECT_EQ(find_run(runs, "", "/r", &error), &runs[0]);  // the only live one
  EXPECT_EQ(find_run(runs, "aaa-30", "/r", &error), &runs[2]);
  EXPECT_EQ(find_run(runs, "aa", "/r", &error), &runs[2]);
  EXPECT_EQ(find_run(runs, "bbb", "/r", &error), nullptr);
  EXPECT_NE(error.find("starts the ids of 2 runs"), std::string::npos) << error;
  EXPECT_NE(error.find("bbb1-20"), std::string::npos) << error;
  EXPECT_EQ(find_run(runs, "zzz", "/r", &error), nullptr);
  EXPECT_NE(error.find("no run has the id 'zzz' (under /r)"), std::string::npos) << error;
  EXPECT_EQ(find_run(runs, "10", "/r", &error), &runs[0]);  // flopline launch's pid
  EXPECT_EQ(find_run(runs, "12", "/r", &error), &runs[0]);  // a rank's pid
  EXPECT_EQ(find_run(runs, "11", "/r", &error), &runs[0]);  // reused: the live run first
  EXPECT_EQ(find_run(runs, "21", "/r", &error), &runs[1]);  // an ended run, found to say so
  EXPECT_EQ(find_run(runs, "99", "/r", &error), nullptr);
  EXPECT_NE(error.find("no flopline run holds process 99"), std::string::npos) << error;

  const std::vector<RunEntry> none = {run("a-1", 1, false, "none", 1)};
  EXPECT_EQ(find_run(none, "", "/r", &error), nullptr);
  EXPECT_NE(error.find("no flopline run or launch is running (none under /r"), std::string::npos)
      << error;
  const std::vector<RunEntry> two = {run("a-1", 1, true, "none", 2),
                                     run("b-2", 2, true, "ondemand", 1)};
  EXPECT_EQ(find_run(two, "", "/r", &error), nullptr);
  EXPECT_NE(error.find("2 runs are live"), std::string::npos) << error;
  EXPECT_NE(error.find("b-2 (launch, pid 2)"), std::string::npos) << error;
}

TEST(RunControlLookup, ChecksCommands) {
  std::string error;
  RunEntry launch = run("l-1", 1, true, "ondemand", 1);
  EXPECT_TRUE(check_command(launch, ControlVerb::kStart, &error));
  EXPECT_FALSE(check_command(launch, ControlVerb::kStop, &error));
  EXPECT_EQ(error, "run l-1 is already stopped (flopline launch waits for flopline start)");
  launch.commands.push_back({1, ControlVerb::kStart, 0, 0});
  EXPECT_FALSE(check_command(launch, ControlVerb::kStart, &error));
  EXPECT_EQ(error, "run l-1 is already started; flopline stop first");
  EXPECT_TRUE(check_command(launch, ControlVerb::kStop, &error));

  RunEntry plain = run("r-2", 2, true, "none", 1);
  EXPECT_FALSE(check_command(plain, ControlVerb::kStart, &error));
  EXPECT_NE(error.find("records from the start"), std::string::npos) << error;
  EXPECT_TRUE(check_command(plain, ControlVerb::kStop, &error));

  const RunEntry api = run("p-3", 3, true, "cudaProfilerApi", 1);
  EXPECT_FALSE(check_command(api, ControlVerb::kStart, &error));
  EXPECT_NE(error.find("records cudaProfilerApi windows"), std::string::npos) << error;

  const RunEntry ended = run("e-4", 4, false, "ondemand", 1);
  EXPECT_FALSE(check_command(ended, ControlVerb::kStart, &error));
  EXPECT_EQ(error, "run e-4 has ended");
}

// --- files ----------------------------------------------------------------------------

class RunControlFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string base = ::testing::TempDir() + "flopline_run_control_" +
                             std::to_string(getpid()) + "_" +
                             ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(base);
    std::filesystem::create_directories(base);
    root_ = base;
    runs_ = base + "/runs";
  }
  void TearDown() override { std::filesystem::remove_all(root_); }
  std::string root_, runs_;
};

TEST_F(RunControlFiles, MakesARunAndItsCommands) {
  RunInfo i;
  i.id = "abc-1";
  i.pid = getpid();
  i.start_ticks = process_start_ticks(getpid()).value_or(0);
  i.how = "launch";
  i.capture_range = "ondemand";
  std::string error;
  const auto dir = create_run_dir(runs_, i, &error);
  ASSERT_TRUE(dir) << error;
  EXPECT_EQ(*dir, runs_ + "/abc-1");
  struct stat st {};
  ASSERT_EQ(stat(runs_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);             // nobody else reads or feeds the commands
  EXPECT_FALSE(create_run_dir(runs_, i, &error));  // the id is taken

  EXPECT_EQ(append_command(*dir, ControlVerb::kStart, 5, 100, &error), 1u);
  EXPECT_EQ(append_command(*dir, ControlVerb::kStop, 5, 200, &error), 2u);
  EXPECT_TRUE(register_process(*dir, {getpid(), i.start_ticks, "0"}));
  EXPECT_TRUE(register_process(*dir, {999999999, 1, "1"}));
  EXPECT_TRUE(append_ack(*dir, {getpid(), 1, "applied", "window 1 opened"}));

  const auto r = read_run(*dir, process_alive);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->live);
  ASSERT_EQ(r->commands.size(), 2u);
  EXPECT_EQ(r->commands[1].verb, ControlVerb::kStop);
  ASSERT_EQ(r->processes.size(), 2u);
  EXPECT_EQ(r->processes[0].pid, getpid());
  EXPECT_TRUE(r->processes_live[0]);
  EXPECT_FALSE(r->processes_live[1]);  // no such process
  const auto acks = read_acks(*dir);
  ASSERT_EQ(acks.size(), 1u);
  EXPECT_EQ(acks[0].detail, "window 1 opened");

  mark_run_ended(*dir);
  EXPECT_FALSE(read_run(*dir, process_alive)->live);
}

TEST_F(RunControlFiles, ListsNewestFirstAndPrunesOnlyOldDeadRuns) {
  std::string error;
  RunInfo old_run;
  old_run.id = "old-1";
  old_run.pid = 999999999;  // gone
  old_run.started_unix_ns = 1;
  RunInfo live_run;
  live_run.id = "new-2";
  live_run.pid = getpid();
  live_run.started_unix_ns = 2;
  ASSERT_TRUE(create_run_dir(runs_, old_run, &error)) << error;
  ASSERT_TRUE(create_run_dir(runs_, live_run, &error)) << error;
  std::filesystem::create_directories(runs_ + "/not-a-run");  // no `run` file: ignored
  auto runs = list_runs(runs_, process_alive);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].info.id, "new-2");
  EXPECT_TRUE(runs[0].live);
  EXPECT_FALSE(runs[1].live);
  prune_runs(runs_, process_alive, 3600);  // young: kept
  EXPECT_EQ(list_runs(runs_, process_alive).size(), 2u);
  prune_runs(runs_, process_alive, -1);  // any age: the dead one goes
  runs = list_runs(runs_, process_alive);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].info.id, "new-2");
}

TEST_F(RunControlFiles, RefusesARunsDirectoryThatIsALink) {
  std::filesystem::create_directories(root_ + "/elsewhere");
  std::filesystem::create_directory_symlink(root_ + "/elsewhere", runs_);
  RunInfo i;
  i.id = "x-1";
  i.pid = 1;
  std::string error;
  EXPECT_FALSE(create_run_dir(runs_, i, &error));
  EXPECT_NE(error.find("is not a directory of this user"), std::string::npos) << error;
}

TEST(RunControlProcesses, StartTicksTellAProcessFromOneThatReusedItsPid) {
  const auto ticks = process_start_ticks(getpid());
  ASSERT_TRUE(ticks);
  EXPECT_TRUE(process_alive(getpid(), *ticks));
  EXPECT_TRUE(process_alive(getpid(), 0));
  EXPECT_FALSE(process_alive(getpid(), *ticks + 1));
  EXPECT_FALSE(process_alive(999999999, 0));
  EXPECT_FALSE(process_start_ticks(999999999));
}

}  // namespace
}  // namespace flopline::capture
