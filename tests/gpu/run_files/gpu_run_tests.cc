// GPU tests of the files a run leaves: only processes that did GPU work write a trace,
// and the path given with -o holds the command's work. Without a CUDA device the binary
// prints "skipped: no CUDA device" and exits 77.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "gpu_test_main.h"
#include "gpu_test_support.h"
#include "trace_query.h"

namespace flopline::gputest {
namespace {

namespace fs = std::filesystem;

// A fresh, empty directory for one run's files.
std::string run_dir(const std::string& name) {
  const fs::path d = fs::path(gpu_test_out_dir(FLOPLINE_RUN_TEST_OUT)) / name;
  fs::remove_all(d);
  fs::create_directories(d);
  return d.string();
}

std::set<std::string> json_files_in(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.ends_with(".json") || n.ends_with(".json.gz")) out.insert(n);
  }
  return out;
}

std::string describe_run(const CommandResult& r) {
  return "exit " + std::to_string(r.exit_code) + "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}

TEST(Runs, CompileWorkersWriteNoTrace) {
  const std::string dir = run_dir("compile_workers");
  const std::string file = dir + "/t.json";
  const CommandResult r = run_command({FLOPLINE_EXE, "run", "--no-summary", "-o", file, "--",
                                       "python3", FLOPLINE_COMPILE_WORKERS_SCRIPT},
                                      {"PYTHONUNBUFFERED=1"});
  ASSERT_EQ(r.exit_code, 0) << describe_run(r);
  EXPECT_EQ(json_files_in(dir), std::set<std::string>{"t.json"}) << describe_run(r);
  EXPECT_EQ(traces_named_in(r.out), std::vector<std::string>{file}) << describe_run(r);
  const TraceView t = must_load(file);
  EXPECT_FALSE(t.named("kernel", "triton").empty())
      << "the compiled function's kernels are in " << file;
}

TEST(Runs, OnlyProcessesWithGpuWorkWriteTraces) {
  int devices = 0;
  ASSERT_EQ(cudaGetDeviceCount(&devices), cudaSuccess);
  const int ranks = std::min(devices, 2);
  const std::string dir = run_dir("ranks");
  const std::string file = dir + "/t.json";
  const CommandResult r =
      run_command({FLOPLINE_EXE, "run", "--no-summary", "-o", file, "--", "python3", "-m",
                   "torch.distributed.run", "--standalone",
                   "--nproc_per_node=" + std::to_string(ranks), FLOPLINE_RANKS_SCRIPT},
                  {"PYTHONUNBUFFERED=1", "NCCL_NVLS_ENABLE=0", "TORCH_SYMM_MEM_DISABLE_MULTICAST=1",
                   "NVSHMEM_DISABLE_NVLS=1"});
  ASSERT_EQ(r.exit_code, 0) << describe_run(r);
  std::set<std::string> want = {"t.json"};  // rank 0's, the launcher having done no GPU work
  for (int i = 1; i < ranks; ++i) want.insert("t-rank" + std::to_string(i) + ".json");
  EXPECT_EQ(json_files_in(dir), want) << describe_run(r);
  EXPECT_EQ(traces_named_in(r.out).size(), want.size()) << describe_run(r);
  std::set<std::string> run_ids;
  std::set<std::string> hosts;
  for (const std::string& f : want) {
    const TraceView t = must_load(dir + "/" + f);
    EXPECT_FALSE(t.by_cat("kernel").empty()) << f;
    for (const auto& [k, v] : t.trace.info) {
      if (k == "run id") run_ids.insert(v);
      if (k == "host") hosts.insert(v);
    }
  }
  EXPECT_EQ(run_ids.size(), 1u) << "every trace of the run carries one run id";
  // One machine: every rank names the same host, and it is not empty.
  ASSERT_EQ(hosts.size(), 1u) << "every trace of the run names its host";
  EXPECT_FALSE(hosts.begin()->empty());
}

}  // namespace
}  // namespace flopline::gputest

int main(int argc, char** argv) {
  return flopline::gputest::run_gpu_tests(argc, argv);
}
