// fused_softmax_bench: the fused matmul+softmax experiment (../shared/seeds/003), in C++.
// softmax(A x B) over dim 0 (columns, as the write-up) or dim -1 (rows), three providers:
//   unfused  cuBLAS matmul (as PyTorch runs it) into a score matrix, then flopline's softmax
//   fused    flopline's fused matmul_softmax: the softmax runs in the matmul's epilogue
//            (docs/KERNELS.md: for small k the scores never go to memory; otherwise the
//            epilogue writes exp(s - tile max) and a light pass rescales it)
//   test     both, compared element by element (atol 1e-2, rtol 0, as the write-up)
// Each run is timed like the write-up's benchmark.measure (20 runs: Wall and CPU time,
// avg/min/std/max, inputs generated inside the timed region) plus the GPU time of the
// computation alone. Under `flopline run` every run is an operator ("fused softmax(A@B,
// dim=0) tf32 512") whose kernels are all in the trace: the point the write-up could not
// make with torch.profiler, where its Triton kernel left a blank.
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cublas_loader.h"
#include "flopline/kernels/matmul.h"
#include "flopline/kernels/softmax.h"
#include "flopline/session.h"
#include "sample_cli.h"
#include "sample_gpu.h"
#include "sample_timing.h"

namespace {

using flopline::kernels::DType;
using flopline::kernels::MatmulProblem;
using flopline::kernels::SoftmaxDim;
namespace kernels = flopline::kernels;
namespace samples = flopline::samples;

constexpr const char* kProgram = "fused_softmax_bench";
constexpr double kTestAtol = 1e-2;  // the write-up's assert_close(atol=1e-2, rtol=0)

struct Config {
  std::vector<std::int64_t> sizes;
  std::vector<std::string> providers;
  SoftmaxDim dim = SoftmaxDim::cols;
  DType in = DType::tf32;
  int reps = 20;
  std::uint64_t seed = 0;
};

Config parse(int argc, char** argv) {
  samples::SampleCli cli(
      kProgram,
      "softmax(A x B) for N x N matrices of N(0, N^-1/2) values: unfused (cuBLAS matmul + "
      "softmax),\n"
      "fused (softmax in the matmul's epilogue) and test (both, compared with atol 1e-2).\n"
      "Prints Wall, CPU and GPU time avg/min/std/max over the runs, as the write-up did.",
      {
          samples::value_option("sizes", "LIST", "matrix sides, comma-separated",
                                "128,256,512,1024,2048,4096"),
          samples::value_option("provider", "LIST", "test, unfused, fused or all", "all"),
          samples::value_option("dim", "D", "cols (dim 0, as the write-up) or rows (dim -1)",
                                "cols"),
          samples::value_option("dtype", "T", "tf32 (fp32 storage) or bf16 inputs; output fp32",
                                "tf32"),
          samples::value_option("reps", "R", "runs per size and provider", "20"),
          samples::value_option("seed", "S", "seed of the random inputs (default: a fresh one)"),
      });
  cli.parse(argc, argv);
  Config c;
  c.sizes = cli.integers("sizes");
  c.providers = cli.words("provider", {"test", "unfused", "fused"});
  const std::string dim = cli.text("dim");
  if (dim == "cols" || dim == "0") {
    c.dim = SoftmaxDim::cols;
  } else if (dim == "rows" || dim == "-1") {
    c.dim = SoftmaxDim::rows;
  } else {
    cli.fail("--dim must be cols or rows, got '" + dim + "'");
  }
  if (!kernels::parse_dtype(cli.text("dtype"), &c.in) ||
      (c.in != DType::tf32 && c.in != DType::bf16)) {
    cli.fail("--dtype must be tf32 or bf16, got '" + cli.text("dtype") + "'");
  }
  c.reps = static_cast<int>(cli.integer("reps"));
  if (c.reps < 1) cli.fail("--reps must be at least 1");
  c.seed =
      cli.flag("seed") ? static_cast<std::uint64_t>(cli.integer("seed")) : std::random_device{}();
  return c;
}

std::string op_text(SoftmaxDim dim, DType in, std::int64_t n) {
  return std::string("softmax(A@B, dim=") + (dim == SoftmaxDim::cols ? "0" : "-1") + ") " +
         kernels::dtype_name(in) + " " + std::to_string(n);
}

// Buffers of one size, allocated once (PyTorch's caching allocator makes the write-up's
// torch.empty nearly free too).
struct Problem {
  std::int64_t n = 0;
  DType in = DType::tf32;
  SoftmaxDim dim = SoftmaxDim::cols;
  samples::DeviceBuffer a, b, scores, fused_out, unfused_out;

