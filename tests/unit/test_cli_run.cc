// `flopline run` without a GPU: its command line, the environment it gives the child,
// finding the command and the injection library, exit codes, and the errors a user
// sees when the command does not exist.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_app.h"
#include "run_command.h"
#include "run_summary.h"

namespace flopline::cli {
namespace {

using Args = std::vector<std::string>;
using Opt = capture::CaptureOptionId;

TEST(RunArgs, OptionsThenCommand) {
  const Args a = {"-o",      "t.json", "--kinds", "kernel,nvtx", "--no-summary",
                  "--top=5", "--",     "python3", "-c",          "print(1)"};
  auto r = parse_run_args(a);
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.value->capture[Opt::kOutput], "t.json");
  EXPECT_EQ(r.value->capture[Opt::kKinds], "kernel,nvtx");
  EXPECT_FALSE(r.value->summary);
  EXPECT_EQ(r.value->top, 5u);
  EXPECT_EQ(r.value->command, (Args{"python3", "-c", "print(1)"}));
}

TEST(RunArgs, CountersExcludeReachesTheEnvironment) {
  auto r = parse_run_args(Args{"--counters", "--counters-exclude=^my_allreduce", "--", "ls"});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.value->capture[Opt::kCountersExclude], "^my_allreduce");
  RunEnvironment run;
  run.values[Opt::kCountersExclude] = r.value->capture[Opt::kCountersExclude];
  const Args env = build_run_environment(Args{}, run);
  EXPECT_NE(std::find(env.begin(), env.end(), "FLOPLINE_COUNTERS_EXCLUDE=^my_allreduce"),
            env.end());
}

TEST(RunArgs, CommandStartsAtFirstNonOption) {
  auto r = parse_run_args(Args{"--output=x.json", "./prog", "--kinds", "bogus"});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.value->capture[Opt::kOutput], "x.json");
  EXPECT_TRUE(r.value->capture[Opt::kKinds].empty());
  EXPECT_EQ(r.value->command, (Args{"./prog", "--kinds", "bogus"}));
  EXPECT_TRUE(r.value->summary);
  EXPECT_EQ(r.value->top, 10u);
}

TEST(RunArgs, Errors) {
  EXPECT_FALSE(parse_run_args(Args{}).ok());
  EXPECT_FALSE(parse_run_args(Args{"-o", "x.json"}).ok());  // no command
  EXPECT_FALSE(parse_run_args(Args{
                                  "--",
                              })
                   .ok());
  auto r = parse_run_args(Args{"--kinds", "kernel,bogus", "--", "ls"});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error.find("bogus"), std::string::npos);
  EXPECT_FALSE(parse_run_args(Args{"--frobnicate", "--", "ls"}).ok());
  EXPECT_FALSE(parse_run_args(Args{"--top", "0", "--", "ls"}).ok());
  EXPECT_FALSE(parse_run_args(Args{"--no-summary=1", "--", "ls"}).ok());
  // Beyond the capture's own limit (2^40 MB), refused here rather than by each process.
  EXPECT_TRUE(parse_run_args(Args{"--max-memory-mb", "1099511627776", "--", "ls"}).ok());
  auto big = parse_run_args(Args{"--max-memory-mb", "1099511627777", "--", "ls"});
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.error.find("2^40 MB"), std::string::npos) << big.error;
  // A --counters-exclude that is not a regular expression is named, never passed on.
  auto bad = parse_run_args(Args{"--counters-exclude", "(nccl", "--", "ls"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error.find("'(nccl' is not a regular expression"), std::string::npos) << bad.error;
  EXPECT_FALSE(parse_run_args(Args{"--counters-exclude=", "--", "ls"}).ok());
  EXPECT_FALSE(parse_run_args(Args{"-o"}).ok());
  EXPECT_TRUE(parse_run_args(Args{"--help"}).value->help);
}

