// matmul_bench: the TorchScript-vs-Triton matmul comparison (../shared/seeds/000), in C++.
// TorchScript's matmul is cuBLAS ("cublas" here); the hand-written kernel is flopline's
// built-in matmul ("builtin"). Each timed matmul runs inside a flopline range carrying
// its FLOPs and bytes, so under `flopline run` each provider is an operator with its
// TFLOP/s and the FLOP/s table ranks them.
//
//   matmul_bench --size 46000 --provider all --dtype tf32
//   flopline run -o mm.json.gz -- matmul_bench --size 8192 --provider all
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cublas_loader.h"
#include "flopline/kernels/matmul.h"
#include "flopline/session.h"
#include "sample_cli.h"
#include "sample_gpu.h"

namespace {

using flopline::kernels::DType;
using flopline::kernels::MatmulProblem;
namespace samples = flopline::samples;

constexpr const char* kProgram = "matmul_bench";
constexpr std::int64_t kValidateSize = 1024;

struct Config {
  std::int64_t size = 10000;
  std::vector<std::string> providers;
  DType in = DType::tf32;
  std::uint64_t seed = 0;
  bool validate = false;
  bool skip_run = false;
  int reps = 1;
};

DType output_type(DType in) {
  return in == DType::bf16 ? DType::bf16 : DType::f32;
}

// The dtype as the original prints torch's ("torch.float32"), with the math it allows.
std::string dtype_words(DType in) {
  switch (in) {
    case DType::f32:
      return "float32 (fp32 FFMA, TF32 off)";
    case DType::tf32:
      return "float32 (TF32 tensor cores allowed)";
    case DType::bf16:
      return "bfloat16 (fp32 accumulation)";
    default:
      return flopline::kernels::dtype_name(in);
  }
}

// max |C - ref| / max |ref| that a correct kernel stays under at 1024^2 with N(0,1)
// inputs: fp32 rounding in a 1024-term sum; tf32's 10-bit inputs; bf16's 8-bit output.
double validation_limit(DType in) {
  switch (in) {
    case DType::f32:
      return 1e-5;
    case DType::tf32:
      return 5e-3;
    default:
      return 2e-2;
  }
}

Config parse(int argc, char** argv) {
  samples::SampleCli cli(
      kProgram,
      "C = A x B on square matrices of N(0,1) values, with flopline's built-in matmul\n"
      "and/or cuBLAS: the TorchScript-vs-Triton comparison. Prints the time, GFLOP/s\n"
      "and an output checksum per provider; each timed matmul is a flopline operator.",
      {
          samples::value_option("size", "N", "matrix side (square matrices)", "10000"),
          samples::value_option("provider", "LIST", "builtin, cublas or all", "all"),
          samples::value_option("dtype", "T", "fp32, tf32 or bf16", "tf32"),
          samples::flag_option("validate",
                               "check 1024x1024 against an fp64 reference first; exit 1 on a miss"),
          samples::value_option("seed", "S", "seed of the random inputs (default: a fresh one)"),
          samples::flag_option("skip-run", "stop after --validate (no big matmul)"),
          samples::value_option("reps", "R", "timed matmuls per provider", "1"),
      });
  cli.parse(argc, argv);
  Config c;
  c.size = cli.integer("size");
  if (c.size < 1) cli.fail("--size must be at least 1");
  c.providers = cli.words("provider", {"builtin", "cublas"});
  if (!flopline::kernels::parse_dtype(cli.text("dtype"), &c.in) || c.in == DType::f16) {
    cli.fail("--dtype must be fp32, tf32 or bf16, got '" + cli.text("dtype") + "'");
  }
  c.validate = cli.flag("validate");
  c.skip_run = cli.flag("skip-run");
  c.reps = static_cast<int>(cli.integer("reps"));
  if (c.reps < 1) cli.fail("--reps must be at least 1");
  c.seed =
      cli.flag("seed") ? static_cast<std::uint64_t>(cli.integer("seed")) : std::random_device{}();
  return c;
}

// One provider's matmul: C = A x B, enqueued on the default stream.
class Provider {
 public:
  explicit Provider(std::string name) : name_(std::move(name)) {
    if (name_ == "cublas") cublas_ = std::make_unique<flopline::kernels::testing::Cublas>();
  }
  const std::string& name() const { return name_; }
  bool ready(std::string* why) const {
    if (cublas_ == nullptr || cublas_->ok()) return true;
    *why = cublas_->error();
    return false;
  }
  void run(const MatmulProblem& p) {
    if (name_ == "builtin") {
      flopline::kernels::matmul(p,
                                {.range = false});  // the sample's range below names the provider
      return;
    }
    if (!cublas_->matmul(p.a, p.b, p.c, p.m, p.n, p.k, p.in, p.out, nullptr)) {
      std::fprintf(stderr, "%s: cublas: %s\n", kProgram, cublas_->error().c_str());
      std::exit(1);
    }
  }
  // The same, inside a flopline range "PROVIDER matmul DTYPE MxNxK" with its cost.
  void run_as_operator(const MatmulProblem& p) {
    const flopline::kernels::OpCost cost =
        flopline::kernels::matmul_cost(p.m, p.n, p.k, p.in, p.out);
    flopline::Range range(name_ + " " + cost.name, cost.flops, cost.bytes, cost.precision);
    run(p);
  }

