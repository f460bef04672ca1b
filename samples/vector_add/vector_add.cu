// vector_add: the Triton tutorial's vector add (out = x + y, fp32) in CUDA C++, with the
// sweep an autotuner runs: block sizes x elements per thread (scalar or float4) x grid
// shape (one thread per chunk, or a persistent grid-stride loop over a few waves), plus
// flopline's built-in add. Each configuration runs inside its own flopline range carrying
// FLOPs (1 per element) and bytes (12 per element), so under `flopline run` the FLOP/s
// table shows GB/s per configuration; the sample prints the same table from cudaEvents.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "flopline/kernels/elementwise.h"
#include "flopline/session.h"
#include "sample_cli.h"
#include "sample_gpu.h"

namespace {

namespace kernels = flopline::kernels;
namespace samples = flopline::samples;
constexpr const char* kProgram = "vector_add";

// VEC elements per thread per step: 1 (scalar loads) or 4 (one 16-byte float4).
template <int VEC>
__global__ void vector_add_kernel(const float* __restrict__ x, const float* __restrict__ y,
                                  float* __restrict__ out, long long n) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if constexpr (VEC == 4) {
    const long long chunks = n / 4;
    for (long long i = first; i < chunks; i += stride) {
      const float4 a = reinterpret_cast<const float4*>(x)[i];
      const float4 b = reinterpret_cast<const float4*>(y)[i];
      reinterpret_cast<float4*>(out)[i] = make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w);
    }
    for (long long i = chunks * 4 + first; i < n; i += stride) out[i] = x[i] + y[i];  // the tail
  } else {
    for (long long i = first; i < n; i += stride) out[i] = x[i] + y[i];
  }
}

struct Config {
  int block = 256;
  int vec = 1;              // 1 or 4
  bool persistent = false;  // grid-stride over `waves` x SMs blocks instead of covering n
  bool builtin = false;     // flopline::kernels::add instead of the sample's kernel
  std::string name() const {
    if (builtin) return "vector_add builtin";
    return "vector_add block=" + std::to_string(block) + " vec=" + std::to_string(vec) +
           (persistent ? " grid=persistent" : " grid=cover");
  }
};

struct Options {
  std::vector<std::int64_t> sizes;
  std::vector<int> blocks;
  int reps = 20;
  int waves = 4;
};

Options parse(int argc, char** argv) {
  samples::SampleCli cli(
      kProgram,
      "out = x + y over fp32 vectors, swept over launch configurations like an\n"
      "autotuner; each configuration is a flopline operator, and the table gives\n"
      "GB/s per configuration against device-to-device cudaMemcpy.",
      {
          samples::value_option("sizes", "LIST", "vector lengths, comma-separated",
                                "98432,16777216,268435456"),
          samples::value_option("blocks", "LIST", "threads per block to try", "128,256,512,1024"),
          samples::value_option(
              "reps", "R", "timed launches per configuration, after one untimed (median reported)",
              "20"),
          samples::value_option("waves", "W", "blocks per SM of the persistent grid", "4"),
      });
  cli.parse(argc, argv);
  Options o;
  o.sizes = cli.integers("sizes");
  for (std::int64_t b : cli.integers("blocks")) {
    if (b % 32 != 0 || b > 1024)
      cli.fail("--blocks: " + std::to_string(b) + " is not a multiple of 32 up to 1024");
    o.blocks.push_back(static_cast<int>(b));
  }
  o.reps = static_cast<int>(cli.integer("reps"));
  o.waves = static_cast<int>(cli.integer("waves"));
  if (o.reps < 1) cli.fail("--reps must be at least 1");
  if (o.waves < 1) cli.fail("--waves must be at least 1");
  return o;
}

void launch(const Config& c, const float* x, const float* y, float* out, std::int64_t n, int sms,
            int waves) {
  if (c.builtin) {
    kernels::add(x, y, out, n, kernels::DType::f32, {.range = false});
    return;
  }
  const std::int64_t per_block = static_cast<std::int64_t>(c.block) * c.vec;
  std::int64_t grid =
      c.persistent ? static_cast<std::int64_t>(sms) * waves : (n + per_block - 1) / per_block;
  grid = std::clamp<std::int64_t>(grid, 1, 2147483647);
  if (c.vec == 4) {
    vector_add_kernel<4><<<static_cast<unsigned>(grid), c.block>>>(x, y, out, n);
  } else {
    vector_add_kernel<1><<<static_cast<unsigned>(grid), c.block>>>(x, y, out, n);
  }
  samples::check_cuda(cudaGetLastError(), "vector_add_kernel launch");
}

