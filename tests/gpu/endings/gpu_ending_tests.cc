// GPU tests of the ways a recorded process ends (docs/CAPTURE.md): _exit from any
// thread (two at once among them), a fork-started multiprocessing worker, SIGKILL with the trace
// flushed while the program ran, and a normal end with and without flushing. Without a CUDA device
// the binary prints "skipped: no CUDA device" and exits 77.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "gpu_test_main.h"
#include "gpu_test_support.h"
#include "trace_query.h"

namespace flopline::gputest {
namespace {

RunResult run_ending(const std::string& name, const std::vector<std::string>& args,
                     const std::vector<std::string>& options = {}) {
  std::vector<std::string> cmd = {"python3", FLOPLINE_ENDINGS_SCRIPT};
  cmd.insert(cmd.end(), args.begin(), args.end());
  return run_under_flopline(FLOPLINE_EXE, gpu_test_out_dir(FLOPLINE_ENDING_TEST_OUT) + "/" + name,
                            cmd, {"PYTHONUNBUFFERED=1"}, options);
}

// Kernels of the elementwise add the script launches (x.add_(1.0)), not its fill.
std::size_t adds(const TraceView& t) {
  std::size_t n = 0;
  for (const SliceView& k : t.by_cat("kernel")) {
    n += k.name.find("elementwise") != std::string::npos && k.name.find("add") != std::string::npos;
  }
  return n;
}

TEST(Endings, ExitFromAThreadWritesTheTrace) {
  const RunResult r = run_ending("exit_thread", {"exit-thread", "200"});
  EXPECT_EQ(r.result.exit_code, 7) << describe(r);
  ASSERT_EQ(r.files.size(), 1u) << describe(r);
  EXPECT_EQ(adds(must_load(r.files[0])), 200u);
}

TEST(Endings, ExitFromTheMainThreadWritesTheTrace) {
  const RunResult r = run_ending("exit_main", {"exit-main", "200"});
  EXPECT_EQ(r.result.exit_code, 7) << describe(r);
  ASSERT_EQ(r.files.size(), 1u) << describe(r);
  EXPECT_EQ(adds(must_load(r.files[0])), 200u);
}

// The second ending waits for the first one's write: ending the process at once would
// cut the trace off at its last append.
TEST(Endings, ExitsOnTwoThreadsWriteOneCompleteTrace) {
  const RunResult r = run_ending("two_exits", {"two-exits", "30000"}, {"--flush-interval", "off"});
  EXPECT_TRUE(r.result.exit_code == 7 || r.result.exit_code == 3) << describe(r);
  EXPECT_EQ(r.result.err.find("ended before its final write"), std::string::npos) << describe(r);
  ASSERT_EQ(r.files.size(), 1u) << describe(r);
  EXPECT_EQ(adds(must_load(r.files[0])), 30000u);
}

TEST(Endings, ForkStartedWorkerWritesItsTrace) {
  const RunResult r = run_ending("mp_worker", {"mp-worker", "150"});
  EXPECT_EQ(r.result.exit_code, 0) << describe(r);
  // The parent never used CUDA: the worker's trace is the only one, and holds its work.
  ASSERT_EQ(r.files.size(), 1u) << describe(r);
  EXPECT_EQ(adds(must_load(r.files[0])), 150u);
}

TEST(Endings, SigkillKeepsWhatWasFlushed) {
  const RunResult r = run_ending("kill", {"kill", "300"}, {"--flush-interval", "200ms"});
  EXPECT_EQ(r.result.exit_code, 128 + 9) << describe(r);
  ASSERT_EQ(r.files.size(), 1u) << describe(r);
  EXPECT_NE(r.result.err.find("holds what was flushed"), std::string::npos) << describe(r);
  const TraceView t = must_load(r.files[0]);
  // The kernels ended a second and more before the kill: every one was flushed.
  EXPECT_EQ(adds(t), 300u);
  for (const SliceView& k : t.by_cat("kernel")) EXPECT_GT(k.end, k.start) << k.name;
  EXPECT_EQ(t.named("user_annotation", "work").size(), 1u) << "the closed NVTX range";
}

TEST(Endings, NormalEndGivesTheSameTraceWithAndWithoutFlushing) {
  const RunResult flushed =
      run_ending("normal_flushed", {"normal", "100"}, {"--flush-interval", "100ms"});
  const RunResult plain =
      run_ending("normal_plain", {"normal", "100"}, {"--flush-interval", "off"});
  ASSERT_EQ(flushed.result.exit_code, 0) << describe(flushed);
  ASSERT_EQ(plain.result.exit_code, 0) << describe(plain);
  ASSERT_EQ(flushed.files.size(), 1u);
  ASSERT_EQ(plain.files.size(), 1u);
  const TraceView a = must_load(flushed.files[0]);
  const TraceView b = must_load(plain.files[0]);
  // Every event but CUPTI's own overhead records (flushing adds buffer flushes).
  auto names = [](const TraceView& t) {
    std::map<std::string, int> m;
    for (const SliceView& s : t.slices) {
      if (s.cat != "overhead") ++m[s.cat + "/" + s.name];
    }
    return m;
  };
  EXPECT_EQ(names(a), names(b));
  // The complete form, with device properties: the end finished the appended file.
  EXPECT_FALSE(a.trace.devices.empty());
  EXPECT_EQ(a.trace.devices.size(), b.trace.devices.size());
}

}  // namespace
}  // namespace flopline::gputest

int main(int argc, char** argv) {
  return flopline::gputest::run_gpu_tests(argc, argv);
}