 private:
  std::string name_;
  std::unique_ptr<flopline::kernels::testing::Cublas> cublas_;  // only for "cublas"
};

MatmulProblem problem(const samples::DeviceBuffer& a, const samples::DeviceBuffer& b,
                      const samples::DeviceBuffer& c, std::int64_t n, DType in) {
  return {.a = a.get(),
          .b = b.get(),
          .c = c.get(),
          .m = n,
          .n = n,
          .k = n,
          .in = in,
          .out = output_type(in)};
}

bool validate(std::vector<Provider>& providers, DType in, std::uint64_t seed) {
  const std::int64_t n = kValidateSize, elems = n * n;
  const std::size_t in_bytes = flopline::kernels::dtype_bytes(in);
  samples::DeviceBuffer a(elems * in_bytes), b(elems * in_bytes);
  samples::DeviceBuffer c(elems * flopline::kernels::dtype_bytes(output_type(in)));
  samples::DeviceBuffer ref(elems * sizeof(double));
  samples::fill_normal(a.get(), elems, in, seed ^ 0x5a5a);
  samples::fill_normal(b.get(), elems, in, seed ^ 0xa5a5);
  samples::reference_matmul(a.get(), b.get(), ref.as<double>(), n, n, n, in);
  bool ok = true;
  for (Provider& p : providers) {
    samples::fill_nan(c.get(), elems, output_type(in));
    p.run(problem(a, b, c, n, in));
    samples::check_cuda(cudaDeviceSynchronize(), "validation matmul");
    const samples::RefDiff d =
        samples::diff_to_reference(c.get(), output_type(in), ref.as<double>(), elems);
    const double rel = d.max_abs_diff / d.max_abs_ref;
    const bool pass = rel <= validation_limit(in);  // false for NaN
    ok = ok && pass;
    std::printf(
        "Validation max abs diff on 1024x1024: %.3e (%s %s vs fp64 reference; %.1e of max |ref|, "
        "limit %.0e: %s)\n",
        d.max_abs_diff, p.name().c_str(), flopline::kernels::dtype_name(in), rel,
        validation_limit(in), pass ? "ok" : "FAILED");
  }
  return ok;
}

struct Timing {
  std::string provider;
  double seconds = 0;  // fastest of the reps
};

}  // namespace