TEST(RunEnvironment, SetsVariablesAndAppendsPreload) {
  RunEnvironment run;
  run.inject_library = "/opt/flopline/lib/libflopline_inject.so";
  run.values[Opt::kOutput] = "t-%p.json";
  run.values[Opt::kKinds] = "kernel";
  run.values[Opt::kMaxMemory] = "256";
  run.values[Opt::kManifest] = "/tmp/m";
  const Args base = {"PATH=/bin", "LD_PRELOAD=/usr/lib/libfoo.so", "FLOPLINE_KINDS=all",
                     "CUDA_INJECTION64_PATH=/old.so"};
  const Args env = build_run_environment(base, run);
  auto value = [&](const std::string& name) -> std::string {
    std::string found;
    int n = 0;
    for (const std::string& e : env) {
      if (e.rfind(name + "=", 0) == 0) {
        found = e.substr(name.size() + 1);
        ++n;
      }
    }
    EXPECT_LE(n, 1) << name << " set twice";
    return found;
  };
  EXPECT_EQ(value("PATH"), "/bin");
  EXPECT_EQ(value("CUDA_INJECTION64_PATH"), run.inject_library);
  EXPECT_EQ(value("NVTX_INJECTION64_PATH"), run.inject_library);
  EXPECT_EQ(value("LD_PRELOAD"), "/usr/lib/libfoo.so:" + run.inject_library);
  EXPECT_EQ(value("FLOPLINE_OUTPUT"), "t-%p.json");
  EXPECT_EQ(value("FLOPLINE_KINDS"), "kernel");
  EXPECT_EQ(value("FLOPLINE_MAX_MEMORY_MB"), "256");
  EXPECT_EQ(value("FLOPLINE_MANIFEST"), "/tmp/m");
  // Running flopline run inside flopline run does not preload the library twice.
  const Args again = build_run_environment(env, run);
  std::string preload;
  for (const std::string& e : again) {
    if (e.rfind("LD_PRELOAD=", 0) == 0) preload = e;
  }
  EXPECT_EQ(preload, "LD_PRELOAD=/usr/lib/libfoo.so:" + run.inject_library);
}

TEST(RunEnvironment, OutputIsMadeAbsolute) {
  EXPECT_EQ(absolute_output("t.json", "/home/u"), "/home/u/t.json");
  EXPECT_EQ(absolute_output("out/t-%p.json", "/home/u/"), "/home/u/out/t-%p.json");
  EXPECT_EQ(absolute_output("/abs/t.json", "/home/u"), "/abs/t.json");
  EXPECT_EQ(absolute_output("", "/home/u"), "/home/u/");  // a directory: default names
}

TEST(RunCommandLookup, ResolvesLikeExecvp) {
  EXPECT_EQ(resolve_command("sh", "/nonexistent:/bin:/usr/bin").value_or(""), "/bin/sh");
  EXPECT_FALSE(resolve_command("flopline-no-such-command", "/bin:/usr/bin"));
  EXPECT_EQ(resolve_command("/bin/sh", ""), "/bin/sh");
  EXPECT_FALSE(resolve_command("./no/such/file", "/bin"));
  EXPECT_FALSE(resolve_command("", "/bin"));
}

TEST(RunCommandLookup, InjectionLibraryBesideOrInLib) {
  namespace fs = std::filesystem;
  const fs::path root =
      fs::temp_directory_path() / ("flopline-run-test-" + std::to_string(getpid()));
  fs::create_directories(root / "bin");
  fs::create_directories(root / "lib");
  std::ofstream(root / "lib" / "libflopline_inject.so") << "x";
  const std::string exe = (root / "bin" / "flopline").string();
  EXPECT_EQ(find_injection_library(exe, nullptr).value_or(""),
            (root / "lib" / "libflopline_inject.so").string());
  std::ofstream(root / "bin" / "libflopline_inject.so") << "x";
  EXPECT_EQ(find_injection_library(exe, nullptr).value_or(""),
            (root / "bin" / "libflopline_inject.so").string());
  const std::string other = (root / "lib" / "libflopline_inject.so").string();
  EXPECT_EQ(find_injection_library(exe, other.c_str()).value_or(""), other);
  EXPECT_FALSE(find_injection_library(exe, "/no/such/lib.so"));
  fs::remove_all(root);
  EXPECT_FALSE(find_injection_library(exe, nullptr));
}

TEST(RunExitCodes, FromWaitStatus) {
  const pid_t ok = fork();
  if (ok == 0) _exit(3);
  int status = 0;
  waitpid(ok, &status, 0);
  EXPECT_EQ(exit_code_from_wait_status(status), 3);
  const pid_t killed = fork();
  if (killed == 0) {
    signal(SIGABRT, SIG_DFL);
    raise(SIGABRT);
    _exit(0);
  }
  waitpid(killed, &status, 0);
  EXPECT_EQ(exit_code_from_wait_status(status), 128 + SIGABRT);
}

TEST(RunCommand, UnknownCommandExits127) {
  std::ostringstream out, err;
  const Args args = {"run", "--", "flopline-no-such-command-xyz"};
  EXPECT_EQ(run_cli(args, out, err), kExitCommandNotFound);
  EXPECT_NE(err.str().find("command not found: flopline-no-such-command-xyz"), std::string::npos)
      << err.str();
}

bool has_driver() {
  void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (lib != nullptr) dlclose(lib);
  return lib != nullptr;
}