// Median of reps event-timed calls of fn (after one untimed call).
template <class Fn>
double median_seconds(int reps, Fn&& fn) {
  fn();
  samples::check_cuda(cudaDeviceSynchronize(), "warm-up");
  cudaEvent_t a, b;
  samples::check_cuda(cudaEventCreate(&a), "cudaEventCreate");
  samples::check_cuda(cudaEventCreate(&b), "cudaEventCreate");
  std::vector<double> s;
  for (int r = 0; r < reps; ++r) {
    samples::check_cuda(cudaEventRecord(a), "cudaEventRecord");
    fn();
    samples::check_cuda(cudaEventRecord(b), "cudaEventRecord");
    samples::check_cuda(cudaEventSynchronize(b), "timed launch");
    float ms = 0;
    samples::check_cuda(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
    s.push_back(ms * 1e-3);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(s.begin(), s.end());
  return s[s.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse(argc, argv);
  const std::string device = samples::require_device(kProgram);
  int sms = 0;
  samples::check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0),
                      "cudaDeviceGetAttribute");
  std::printf("Device: %s (%d SMs)\n", device.c_str(), sms);
  std::vector<Config> configs;
  for (int block : opt.blocks) {
    for (int vec : {1, 4}) {
      for (bool persistent : {false, true}) {
        configs.push_back({.block = block, .vec = vec, .persistent = persistent, .builtin = false});
      }
    }
  }
  configs.push_back({.block = 0, .vec = 0, .persistent = false, .builtin = true});
  bool ok = true;
  try {
    for (const std::int64_t n : opt.sizes) {
      const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
      samples::DeviceBuffer x(bytes), y(bytes), out(bytes), ref(bytes);
      samples::fill_normal(x.get(), n, kernels::DType::f32, 1);
      samples::fill_normal(y.get(), n, kernels::DType::f32, 2);
      launch({.block = 256, .vec = 1, .persistent = false, .builtin = false}, x.as<float>(),
             y.as<float>(), ref.as<float>(), n, sms, opt.waves);
      // The roof: a device-to-device copy moves 2 bytes per byte copied (read + write).
      const double copy_s = median_seconds(opt.reps, [&] {
        samples::check_cuda(cudaMemcpyAsync(out.get(), x.get(), bytes, cudaMemcpyDeviceToDevice),
                            "cudaMemcpyAsync");
      });
      const double copy_gbs = 2.0 * bytes / copy_s / 1e9;
      std::printf("\nn = %lld (%.1f MB per vector); device-to-device copy %.0f GB/s\n",
                  static_cast<long long>(n), bytes / 1e6, copy_gbs);
      std::printf("%-44s %10s %10s %8s %s\n", "configuration", "time (us)", "GB/s", "of copy",
                  "check");
      double best_s = 1e30;
      std::string best;
      for (const Config& c : configs) {
        samples::fill_nan(out.get(), n, kernels::DType::f32);
        const double s = median_seconds(opt.reps, [&] {
          flopline::Range range(c.name() + " n=" + std::to_string(n), static_cast<double>(n),
                                12.0 * n, "fp32");
          launch(c, x.as<float>(), y.as<float>(), out.as<float>(), n, sms, opt.waves);
        });
        // fp32 addition is exact and order-free here: every configuration must match bit for bit.
        const double diff = samples::max_abs_diff(out.get(), kernels::DType::f32, ref.get(),
                                                  kernels::DType::f32, n);
        const bool good = diff == 0;
        ok = ok && good;
        const double gbs = 12.0 * n / s / 1e9;
        std::printf("%-44s %10.2f %10.1f %7.0f%% %s\n", c.name().c_str(), s * 1e6, gbs,
                    100 * gbs / copy_gbs, good ? "ok" : "WRONG");
        if (s < best_s) {
          best_s = s;
          best = c.name();
        }
      }
      std::printf("fastest: %s, %.1f GB/s (what an autotuner would keep for n = %lld)\n",
                  best.c_str(), 12.0 * n / best_s / 1e9, static_cast<long long>(n));
      std::fflush(stdout);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", kProgram, e.what());
    return 1;
  }
  if (!ok) std::fprintf(stderr, "%s: a configuration computed a wrong sum\n", kProgram);
  return ok ? 0 : 1;
}