  Problem(std::int64_t side, DType t, SoftmaxDim d)
      : n(side),
        in(t),
        dim(d),
        a(side * side * kernels::dtype_bytes(t)),
        b(side * side * kernels::dtype_bytes(t)),
        scores(side * side * sizeof(float)),
        fused_out(side * side * sizeof(float)),
        unfused_out(side * side * sizeof(float)) {}
  // Inputs of standard deviation n^-1/4 give scores of standard deviation 1, as attention
  // scales its scores. With the write-up's N(0,1) inputs the scores' spread grows as
  // sqrt(n), the softmax turns one-hot, and tf32's input rounding alone (cuBLAS and
  // flopline round differently) moves the largest probabilities by more than atol.
  float input_stddev() const { return static_cast<float>(std::pow(static_cast<double>(n), -0.25)); }
  MatmulProblem matmul_into(void* out) const {
    return {
        .a = a.get(), .b = b.get(), .c = out, .m = n, .n = n, .k = n, .in = in, .out = DType::f32};
  }
};

class Runner {
 public:
  Runner() : cublas_(std::make_unique<kernels::testing::Cublas>()) {
    if (!cublas_->ok()) {
      std::fprintf(stderr, "%s: cuBLAS is unavailable (%s); unfused uses flopline's matmul\n",
                   kProgram, cublas_->error().c_str());
    }
  }
  const char* matmul_name() const { return cublas_->ok() ? "cuBLAS" : "flopline"; }

  void fused(const Problem& p) {
    kernels::matmul_softmax(p.matmul_into(p.fused_out.get()), {.dim = p.dim, .range = false});
  }
  void unfused(const Problem& p) {
    const MatmulProblem mm = p.matmul_into(p.scores.get());
    if (cublas_->ok()) {
      if (!cublas_->matmul(mm.a, mm.b, mm.c, mm.m, mm.n, mm.k, mm.in, mm.out, nullptr)) {
        std::fprintf(stderr, "%s: cublas: %s\n", kProgram, cublas_->error().c_str());
        std::exit(1);
      }
    } else {
      kernels::matmul(mm, {.range = false});
    }
    kernels::softmax({.x = p.scores.get(),
                      .out = p.unfused_out.get(),
                      .m = p.n,
                      .n = p.n,
                      .in = DType::f32,
                      .out_type = DType::f32},
                     p.dim, nullptr, false);
  }

