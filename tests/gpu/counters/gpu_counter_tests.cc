// GPU tests of hardware counters (flopline run --counters, --gpu-metrics): the samples
// and a Triton matmul run under `flopline run`, and each kernel's counted FLOPs and DRAM
// bytes are compared with the work the program is known to do. Without a CUDA device
// the binary prints "skipped: no CUDA device" and exits 77.
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "flopline/trace/json_value.h"
#include "gpu_test_main.h"
#include "gpu_test_support.h"
#include "trace_query.h"

namespace flopline::gputest {
namespace {

std::string out_dir() {
  return gpu_test_out_dir(FLOPLINE_COUNTER_TEST_OUT);
}

RunResult counted_run(const std::string& name, const std::vector<std::string>& command,
                      const std::vector<std::string>& options = {"--counters"},
                      const std::vector<std::string>& env = {}) {
  return run_under_flopline(FLOPLINE_EXE, out_dir() + "/" + name, command, env, options);
}

// M, N, K from a range name that ends in "MxNxK", or in "N" for a square problem.
bool mnk(const std::string& name, double* m, double* n, double* k) {
  static const std::regex three(R"((\d+)x(\d+)x(\d+))");
  static const std::regex one(R"( (\d+)$)");
  std::smatch s;
  if (std::regex_search(name, s, three)) {
    *m = std::stod(s[1]);
    *n = std::stod(s[2]);
    *k = std::stod(s[3]);
    return true;
  }
  if (!std::regex_search(name, s, one)) return false;
  *m = *n = *k = std::stod(s[1]);
  return true;
}

std::string text_arg(const SliceView& s, const std::string& key) {
  const auto m = trace::json_member(s.args, key);
  return m ? trace::json_string(*m).value_or("") : "";
}

// The counted FLOPs of the kernels an operator launched; every kernel must carry them.
double counted_flops(const TraceView& t, const SliceView& range) {
  double sum = 0;
  const auto kernels = t.launched_in(range);
  EXPECT_FALSE(kernels.empty()) << range.name << " [" << range.start << ", " << range.end << ")";
  for (const SliceView& k : kernels) {
    // The reader keeps "flops" as the slice's metrics, not in its args.
    EXPECT_TRUE(k.metrics.has_flops())
        << k.name << " in " << range.name << " has no counted FLOPs: " << k.args;
    EXPECT_NE(text_arg(k, "flops source").find("counters"), std::string::npos) << k.args;
    sum += std::max(0.0, k.metrics.flops);
  }
  return sum;
}

void expect_within(double got, double want, double rel, const std::string& what) {
  EXPECT_NEAR(got / want, 1.0, rel) << what << ": counted " << got << ", expected " << want;
}

TEST(Counters, MatmulsCountTwoMnk) {
  for (const char* dtype : {"fp32", "tf32", "bf16"}) {
    for (const char* size : {"1024", "1536"}) {
      const std::string name = std::string("matmul_") + dtype + "_" + size;
      const RunResult r =
          counted_run(name, {FLOPLINE_MATMUL_BENCH, "--size", size, "--provider", "all", "--dtype",
                             dtype, "--reps", "2", "--seed", "1"});
      ASSERT_EQ(r.result.exit_code, 0) << describe(r);
      ASSERT_EQ(r.files.size(), 1u) << describe(r);
      const TraceView t = must_load(r.files[0]);
      int ops = 0;
      for (const char* provider : {"builtin matmul", "cublas matmul"}) {
        for (const SliceView& op : t.named("user_annotation", provider)) {
          double m = 0, n = 0, k = 0;
          ASSERT_TRUE(mnk(op.name, &m, &n, &k)) << op.name;
          expect_within(counted_flops(t, op), 2 * m * n * k, 0.01, op.name);
          ++ops;
        }
      }
      EXPECT_GE(ops, 4) << name << ": two providers, two timed matmuls each";
    }
  }
}

// How many launches the trace says were measured (its metadata).
long measured_launches(const TraceView& t) {
  for (const auto& [k, v] : t.trace.info) {
    if (k == "counters measured launches") return std::stol(v);
  }
  return -1;
}

TEST(Counters, CountingChangesNoResult) {
  // --validate compares each provider with an fp64 reference and exits 1 on a miss.
  for (const char* dtype : {"tf32", "bf16"}) {
    const RunResult r = counted_run(
        std::string("validate_") + dtype,
        {FLOPLINE_MATMUL_BENCH, "--validate", "--skip-run", "--dtype", dtype}, {"--counters=all"});
    EXPECT_EQ(r.result.exit_code, 0) << describe(r);
    ASSERT_EQ(r.files.size(), 1u) << describe(r);
    EXPECT_GT(measured_launches(must_load(r.files[0])), 2) << "the validated matmuls were measured";
  }
}

TEST(Counters, TritonMatmulCountsTwoMnk) {
  const CommandResult probe = run_command({"python3", "-c", "import torch, triton"});
  ASSERT_EQ(probe.exit_code, 0) << "PyTorch and Triton are needed: " << probe.err;
  const RunResult r = counted_run("triton_matmul", {"python3", FLOPLINE_TRITON_MATMUL},
                                  {"--counters"}, {"PYTHONUNBUFFERED=1"});
  ASSERT_EQ(r.result.exit_code, 0) << describe(r);
  ASSERT_GE(r.files.size(), 1u) << describe(r);
  const TraceView t = must_load(r.files[0]);
  const auto ops = t.named("user_annotation", "triton matmul");
  ASSERT_EQ(ops.size(), 2u) << describe(r);
  for (const SliceView& op : ops) {
    double m = 0, n = 0, k = 0;
    ASSERT_TRUE(mnk(op.name, &m, &n, &k));
    expect_within(counted_flops(t, op), 2 * m * n * k, 0.01, op.name);
    for (const SliceView& kernel : t.launched_in(op)) {
      EXPECT_EQ(text_arg(kernel, "precision"), "fp16") << kernel.args;
    }
  }
}

TEST(Counters, ElementwiseAddMovesThreeNBytes) {
  // Vectors far larger than L2, so no input is found in L2 whatever ran before.
  const double n = 67108864;
  const RunResult r = counted_run("vector_add", {FLOPLINE_VECTOR_ADD, "--sizes", "67108864",
                                                 "--blocks", "256,1024", "--reps", "3"});
  ASSERT_EQ(r.result.exit_code, 0) << describe(r);
  ASSERT_EQ(r.files.size(), 1u) << describe(r);
  const TraceView t = must_load(r.files[0]);
  int checked = 0;
  for (const SliceView& op : t.named("user_annotation", "n=67108864")) {
    for (const SliceView& k : t.launched_in(op)) {
      const auto bytes = arg_number(k, "dram bytes");
      ASSERT_TRUE(bytes.has_value()) << k.name << ": " << k.args;
      expect_within(*bytes, 3 * n * 4, 0.05, op.name + " DRAM bytes");
      expect_within(arg_number(k, "dram bytes read").value_or(0), 2 * n * 4, 0.01,
                    op.name + " DRAM bytes read");
      expect_within(arg_number(k, "dram bytes written").value_or(0), n * 4, 0.01,
                    op.name + " DRAM bytes written");
      ASSERT_TRUE(k.metrics.has_flops()) << k.args;
      expect_within(k.metrics.flops, n, 0.01, op.name + " FLOPs (one add per element)");
      ++checked;
    }
  }
  EXPECT_GE(checked, 4) << describe(r);
}

// A kernel's bytes written are its own stores, whatever the L2 holds when it starts: a
// kernel that writes nothing counts nothing even right after another left 32 MB of dirty
// lines, and one whose 4 MB output stays in L2 counts its 4 MB. Reads count what comes
// from DRAM; the probe's inputs are not in L2 when read.
TEST(Counters, BytesWrittenAreTheKernelsOwnStores) {
  const RunResult r = counted_run("dram_probe", {FLOPLINE_DRAM_PROBE}, {"--counters=all"});
  ASSERT_EQ(r.result.exit_code, 0) << describe(r);
  ASSERT_EQ(r.files.size(), 1u) << describe(r);
  const TraceView t = must_load(r.files[0]);
  // The probe prints "NAME READS WRITES" per kernel (bytes, by construction).
  static const std::regex line(R"((\w+) (\d+) (\d+))");
  std::istringstream out(r.result.out);
  int checked = 0;
  for (std::string text; std::getline(out, text);) {
    std::smatch m;
    if (!std::regex_match(text, m, line)) continue;
    const std::string name = m[1];
    const double reads = std::stod(m[2]), writes = std::stod(m[3]);
    int launches = 0;
    for (const SliceView& k : t.by_cat("kernel")) {
      if (k.name.find("::" + name + "(") == std::string::npos) continue;
      ASSERT_EQ(text_arg(k, "flops source"), "counters") << k.name << ": " << k.args;
      const double read = arg_number(k, "dram bytes read").value_or(-1);
      const double written = arg_number(k, "dram bytes written").value_or(-1);
      EXPECT_NEAR(written, writes, 0.01 * writes + 65536) << name << " bytes written; " << k.args;
      EXPECT_NEAR(read, reads, 0.01 * reads + 262144) << name << " bytes read; " << k.args;
      ++launches;
    }
    EXPECT_GE(launches, 1) << name << " has no kernel slice";
    ++checked;
  }
  EXPECT_EQ(checked, 7) << describe(r);
}

TEST(Counters, FusedMatmulSoftmaxCountsAtLeastItsMatmul) {
  const RunResult r =
      counted_run("fused_softmax", {FLOPLINE_FUSED_SOFTMAX_BENCH, "--sizes", "1024,2048",
                                    "--provider", "fused", "--dim", "rows", "--reps", "2"});
  ASSERT_EQ(r.result.exit_code, 0) << describe(r);
  ASSERT_EQ(r.files.size(), 1u) << describe(r);
  const TraceView t = must_load(r.files[0]);
  int checked = 0;
  for (const SliceView& op : t.by_cat("user_annotation")) {
    double m = 0, n = 0, k = 0;
    if (op.name.find("fused softmax") == std::string::npos || !mnk(op.name, &m, &n, &k)) continue;
    const double counted = counted_flops(t, op);
    EXPECT_GE(counted, 2 * m * n * k) << op.name;
    EXPECT_LT(counted, 2 * m * n * k * 1.2) << op.name << ": softmax adds a few FLOPs per score";
    ++checked;
  }
  if (checked < 2) {
    for (const SliceView& op : t.by_cat("user_annotation")) ADD_FAILURE() << "range: " << op.name;
  }
  EXPECT_GE(checked, 2) << describe(r);
}

TEST(Counters, LaterLaunchesTakeTheMeasuredValues) {
  const RunResult r = counted_run("inferred",
                                  {FLOPLINE_MATMUL_BENCH, "--size", "1024", "--provider", "cublas",
                                   "--dtype", "bf16", "--reps", "4", "--seed", "1"},
                                  {"--counters=1"});
  ASSERT_EQ(r.result.exit_code, 0) << describe(r);
  const TraceView t = must_load(r.files.at(0));
  std::map<std::string, std::vector<SliceView>> by_name;
  for (const SliceView& k : t.by_cat("kernel")) {
    if (k.name.find("gemm") != std::string::npos || k.name.find("nvjet") != std::string::npos) {
      by_name[k.name].push_back(k);
    }
  }
  int repeated = 0;
  for (const auto& [name, ks] : by_name) {
    if (ks.size() < 2) continue;  // cuBLAS's first call may pick another kernel once
    ++repeated;
    EXPECT_EQ(text_arg(ks[0], "flops source"), "counters") << name;
    EXPECT_TRUE(trace::json_member(ks[0].args, "counters replayed").has_value());
    for (std::size_t i = 1; i < ks.size(); ++i) {
      EXPECT_EQ(text_arg(ks[i], "flops source"), "counters (same work)") << name;
      EXPECT_EQ(ks[i].metrics.flops, ks[0].metrics.flops) << name;
    }
  }
  EXPECT_GE(repeated, 1) << "a matmul kernel launched four times";
  // The metadata names the metrics and how many launches were measured.
  bool named = false;
  for (const auto& [k, v] : t.trace.info) named = named || (k == "counter metrics" && !v.empty());
  EXPECT_TRUE(named);
}

TEST(Counters, RunSummaryShowsCountedRates) {
  // Plain NVTX ranges with no counts: every rate in the summary comes from the counters.
  const RunResult r = counted_run("summary", {"python3", FLOPLINE_TRITON_MATMUL}, {"--counters"},
                                  {"PYTHONUNBUFFERED=1"});
  ASSERT_EQ(r.result.exit_code, 0) << describe(r);
  const std::string& out = r.result.out;
  const std::size_t kernels = out.find("Kernels by GPU time");
  ASSERT_NE(kernels, std::string::npos) << out;
  EXPECT_NE(out.find("TFLOP/s", kernels), std::string::npos) << "kernel rows have counted rates:\n"
                                                             << out;
  EXPECT_NE(out.find("kernel time: "), std::string::npos) << out;
  EXPECT_NE(out.find("% measured, "), std::string::npos) << out;
  EXPECT_EQ(out.find("unavailable"), std::string::npos) << out;
}

// The mean of `key`'s samples taken while one of `kernels` ran (their GPU time, not the
// CPU time of the ranges that launched them); -1 without any. PM sampling leaves gaps
// without samples (docs/COUNTERS.md), so the kernels must run for longer than a gap.
double mean_during(const trace::Trace& t, const std::string& key,
                   const std::vector<SliceView>& kernels) {
  double sum = 0;
  int n = 0;
  for (const trace::CounterSeries& s : t.counters) {
    if (t.str(s.key) != key) continue;
    for (const trace::CounterPoint& p : s.points) {
      const bool during = std::any_of(kernels.begin(), kernels.end(), [&](const SliceView& k) {
        return p.ts >= k.start && p.ts < k.end;
      });
      if (during) {
        sum += p.value;
        ++n;
      }
    }
  }
  return n > 0 ? sum / n : -1;
}

// The kernels launched inside the ranges of `cat` whose names contain `part`.
std::vector<SliceView> kernels_launched_in(const TraceView& t, const std::string& cat,
                                           const std::string& part) {
  std::vector<SliceView> out;
  for (const SliceView& range : t.named(cat, part)) {
    for (SliceView& k : t.launched_in(range)) out.push_back(std::move(k));
  }
  return out;
}

TEST(Counters, GpuMetricsShowTensorActivityDuringMatmulsOnly) {
  // Enough matmuls and adds to outlast the sampling gaps above.
  const std::string script = std::string(FLOPLINE_MATMUL_BENCH) +
                             " --size 4096 --provider cublas --dtype bf16 --reps 200 && " +
                             FLOPLINE_VECTOR_ADD + " --sizes 67108864 --blocks 256 --reps 100";
  const RunResult r = counted_run("gpu_metrics", {"sh", "-c", script}, {"--gpu-metrics=50us"});
  ASSERT_EQ(r.result.exit_code, 0) << describe(r);
  ASSERT_EQ(r.files.size(), 2u) << describe(r);
  double matmul_tensor = -1, add_tensor = -1, add_dram = -1;
  for (const std::string& f : r.files) {
    const TraceView t = must_load(f);
    std::string info;
    for (const auto& [k, v] : t.trace.info) info += k + ": " + v + "\n";
    ASSERT_FALSE(t.trace.counters.empty()) << f << " has no GPU metrics tracks; metadata:\n"
                                           << info << describe(r);
    const std::vector<SliceView> matmuls =
        kernels_launched_in(t, "user_annotation", "cublas matmul");
    if (!matmuls.empty()) matmul_tensor = mean_during(t.trace, "tensor pipe active %", matmuls);
    const std::vector<SliceView> adds = kernels_launched_in(t, "user_annotation", "n=67108864");
    if (!adds.empty()) {
      add_tensor = mean_during(t.trace, "tensor pipe active %", adds);
      add_dram = mean_during(t.trace, "DRAM read GB/s", adds);
    }
  }
  EXPECT_GT(matmul_tensor, 30) << "tensor pipe during bf16 matmuls";
  EXPECT_GE(add_tensor, 0) << "samples during the adds";
  EXPECT_LT(add_tensor, 5) << "tensor pipe during elementwise adds";
  EXPECT_GT(add_dram, 500) << "DRAM read GB/s during the adds";
}

}  // namespace
}  // namespace flopline::gputest

int main(int argc, char** argv) {
  return flopline::gputest::run_gpu_tests(argc, argv);
}
