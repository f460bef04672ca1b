// GPU tests of capture: gpu_workload (and a Python/Triton script) run under
// `flopline run`, and the traces they leave are read back and checked against what
// the program did. Without a CUDA device the binary prints "skipped: no CUDA device"
// and exits 77, which ctest reports as skipped; any other missing piece (cuBLAS, PyTorch
// and Triton) is a failure (gpu_test_main.h).
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "gpu_test_main.h"
#include "gpu_test_support.h"
#include "trace_query.h"

namespace flopline::gputest {
namespace {

std::string out_dir() {
  return gpu_test_out_dir(FLOPLINE_GPU_TEST_DEFAULT_OUT);
}

RunResult flopline_run(const std::string& name, const std::vector<std::string>& command,
                       const std::vector<std::string>& env = {},
                       const std::vector<std::string>& options = {}) {
  return run_under_flopline(FLOPLINE_EXE, out_dir() + "/" + name, command, env, options);
}

// Every kernel has a joined flow from the CPU call that launched it, and that call
// began before the kernel did (one clock for CPU and GPU).
void expect_launch_flows(const TraceView& t, const std::vector<SliceView>& kernels) {
  std::size_t joined = 0, causal = 0;
  for (const SliceView& k : kernels) {
    const FlowView* f = t.flow_to(k);
    if (f == nullptr) continue;
    ++joined;
    if (f->from.start <= k.start) ++causal;
    EXPECT_TRUE(f->from.cat == "cuda_runtime" || f->from.cat == "cuda_driver") << f->from.cat;
  }
  EXPECT_EQ(joined, kernels.size()) << "kernels without a launch flow";
  EXPECT_EQ(causal, joined) << "kernels that start before their launch call";
}

TEST(Capture, LaunchesGiveExactlyThatManyKernels) {
  const RunResult r = flopline_run("launches", {FLOPLINE_WORKLOAD, "launches", "1000"});
  ASSERT_EQ(r.result.exit_code, 0) << describe(r);
  ASSERT_EQ(r.files.size(), 1u) << describe(r);
  EXPECT_NE(r.result.out.find("Kernels by GPU time"), std::string::npos) << describe(r);
  const TraceView t = must_load(r.files[0]);
  const auto kernels = t.by_cat("kernel");
  EXPECT_EQ(kernels.size(), 1000u);
  for (const SliceView& k : kernels) {
    EXPECT_NE(k.name.find("flopline_empty_kernel"), std::string::npos) << k.name;
  }
  expect_launch_flows(t, kernels);
  std::size_t from_launch_kernel = 0;
  for (const SliceView& k : kernels) {
    if (const FlowView* f = t.flow_to(k); f && f->from.name == "cudaLaunchKernel")
      ++from_launch_kernel;
  }
  EXPECT_EQ(from_launch_kernel, 1000u);
  EXPECT_EQ(t.trace.report.dropped_records, 0u);
  ASSERT_FALSE(t.trace.devices.empty());
  EXPECT_GT(t.trace.devices[0].num_sms, 0);
  EXPECT_GT(t.trace.devices[0].peak_bytes_per_s, 0);
}

TEST(Capture, DefaultOutputIsNamedByPidInTheWorkingDirectory) {
  const std::string dir = out_dir() + "/default_name";
  mkdir(dir.c_str(), 0755);
  const CommandResult r =
      run_command({"/bin/sh", "-c",
                   "cd '" + dir + "' && exec '" FLOPLINE_EXE "' run --no-summary -- '" +
                       FLOPLINE_WORKLOAD + "' launches 3"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto files = traces_named_in(r.out);
  ASSERT_EQ(files.size(), 1u) << r.out << r.err;
  // The shell's cd resolves symbolic links, so the trace is named under the directory's
  // physical path (the build folder may be a link on the GPU machine).
  const std::string physical = std::filesystem::canonical(dir).string();
  EXPECT_EQ(files[0].rfind(physical + "/flopline-", 0), 0u) << files[0] << " not in " << physical;
  const TraceView t = must_load(files[0]);
  EXPECT_EQ(t.by_cat("kernel").size(), 3u);
  std::remove(files[0].c_str());
}

TEST(Capture, MemcpyBytesMatch) {
  const RunResult r = flopline_run("memcpy", {FLOPLINE_WORKLOAD, "memcpy"});
  ASSERT_EQ(r.result.exit_code, 0) << describe(r);
  ASSERT_EQ(r.files.size(), 1u) << describe(r);
  const TraceView t = must_load(r.files[0]);
  std::map<std::string, double> bytes_by_kind;
  for (const SliceView& s : t.by_cat("gpu_memcpy")) {
    // The reader keeps "bytes" as the slice's metrics rather than in its args.
    const auto b =
        s.metrics.has_bytes() ? std::optional<double>(s.metrics.bytes) : arg_number(s, "bytes");
    ASSERT_TRUE(b.has_value()) << s.args;
    for (const char* kind : {"HtoD", "DtoH", "DtoD"}) {
      if (s.name.find(kind) != std::string::npos) bytes_by_kind[kind] += *b;
    }
  }
  EXPECT_EQ(bytes_by_kind["HtoD"], double(64u << 20));
  EXPECT_EQ(bytes_by_kind["DtoH"], double(16u << 20));
  EXPECT_EQ(bytes_by_kind["DtoD"], double(32u << 20));
  double set_bytes = 0;
  for (const SliceView& s : t.by_cat("gpu_memset")) {
    set_bytes += s.metrics.has_bytes() ? s.metrics.bytes : arg_number(s, "bytes").value_or(0);
  }
  EXPECT_EQ(set_bytes, double(8u << 20));
}

TEST(Capture, NvtxRangesNestAsPushed) {
  const RunResult r = flopline_run("nvtx", {FLOPLINE_WORKLOAD, "nvtx"});
  ASSERT_EQ(r.result.exit_code, 0) << describe(r);
  ASSERT_EQ(r.files.size(), 1u) << describe(r);
  const TraceView t = must_load(r.files[0]);
  for (const std::string n : {"0", "1"}) {
    const auto outer = t.named("user_annotation", "outer" + n);
    const auto middle = t.named("user_annotation", "middle" + n);
    const auto inner = t.named("user_annotation", "inner" + n);
    ASSERT_EQ(outer.size(), 1u) << "thread " << n;
    ASSERT_EQ(middle.size(), 1u);
    ASSERT_EQ(inner.size(), 1u);
    EXPECT_EQ(outer[0].name, "outer" + n);  // the suffix is taken off the name
    EXPECT_EQ(outer[0].tid, middle[0].tid);
    EXPECT_EQ(middle[0].tid, inner[0].tid);
    EXPECT_LE(outer[0].start, middle[0].start);
    EXPECT_LE(middle[0].start, inner[0].start);
    EXPECT_GE(outer[0].end, middle[0].end);
    EXPECT_GE(middle[0].end, inner[0].end);
    EXPECT_LT(outer[0].ref.row, middle[0].ref.row);
    EXPECT_LT(middle[0].ref.row, inner[0].ref.row);
    EXPECT_DOUBLE_EQ(outer[0].metrics.flops, 1e9);
    EXPECT_DOUBLE_EQ(outer[0].metrics.bytes, 2e6);
    // The operator's GPU extent on its stream, with its counts.
    const auto gpu = t.named("gpu_user_annotation", "outer" + n);
    ASSERT_EQ(gpu.size(), 1u);
    EXPECT_DOUBLE_EQ(gpu[0].metrics.flops, 1e9);
    // Launches inside each range: 9 kernels under outer, 4 under inner.
    std::size_t in_outer = 0, in_inner = 0;
    for (const SliceView& k : t.by_cat("kernel")) {
      const FlowView* f = t.flow_to(k);
      if (f == nullptr || f->from.tid != outer[0].tid) continue;
      if (f->from.start >= outer[0].start && f->from.end <= outer[0].end) ++in_outer;
      if (f->from.start >= inner[0].start && f->from.end <= inner[0].end) ++in_inner;
    }
    EXPECT_EQ(in_outer, 9u);
    EXPECT_EQ(in_inner, 4u);
  }
  const auto o0 = t.named("user_annotation", "outer0");
  const auto o1 = t.named("user_annotation", "outer1");
  ASSERT_FALSE(o0.empty());
  ASSERT_FALSE(o1.empty());
  EXPECT_NE(o0[0].tid, o1[0].tid) << "each thread's ranges stay on that thread";
}

TEST(Capture, EightThreadsOnEightStreamsLoseNothing) {
  const RunResult r = flopline_run("threads", {FLOPLINE_WORKLOAD, "threads", "8", "5000"});
  ASSERT_EQ(r.result.exit_code, 0) << describe(r);
  ASSERT_EQ(r.files.size(), 1u) << describe(r);
  const TraceView t = must_load(r.files[0]);
  const auto kernels = t.named("kernel", "flopline_empty_kernel");
  EXPECT_EQ(kernels.size(), 40000u);
  std::map<std::int64_t, std::size_t> per_stream;
  std::set<std::int64_t> launch_threads;
  for (const SliceView& k : kernels) ++per_stream[k.tid];
  EXPECT_EQ(per_stream.size(), 8u);
  for (const auto& [stream, n] : per_stream) EXPECT_EQ(n, 5000u) << "stream " << stream;
  expect_launch_flows(t, kernels);
  for (const SliceView& k : kernels) {
    if (const FlowView* f = t.flow_to(k)) launch_threads.insert(f->from.tid);
  }
  EXPECT_EQ(launch_threads.size(), 8u);
  EXPECT_EQ(t.trace.report.dropped_records, 0u);
}

TEST(Capture, CrashLeavesTraceAndRunReportsIt) {
  const RunResult r = flopline_run("crash", {FLOPLINE_WORKLOAD, "crash", "100"});
  EXPECT_EQ(r.result.exit_code, 134) << describe(r);
  EXPECT_NE(r.result.err.find("SIGABRT"), std::string::npos) << describe(r);
  ASSERT_EQ(r.files.size(), 1u) << describe(r);
  const TraceView t = must_load(r.files[0]);
  EXPECT_EQ(t.named("kernel", "flopline_empty_kernel").size(), 100u);
}

TEST(Capture, ForkedChildWritesItsOwnTrace) {
  const RunResult r = flopline_run("fork", {FLOPLINE_WORKLOAD, "fork"});
  ASSERT_EQ(r.result.exit_code, 0) << describe(r);
  ASSERT_EQ(r.files.size(), 2u) << describe(r);
  std::size_t parent = 0, child = 0;
  std::set<std::int64_t> pids;
  for (const std::string& f : r.files) {
    const TraceView t = must_load(f);
    const std::size_t p = t.named("kernel", "flopline_empty_kernel").size();
    const std::size_t c = t.named("kernel", "flopline_child_kernel").size();
    if (p > 0) {
      EXPECT_EQ(p, 20u);
      EXPECT_EQ(c, 0u);
      ++parent;
    }
    if (c > 0) {
      EXPECT_EQ(c, 10u);
      EXPECT_EQ(p, 0u);
      ++child;
    }
    for (const SliceView& s : t.by_cat("cuda_runtime")) pids.insert(s.pid);
  }
  EXPECT_EQ(parent, 1u);
  EXPECT_EQ(child, 1u);
  EXPECT_EQ(pids.size(), 2u);
}

TEST(Capture, DeviceResetWritesTheTrace) {
  const RunResult r = flopline_run("reset", {FLOPLINE_WORKLOAD, "reset", "50"});
  ASSERT_EQ(r.result.exit_code, 0) << describe(r);
  ASSERT_EQ(r.files.size(), 1u) << describe(r);
  const TraceView t = must_load(r.files[0]);
  EXPECT_EQ(t.named("kernel", "flopline_empty_kernel").size(), 50u);
}

TEST(Capture, CublasAndDriverLaunchesKeepTheirLaunchSite) {
  const RunResult r = flopline_run("cublas", {FLOPLINE_WORKLOAD, "cublas"});
  ASSERT_NE(r.result.exit_code, 77) << "cuBLAS could not be loaded: " << r.result.err;
  ASSERT_EQ(r.result.exit_code, 0) << describe(r);
  ASSERT_EQ(r.files.size(), 1u) << describe(r);
  const TraceView t = must_load(r.files[0]);
  const auto range = t.named("user_annotation", "sgemm 1024 x3");
  ASSERT_EQ(range.size(), 1u);
  std::size_t gemm_in_range = 0, driver_launched = 0;
  std::string sources;
  for (const SliceView& k : t.by_cat("kernel")) {
    const FlowView* f = t.flow_to(k);
    ASSERT_NE(f, nullptr) << "kernel without launch site: " << k.name;
    EXPECT_LE(f->from.start, k.start);
    if (k.name.find("flopline_empty_kernel") != std::string::npos) {
      // Launched with cuLaunchKernel: the driver call is the launch site.
      EXPECT_EQ(f->from.cat, "cuda_driver");
      EXPECT_EQ(f->from.name, "cuLaunchKernel");
      ++driver_launched;
      continue;
    }
    if (sources.find(f->from.name) == std::string::npos) sources += f->from.name + " ";
    if (f->from.tid == range[0].tid && f->from.start >= range[0].start &&
        f->from.end <= range[0].end) {
      ++gemm_in_range;
    }
  }
  EXPECT_GE(gemm_in_range, 3u) << "launch sites: " << sources;
  EXPECT_EQ(driver_launched, 5u);
  std::printf("cuBLAS launch sites: %s\n", sources.c_str());
  const auto op = t.named("gpu_user_annotation", "sgemm 1024 x3");
  ASSERT_EQ(op.size(), 1u);
  EXPECT_DOUBLE_EQ(op[0].metrics.flops, 6.442450944e9);
}

TEST(Capture, SessionApiWritesOperatorWithFlops) {
  const std::string path = out_dir() + "/session.json";
  std::remove(path.c_str());
  const CommandResult r = run_command({FLOPLINE_WORKLOAD, "session", path});
  ASSERT_NE(r.exit_code, 77) << "gpu_workload was built without the C++ API (flopline_api)";
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const TraceView t = must_load(path);
  EXPECT_EQ(t.named("kernel", "flopline_scale_kernel").size(), 30u);
  const auto op = t.named("gpu_user_annotation", "scale 1M");
  ASSERT_EQ(op.size(), 1u);
  EXPECT_DOUBLE_EQ(op[0].metrics.flops, 30.0 * (1 << 20));
  EXPECT_DOUBLE_EQ(op[0].metrics.bytes, 30.0 * 8 * (1 << 20));
}

TEST(Capture, TritonKernelsInsideTheirNvtxRanges) {
  const CommandResult probe = run_command({FLOPLINE_PYTHON, "-c", "import torch, triton"});
  ASSERT_EQ(probe.exit_code, 0) << "import torch, triton failed: " << probe.err;
  const RunResult r = flopline_run("triton", {FLOPLINE_PYTHON, FLOPLINE_TRITON_SCRIPT},
                                   {"TORCHINDUCTOR_COMPILE_THREADS=1", "PYTHONUNBUFFERED=1"});
  ASSERT_EQ(r.result.exit_code, 0) << describe(r);
  ASSERT_GE(r.files.size(), 1u) << describe(r);
  // The main process's trace is the one with the Triton kernel.
  bool found = false;
  for (const std::string& f : r.files) {
    const TraceView t = must_load(f);
    const auto adds = t.named("kernel", "flopline_add_kernel");
    if (adds.empty()) continue;
    found = true;
    const auto range = t.named("user_annotation", "triton_add");
    ASSERT_EQ(range.size(), 1u);
    EXPECT_EQ(range[0].name, "triton_add");
    std::size_t inside = 0;
    for (const SliceView& k : adds) {
      const FlowView* f2 = t.flow_to(k);
      ASSERT_NE(f2, nullptr) << "Triton kernel without its launch";
      EXPECT_LE(f2->from.start, k.start);
      if (f2->from.tid == range[0].tid && f2->from.start >= range[0].start &&
          f2->from.end <= range[0].end) {
        ++inside;
      }
    }
    EXPECT_EQ(inside, 10u);
    const auto op = t.named("gpu_user_annotation", "triton_add");
    ASSERT_EQ(op.size(), 1u);
    EXPECT_DOUBLE_EQ(op[0].metrics.flops, 10.0 * (1 << 24));
    EXPECT_DOUBLE_EQ(op[0].metrics.bytes, 10.0 * 12 * (1 << 24));
    // torch.compile's generated Triton kernels, inside their range.
    const auto compiled = t.named("user_annotation", "compiled_softmax_matmul");
    ASSERT_EQ(compiled.size(), 1u);
    std::size_t generated = 0;
    for (const SliceView& k : t.named("kernel", "triton_")) {
      const FlowView* f2 = t.flow_to(k);
      if (f2 != nullptr && f2->from.tid == compiled[0].tid && f2->from.start >= compiled[0].start &&
          f2->from.end <= compiled[0].end) {
        ++generated;
      }
    }
    EXPECT_GE(generated, 5u) << "torch.compile kernels inside compiled_softmax_matmul";
  }
  EXPECT_TRUE(found) << describe(r);
  EXPECT_NE(r.result.out.find("triton_add"), std::string::npos) << "summary names the operator";
  EXPECT_NE(r.result.out.find("TFLOP/s"), std::string::npos);
}

}  // namespace
}  // namespace flopline::gputest

int main(int argc, char** argv) {
  return flopline::gputest::run_gpu_tests(argc, argv);
}