int main(int argc, char** argv) {
  const Config cfg = parse(argc, argv);
  const std::string device = samples::require_device(kProgram);
  std::vector<Provider> providers;
  for (const std::string& name : cfg.providers) {
    Provider p(name);
    std::string why;
    if (!p.ready(&why)) {
      std::fprintf(stderr, "%s: cuBLAS is unavailable: %s\n", kProgram, why.c_str());
      if (cfg.providers.size() == 1) return 1;
      std::fprintf(stderr, "%s: going on without it\n", kProgram);
      continue;
    }
    providers.push_back(std::move(p));
  }
  std::printf("Device: %s\n", device.c_str());
  try {
    if (cfg.validate && !validate(providers, cfg.in, cfg.seed)) {
      std::fprintf(stderr, "%s: validation failed\n", kProgram);
      return 1;
    }
    if (cfg.skip_run) return 0;

    const std::int64_t n = cfg.size, elems = n * n;
    const std::size_t in_bytes = flopline::kernels::dtype_bytes(cfg.in);
    const std::size_t out_bytes = flopline::kernels::dtype_bytes(output_type(cfg.in));
    std::size_t free_b = 0, total_b = 0;
    samples::check_cuda(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
    const double need = static_cast<double>(elems) * (2 * in_bytes + out_bytes);
    if (need > static_cast<double>(free_b)) {
      std::fprintf(stderr, "%s: %lldx%lld needs %.1f GB for A, B and C; the GPU has %.1f GB free\n",
                   kProgram, static_cast<long long>(n), static_cast<long long>(n), need / 1e9,
                   free_b / 1e9);
      return 1;
    }
    std::printf("Allocating matrices of shape %lldx%lld in %s, seed %llu.\n",
                static_cast<long long>(n), static_cast<long long>(n), dtype_words(cfg.in).c_str(),
                static_cast<unsigned long long>(cfg.seed));
    std::fflush(stdout);
    samples::DeviceBuffer a(elems * in_bytes), b(elems * in_bytes), c(elems * out_bytes);
    samples::fill_normal(a.get(), elems, cfg.in, cfg.seed);
    samples::fill_normal(b.get(), elems, cfg.in, cfg.seed + 1);

    std::vector<Timing> timings;
    for (Provider& p : providers) {
      // A small call first loads the provider's kernels, so the timed one is not a cold start.
      samples::DeviceBuffer wa(256 * 256 * in_bytes), wb(256 * 256 * in_bytes),
          wc(256 * 256 * out_bytes);
      p.run(problem(wa, wb, wc, std::min<std::int64_t>(n, 256), cfg.in));
      samples::check_cuda(cudaDeviceSynchronize(), "warm-up matmul");
      std::printf("[%s]\n", p.name().c_str());
      Timing best{.provider = p.name(), .seconds = 0};
      for (int r = 0; r < cfg.reps; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        p.run_as_operator(problem(a, b, c, n, cfg.in));
        samples::check_cuda(cudaDeviceSynchronize(), "matmul");
        const double s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::printf("Matmul completed in %.3fs (%.2f GFLOP/s).\n", s, 2.0 * n * n * n / s / 1e9);
        if (r == 0 || s < best.seconds) best.seconds = s;
      }
      std::printf("Output checksum: %.6e\n",
                  samples::checksum(c.get(), elems, output_type(cfg.in)));
      std::fflush(stdout);
      timings.push_back(best);
    }
    if (timings.size() > 1) {
      std::printf("\n%-10s %12s %10s %10s\n", "provider", "best (s)", "TFLOP/s", "vs first");
      for (const Timing& t : timings) {
        std::printf("%-10s %12.4f %10.1f %9.2fx\n", t.provider.c_str(), t.seconds,
                    2.0 * n * n * n / t.seconds / 1e12, timings.front().seconds / t.seconds);
      }
    }
  } catch (const std::exception& e) {  // KernelError, CudaError
    std::fprintf(stderr, "%s: %s\n", kProgram, e.what());
    return 1;
  }
  return 0;
}