std::string temp_dir(const char* what) {
  namespace fs = std::filesystem;
  const fs::path d = fs::temp_directory_path() /
                     (std::string("flopline-") + what + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}

TEST(RunCommand, WithoutADriverTheCommandStillRunsAndItsCodeIsReturned) {
  if (has_driver()) GTEST_SKIP() << "this machine has a CUDA driver";
  const std::string dir = temp_dir("nodriver");
  const std::string marker = dir + "/ran";
  std::ostringstream out, err;
  const Args args = {
      "run", "-o", dir + "/t.json", "--", "sh", "-c", "touch " + marker + "; exit 3"};
  EXPECT_EQ(run_cli(args, out, err), 3);
  EXPECT_TRUE(std::filesystem::exists(marker));
  EXPECT_NE(err.str().find("no CUDA driver"), std::string::npos) << err.str();
  // Said once, and no trace claimed.
  EXPECT_EQ(err.str().find("no CUDA driver"), err.str().rfind("no CUDA driver")) << err.str();
  EXPECT_EQ(out.str().find("flopline: trace:"), std::string::npos) << out.str();
  std::filesystem::remove_all(dir);
}

TEST(RunCommand, ABadInjectLibrarySettingIsNamedAsSuch) {
  setenv("FLOPLINE_INJECT_LIBRARY", "/nonexistent/libx.so", 1);
  std::ostringstream out, err;
  EXPECT_EQ(run_cli(Args{"run", "--no-summary", "--", "true"}, out, err), kExitFailure);
  unsetenv("FLOPLINE_INJECT_LIBRARY");
  EXPECT_NE(err.str().find("FLOPLINE_INJECT_LIBRARY=/nonexistent/libx.so: not a file"),
            std::string::npos)
      << err.str();
}

TEST(RunCommand, ADirectoryAsTheCommandIsNamedSo) {
  const std::string dir = temp_dir("dircmd");
  std::ostringstream out, err;
  EXPECT_EQ(run_cli(Args{"run", "--no-summary", "--", dir}, out, err), 126);
  EXPECT_NE(err.str().find("is a directory"), std::string::npos) << err.str();
  std::filesystem::remove_all(dir);
}

TEST(RunCommand, OutputIntoAMissingDirectoryFailsBeforeTheCommandRuns) {
  const std::string dir = temp_dir("noout");
  const std::string marker = dir + "/ran";
  std::ostringstream out, err;
  const Args args = {"run", "-o", dir + "/missing/t.json", "--", "sh", "-c", "touch " + marker};
  EXPECT_EQ(run_cli(args, out, err), kExitFailure);
  EXPECT_FALSE(std::filesystem::exists(marker)) << "the command ran";
  EXPECT_NE(err.str().find(dir + "/missing: no such directory"), std::string::npos) << err.str();
  // A directory given as the output must exist too, and be writable.
  std::ostringstream out2, err2;
  EXPECT_EQ(run_cli(Args{"run", "-o", dir + "/nodir/", "--", "true"}, out2, err2), kExitFailure);
  EXPECT_NE(err2.str().find("no such directory"), std::string::npos) << err2.str();
  if (geteuid() != 0) {  // root writes anywhere
    std::filesystem::create_directories(dir + "/ro");
    chmod((dir + "/ro").c_str(), 0555);
    std::ostringstream out3, err3;
    EXPECT_EQ(run_cli(Args{"run", "-o", dir + "/ro/t.json", "--", "true"}, out3, err3),
              kExitFailure);
    EXPECT_NE(err3.str().find("Permission denied"), std::string::npos) << err3.str();
  }
  std::filesystem::remove_all(dir);
}

TEST(RunCommand, AnOutputNameTooLongFailsBeforeTheCommandRuns) {
  const std::string dir = temp_dir("longname");
  const std::string marker = dir + "/ran";
  std::ostringstream out, err;
  // 245 bytes fit; with the rank suffix another process of the run would add, they do not.
  const std::string name = std::string(240, 't') + ".json";
  const Args args = {"run", "-o", dir + "/" + name, "--", "sh", "-c", "touch " + marker};
  EXPECT_EQ(run_cli(args, out, err), kExitFailure);
  EXPECT_FALSE(std::filesystem::exists(marker)) << "the command ran";
  EXPECT_NE(err.str().find("the file name is too long"), std::string::npos) << err.str();
  // %p counts at its longest.
  std::ostringstream out2, err2;
  EXPECT_EQ(run_cli(Args{"run", "-o", dir + "/" + std::string(230, 'p') + "%p.json", "--", "true"},
                    out2, err2),
            kExitFailure);
  EXPECT_NE(err2.str().find("too long"), std::string::npos) << err2.str();
  std::filesystem::remove_all(dir);
}

TEST(RunCommand, ALaunchCountsItsWindowNumberInTheNameLength) {
  const std::string dir = temp_dir("longwindow");
  // 225 bytes fit with a rank suffix (240), not with a window number as well (257).
  const std::string name = std::string(220, 'w') + ".json";
  std::ostringstream out, err;
  const int launched =
      run_cli(Args{"launch", "-o", dir + "/" + name, "--", "sh", "-c", "true"}, out, err);
  EXPECT_EQ(launched, kExitFailure);
  EXPECT_NE(err.str().find("and a window number"), std::string::npos) << err.str();
  std::ostringstream out2, err2;
  run_cli(Args{"run", "-o", dir + "/" + name, "--", "true"}, out2, err2);
  EXPECT_EQ(err2.str().find("too long"), std::string::npos) << err2.str();
  std::filesystem::remove_all(dir);
}

TEST(RunArgs, CountersAndGpuMetrics) {
  auto r = parse_run_args(Args{"--counters", "--", "prog"});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.value->capture[Opt::kCounters], "on");
  r = parse_run_args(Args{"--counters=all", "prog"});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.value->capture[Opt::kCounters], "all");
  r = parse_run_args(Args{"--gpu-metrics=20us", "prog"});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.value->capture[Opt::kGpuMetrics], "20us");
  r = parse_run_args(Args{"--counters=many", "prog"});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error.find("--counters"), std::string::npos);
  r = parse_run_args(Args{"--gpu-metrics=1s", "prog"});
  ASSERT_FALSE(r.ok());
  r = parse_run_args(Args{"--counters", "--gpu-metrics", "prog"});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error.find("cannot be used together"), std::string::npos) << r.error;
  r = parse_run_args(Args{"--flush-interval", "2s", "prog"});
  ASSERT_TRUE(r.ok()) << r.error;
  EXPECT_EQ(r.value->capture[Opt::kFlushInterval], "2s");
  r = parse_run_args(Args{"--flush-interval=soon", "prog"});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error.find("--flush-interval"), std::string::npos);
  // "--counters=off" with metrics is fine.
  EXPECT_TRUE(parse_run_args(Args{"--counters=off", "--gpu-metrics", "prog"}).ok());
}

