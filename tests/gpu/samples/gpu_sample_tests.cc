// GPU tests of the samples (label gpu): each runs under `flopline run`, and its trace must
// hold the operators and kernel counts the sample's code implies; --validate and the
// fused-vs-unfused test must pass. Without a CUDA device: "skipped: no CUDA device",
// exit 77; anything else missing (PyTorch and Triton included) is a failure.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "gpu_test_main.h"
#include "gpu_test_support.h"

namespace flopline::gputest {
namespace {

RunResult run_sample(const std::string& name, const std::vector<std::string>& command,
                     const std::vector<std::string>& env = {}) {
  return run_under_flopline(FLOPLINE_EXE, gpu_test_out_dir(FLOPLINE_SAMPLE_TEST_OUT) + "/" + name,
                            command, env);
}

std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// The operators (GPU-extent slices) named exactly `name`.
std::vector<SliceView> operators(const TraceView& t, const std::string& name) {
  std::vector<SliceView> v;
  for (const SliceView& s : t.named("gpu_user_annotation", name)) {
    if (s.name == name) v.push_back(s);
  }
  return v;
}

std::vector<SliceView> ranges(const TraceView& t, const std::string& name) {
  std::vector<SliceView> v;
  for (const SliceView& s : t.named("user_annotation", name)) {
    if (s.name == name) v.push_back(s);
  }
  return v;
}

// Every kernel in the trace came from a launch the trace also holds: nothing is invisible.
void expect_every_kernel_launched(const TraceView& t) {
  std::size_t orphans = 0;
  const auto kernels = t.by_cat("kernel");
  for (const SliceView& k : kernels) orphans += t.flow_to(k) == nullptr ? 1 : 0;
  EXPECT_GT(kernels.size(), 0u);
  EXPECT_EQ(orphans, 0u) << "kernels without their launch";
  EXPECT_EQ(t.trace.report.dropped_records, 0u);
}

TEST(Samples, MatmulBenchValidatesEveryDtype) {
  for (const char* dtype : {"fp32", "tf32", "bf16"}) {
    const CommandResult r = run_command({FLOPLINE_MATMUL_BENCH, "--validate", "--skip-run",
                                         "--dtype", dtype, "--provider", "all", "--seed", "7"});
    ASSERT_EQ(r.exit_code, 0) << dtype << "\n" << r.out << r.err;
    EXPECT_EQ(count_of(r.out, "Validation max abs diff on 1024x1024"), 2u) << r.out << r.err;
    EXPECT_EQ(count_of(r.out, ": ok)"), 2u) << r.out;
    EXPECT_EQ(r.out.find("Allocating"), std::string::npos) << "--skip-run ran the big matmul";
  }
}

TEST(Samples, MatmulBenchProvidersAreOperatorsWithFlops) {
  const RunResult r =
      run_sample("matmul_bench", {FLOPLINE_MATMUL_BENCH, "--size", "2048", "--provider", "all",
                                  "--dtype", "tf32", "--reps", "2", "--seed", "1"});
  ASSERT_EQ(r.result.exit_code, 0) << describe(r);
  ASSERT_EQ(r.files.size(), 1u) << describe(r);
  EXPECT_EQ(count_of(r.result.out, "Matmul completed in"), 4u) << describe(r);
  EXPECT_EQ(count_of(r.result.out, "Output checksum: "), 2u) << describe(r);
  const TraceView t = must_load(r.files[0]);
  expect_every_kernel_launched(t);
  for (const std::string provider : {"builtin", "cublas"}) {
    const std::string name = provider + " matmul tf32 2048x2048x2048";
    const auto ops = operators(t, name);
    ASSERT_EQ(ops.size(), 2u) << name;
    for (const SliceView& op : ops) {
      EXPECT_DOUBLE_EQ(op.metrics.flops, 2.0 * 2048 * 2048 * 2048) << name;
      EXPECT_GT(op.end, op.start) << name;
    }
    for (const SliceView& range : ranges(t, name)) {
      EXPECT_GE(t.launched_in(range).size(), 1u) << name << ": no kernel inside its range";
    }
    // The run's summary ranks the operators by GPU time with their TFLOP/s.
    EXPECT_NE(r.result.out.find(name), std::string::npos) << describe(r);
  }
}

TEST(Samples, FusedSoftmaxBenchShowsEveryKernel) {
  const RunResult r = run_sample("fused_softmax_bench", {FLOPLINE_FUSED_SOFTMAX_BENCH, "--sizes",
                                                         "128,256", "--reps", "3", "--seed", "3"});
  ASSERT_EQ(r.result.exit_code, 0) << describe(r);
  ASSERT_EQ(r.files.size(), 1u) << describe(r);
  EXPECT_EQ(count_of(r.result.out, "test: max abs diff fused vs unfused"), 2u) << describe(r);
  EXPECT_EQ(count_of(r.result.out, "(atol 1e-02): ok"), 2u) << describe(r);
  EXPECT_EQ(count_of(r.result.out, "Wall: Avg="), 6u) << describe(r);
  EXPECT_EQ(count_of(r.result.out, "CPU: Avg="), 6u) << describe(r);
  const TraceView t = must_load(r.files[0]);
  expect_every_kernel_launched(t);
  for (const std::string size : {"128", "256"}) {
    for (const std::string provider : {"test", "unfused", "fused"}) {
      const std::string name = provider + " softmax(A@B, dim=0) tf32 " + size;
      const auto rs = ranges(t, name);
      ASSERT_EQ(rs.size(), 3u) << name;
      ASSERT_EQ(operators(t, name).size(), 3u) << name;
      EXPECT_GT(operators(t, name)[0].metrics.flops, 0) << name;
      // unfused: a matmul and a softmax kernel at least; fused: at least its one kernel.
      const std::size_t least = provider == "fused" ? 1 : provider == "unfused" ? 2 : 3;
      for (const SliceView& range : rs) EXPECT_GE(t.launched_in(range).size(), least) << name;
      // The fused kernel's launch sequence is in the range's args: which path was timed.
      const bool has_plan = rs[0].args.find("\"plan\":\"") != std::string::npos;
      EXPECT_EQ(has_plan, provider != "unfused") << name << ": " << rs[0].args;
    }
  }
}

TEST(Samples, VectorAddConfigurationsAreOperatorsWithBandwidth) {
  const std::int64_t n = 1 << 20;
  const RunResult r = run_sample("vector_add", {FLOPLINE_VECTOR_ADD, "--sizes", std::to_string(n),
                                                "--blocks", "128,256", "--reps", "3"});
  ASSERT_EQ(r.result.exit_code, 0) << describe(r);
  ASSERT_EQ(r.files.size(), 1u) << describe(r);
  EXPECT_EQ(count_of(r.result.out, " ok\n"), 9u)
      << describe(r);  // 2 blocks x 2 widths x 2 grids + builtin
  const TraceView t = must_load(r.files[0]);
  expect_every_kernel_launched(t);
  std::size_t configs = 0;
  for (const std::string block : {"128", "256"}) {
    for (const std::string vec : {"1", "4"}) {
      for (const std::string grid : {"cover", "persistent"}) {
        const std::string name = "vector_add block=" + block + " vec=" + vec + " grid=" + grid +
                                 " n=" + std::to_string(n);
        const auto rs = ranges(t, name);
        ASSERT_EQ(rs.size(), 4u) << name;  // one untimed + 3 timed launches
        for (const SliceView& range : rs) {
          const auto k = t.launched_in(range);
          ASSERT_EQ(k.size(), 1u) << name;
          EXPECT_NE(k[0].name.find("vector_add_kernel"), std::string::npos) << k[0].name;
        }
        const auto ops = operators(t, name);
        ASSERT_EQ(ops.size(), 4u) << name;
        EXPECT_DOUBLE_EQ(ops[0].metrics.bytes, 12.0 * n) << name;
        ++configs;
      }
    }
  }
  EXPECT_EQ(configs, 8u);
  EXPECT_EQ(operators(t, "vector_add builtin n=" + std::to_string(n)).size(), 4u);
}

TEST(Samples, PlainCudaIsProfiledFromOutside) {
  const RunResult r = run_sample("plain_cuda", {FLOPLINE_PLAIN_CUDA, "--iters", "7"});
  ASSERT_EQ(r.result.exit_code, 0) << describe(r);
  ASSERT_EQ(r.files.size(), 1u) << describe(r);
  const TraceView t = must_load(r.files[0]);
  expect_every_kernel_launched(t);
  EXPECT_EQ(t.named("kernel", "plain_saxpy").size(), 7u);
  EXPECT_EQ(t.named("kernel", "plain_scale").size(), 7u);
  EXPECT_EQ(t.named("kernel", "plain_init").size(), 3u);
  EXPECT_EQ(t.named("kernel", "plain_sum").size(), 1u);
  EXPECT_GE(t.named("gpu_memset", "").size(), 1u);
  EXPECT_EQ(t.named("gpu_memcpy", "HtoD").size(), 1u);
  EXPECT_EQ(t.named("gpu_memcpy", "DtoH").size(), 2u);
  // saxpy and scale ran on two different streams.
  const auto saxpy = t.named("kernel", "plain_saxpy");
  const auto scale = t.named("kernel", "plain_scale");
  EXPECT_NE(saxpy[0].tid, scale[0].tid);
  const auto gemm = ranges(t, "cublas sgemm 1024");
  ASSERT_EQ(gemm.size(), 1u);
  EXPECT_GE(t.launched_in(gemm[0]).size(), 7u) << "cuBLAS kernels inside their range";
  const auto op = operators(t, "cublas sgemm 1024");
  ASSERT_EQ(op.size(), 1u);
  EXPECT_DOUBLE_EQ(op[0].metrics.flops, 7 * 2.0 * 1024 * 1024 * 1024);
}

TEST(Samples, PythonTritonKernelsAreVisibleInTheirRanges) {
  const CommandResult probe = run_command({"python3", "-c", "import torch, triton"});
  ASSERT_EQ(probe.exit_code, 0) << "import torch, triton failed: " << probe.err;
  const RunResult r = run_sample(
      "triton_samples",
      {"python3", FLOPLINE_TRITON_SAMPLES, "--n", "1048576", "--sizes", "128,256", "--reps", "4"},
      {"TORCHINDUCTOR_COMPILE_THREADS=1", "PYTHONUNBUFFERED=1"});
  ASSERT_EQ(r.result.exit_code, 0) << describe(r);
  ASSERT_GE(r.files.size(), 1u) << describe(r);
  bool found = false;
  for (const std::string& f : r.files) {
    const TraceView t = must_load(f);
    if (ranges(t, "triton add direct").empty()) continue;  // a compile worker's trace
    found = true;
    for (const std::string how : {"direct", "torch.compile", "triton_op"}) {
      const auto rs = ranges(t, "triton add " + how);
      ASSERT_EQ(rs.size(), 1u) << how;
      std::size_t adds = 0;
      for (const SliceView& k : t.launched_in(rs[0])) {
        adds += k.name.find("flopline_sample_add_kernel") != std::string::npos ? 1 : 0;
      }
      EXPECT_EQ(adds, 4u) << how << ": the Triton kernel, once per call";
      const auto op = operators(t, "triton add " + how);
      ASSERT_EQ(op.size(), 1u) << how;
      EXPECT_DOUBLE_EQ(op[0].metrics.flops, 4.0 * 1048576) << how;
    }
    for (const std::string s : {"128", "256"}) {
      const auto fused = ranges(t, "triton fused_mm_softmax dim=0 " + s);
      ASSERT_EQ(fused.size(), 1u) << s;
      std::size_t k = 0;
      for (const SliceView& kern : t.launched_in(fused[0])) {
        k += kern.name.find("flopline_sample_mm_softmax_cols_kernel") != std::string::npos ? 1 : 0;
      }
      EXPECT_EQ(k, 4u) << s;
      EXPECT_GT(operators(t, "triton fused_mm_softmax dim=0 " + s)[0].metrics.flops, 0);
      EXPECT_EQ(ranges(t, "compare " + s).size(), 1u);
    }
  }
  EXPECT_TRUE(found) << describe(r);
}

}  // namespace
}  // namespace flopline::gputest

int main(int argc, char** argv) {
  return flopline::gputest::run_gpu_tests(argc, argv);
}