 private:
  std::unique_ptr<kernels::testing::Cublas> cublas_;
};

// The operator's cost: the same math either way; the unfused pair also writes and reads
// the fp32 score matrix, which its bytes count.
kernels::OpCost cost_of(const std::string& provider, const Problem& p) {
  kernels::OpCost c = kernels::matmul_softmax_cost(p.n, p.n, p.n, p.dim, p.in, DType::f32);
  c.name = provider + " " + op_text(p.dim, p.in, p.n);
  if (provider == "unfused") c.bytes += 2.0 * p.n * p.n * sizeof(float);
  if (provider == "test") {
    c.flops *= 2;
    c.bytes = 2 * c.bytes + 2.0 * p.n * p.n * sizeof(float);
  }
  return c;
}

// The launch sequence the fused kernel takes for this problem (its range's "plan" arg);
// empty for the unfused pair.
std::string plan_of(const std::string& provider, const Problem& p) {
  if (provider == "unfused") return {};
  const kernels::MatmulSoftmaxPlan plan =
      kernels::matmul_softmax_plan(p.matmul_into(p.fused_out.get()), {.dim = p.dim});
  return kernels::softmax_plan_name(plan.plan);
}

// Runs one provider `reps` times at one size; returns false when `test` finds a mismatch.
bool bench(Runner& runner, const std::string& provider, Problem& p, int reps, std::uint64_t seed) {
  std::vector<double> wall, cpu, gpu;
  cudaEvent_t start, stop;
  samples::check_cuda(cudaEventCreate(&start), "cudaEventCreate");
  samples::check_cuda(cudaEventCreate(&stop), "cudaEventCreate");
  const std::int64_t elems = p.n * p.n;
  double worst = 0;
  for (int r = 0; r < reps; ++r) {
    const samples::TimePoint t0 = samples::now();
    samples::fill_normal(p.a.get(), elems, p.in, seed + 2 * r, nullptr, p.input_stddev());
    samples::fill_normal(p.b.get(), elems, p.in, seed + 2 * r + 1, nullptr, p.input_stddev());
    const kernels::OpCost cost = cost_of(provider, p);
    samples::check_cuda(cudaEventRecord(start), "cudaEventRecord");
    {
      flopline::Range range(cost.name, cost.flops, cost.bytes, cost.precision,
                            plan_of(provider, p));
      if (provider != "fused") runner.unfused(p);
      if (provider != "unfused") runner.fused(p);
    }
    samples::check_cuda(cudaEventRecord(stop), "cudaEventRecord");
    samples::check_cuda(cudaEventSynchronize(stop), provider.c_str());
    const samples::TimePoint t1 = samples::now();
    float ms = 0;
    samples::check_cuda(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    wall.push_back(t1.wall_s - t0.wall_s);
    cpu.push_back(t1.cpu_s - t0.cpu_s);
    gpu.push_back(ms * 1e-3);
    if (provider == "test") {
      const double d = samples::max_abs_diff(p.fused_out.get(), DType::f32, p.unfused_out.get(),
                                             DType::f32, elems);
      worst = d > worst || d != d ? d : worst;
    }
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::printf("%s(%lld, '%s') {dim: %s, dtype: %s}, %d times, all results in seconds\n", kProgram,
              static_cast<long long>(p.n), provider.c_str(), p.dim == SoftmaxDim::cols ? "0" : "-1",
              kernels::dtype_name(p.in), reps);
  std::printf("Wall: %s\n", samples::format_summary(samples::summarize(wall)).c_str());
  std::printf("CPU: %s\n", samples::format_summary(samples::summarize(cpu)).c_str());
  std::printf("GPU: %s\n", samples::format_summary(samples::summarize(gpu)).c_str());
  bool ok = true;
  if (provider == "test") {
    ok = worst <= kTestAtol;  // false for NaN
    std::printf("test: max abs diff fused vs unfused %.3e (atol %.0e): %s\n", worst, kTestAtol,
                ok ? "ok" : "MISMATCH");
  }
  std::fflush(stdout);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  const Config cfg = parse(argc, argv);
  const std::string device = samples::require_device(kProgram);
  std::printf("Device: %s; seed %llu\n", device.c_str(), static_cast<unsigned long long>(cfg.seed));
  bool ok = true;
  try {
    Runner runner;
    std::printf("unfused: %s matmul + flopline softmax; fused: flopline matmul_softmax (%s path)\n",
                runner.matmul_name(), kernels::current_arch() >= 90 ? "wgmma" : "unfused fallback");
    for (const std::int64_t n : cfg.sizes) {
      Problem p(n, cfg.in, cfg.dim);
      // One untimed call each loads the kernels, as the write-up's first call compiled them.
      for (const std::string& provider : cfg.providers) {
        if (provider != "fused") runner.unfused(p);
        if (provider != "unfused") runner.fused(p);
      }
      samples::check_cuda(cudaDeviceSynchronize(), "warm-up");
      for (const std::string& provider : cfg.providers) {
        ok = bench(runner, provider, p, cfg.reps, cfg.seed) && ok;
      }
    }
  } catch (const std::exception& e) {  // KernelError, CudaError
    std::fprintf(stderr, "%s: %s\n", kProgram, e.what());
    return 1;
  }
  if (!ok)
    std::fprintf(stderr, "%s: fused and unfused results differ by more than atol\n", kProgram);
  return ok ? 0 : 1;
}