TEST(RunEnvironment, RunIdAndPidAndCounters) {
  RunEnvironment run;
  run.inject_library = "/l.so";
  run.values[Opt::kRunId] = "id-1";
  run.values[Opt::kRunPid] = "99";
  run.values[Opt::kCounters] = "3";
  run.values[Opt::kGpuMetrics] = "off";
  const Args env = build_run_environment({}, run);
  auto has = [&](const std::string& kv) {
    return std::find(env.begin(), env.end(), kv) != env.end();
  };
  EXPECT_TRUE(has("FLOPLINE_RUN_ID=id-1"));
  EXPECT_TRUE(has("FLOPLINE_RUN_PID=99"));
  EXPECT_TRUE(has("FLOPLINE_COUNTERS=3"));
  EXPECT_TRUE(has("FLOPLINE_GPU_METRICS=off"));
}

// The summary after a counted run says which launches were not measured as planned,
// from the trace's metadata.
TEST(RunSummary, SaysWhichLaunchesWereNotMeasured) {
  const std::string path = ::testing::TempDir() + "flopline_run_summary_counters.json";
  {
    std::ofstream f(path);
    f << R"j({"traceEvents":[{"ph":"X","cat":"kernel","name":"gemm","pid":1,"tid":7,"ts":1,)j"
         R"j("dur":5,"args":{"flops":1000,"dram bytes":64,"flops source":"counters"}}],)j"
         R"j("flopline":{"counters":"range profiler, chip GH100","counters failed launches":"2",)j"
         R"j("counters without their kernel":"1 (device:correlation 0:9)",)j"
         R"j("counters time measuring":"2.000 s: 0.100 s configuring metric sets"}})j";
  }
  std::ostringstream out, err;
  print_run_summary({path}, 10, out, err);
  const std::string s = out.str();
  EXPECT_NE(s.find("counters: range profiler, chip GH100\n"), std::string::npos) << s << err.str();
  EXPECT_NE(s.find("counters: of 0.005 ms kernel time: 100.0% measured, 0.0% same work"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("counters: failed launches: 2\n"), std::string::npos) << s;
  EXPECT_NE(s.find("counters: without their kernel: 1 (device:correlation 0:9)\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("counters: time measuring: 2.000 s: 0.100 s configuring metric sets\n"),
            std::string::npos)
      << s;
  std::remove(path.c_str());
}

TEST(RunCommand, UsageErrorsExit2) {
  std::ostringstream out, err;
  EXPECT_EQ(run_cli(Args{"run"}, out, err), kExitUsage);
  EXPECT_NE(err.str().find("no command given"), std::string::npos);
  std::ostringstream out2, err2;
  EXPECT_EQ(run_cli(Args{"run", "--help"}, out2, err2), kExitOk);
  EXPECT_NE(out2.str().find("usage: flopline run"), std::string::npos);
}

}  // namespace
}  // namespace flopline::cli
