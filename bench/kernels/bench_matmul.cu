// Matmul benchmark: flopline::kernels::matmul on each path (and automatic) against cuBLAS
// on the same inputs. Timing: CUDA events around each call, warm-up first, median of the
// timed runs, cuBLAS and the paths timed in interleaved rounds (one call of each per
// round) so that clock drift over a long case does not favour whichever ran first; each
// path's output is then made once more and compared with cuBLAS's. Inputs are uniform in [-1, 1)
// (never zeros: they run faster than real data). One line per case:
//   bench=matmul path=sm80 dtype=bf16 out=bf16 m=4096 n=4096 k=4096 ms=... tflops=...
//     cublas_ms=... cublas_tflops=... pct_of_cublas=... err_vs_cublas=...
// err_vs_cublas = ||ours - cuBLAS|| / ||cuBLAS|| so a fast but wrong kernel shows.
//
//   bench_matmul [--quick] [--big] [--reps N]
//     --quick  4096^3 (bf16 also with fp32 output) and one rectangle only, 3 timed runs
//     --big    adds 46000^3 fp32 and tf32 (the classic experiment's size; 8.5 GB a matrix)
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "bench_timing.h"
#include "cublas_loader.h"
#include "flopline/kernels/matmul.h"

namespace {

using flopline::kernels::DType;
using flopline::kernels::MatmulPath;
using flopline::kernels::MatmulProblem;

#define CUDA_OK(call)                                                                             \
  do {                                                                                            \
    cudaError_t e_ = (call);                                                                      \
    if (e_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                               \
    }                                                                                             \
  } while (0)

struct Buffer {
  void* p = nullptr;
  explicit Buffer(std::size_t bytes) { CUDA_OK(cudaMalloc(&p, bytes)); }
  ~Buffer() { cudaFree(p); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
};

__device__ std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Uniform in [-1, 1), stored as t.
__global__ void fill_uniform(void* out, std::size_t n, int elem_bytes, bool bf16,
                             std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float v = static_cast<float>(splitmix64(seed ^ (i * 0x2545F4914F6CDD1Dull)) >> 40) *
                        (2.0f / 16777216.0f) -
                    1.0f;
    if (elem_bytes == 4) {
      static_cast<float*>(out)[i] = v;
    } else if (bf16) {
      static_cast<__nv_bfloat16*>(out)[i] = __float2bfloat16(v);
    } else {
      static_cast<__half*>(out)[i] = __float2half(v);
    }
  }
}

__device__ double load_as_double(const void* p, std::size_t i, DType t) {
  switch (t) {
    case DType::bf16:
      return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    case DType::f16:
      return __half2float(static_cast<const __half*>(p)[i]);
    default:
      return static_cast<const float*>(p)[i];
  }
}

// sums[0] += sum (x - y)^2, sums[1] += sum y^2
__global__ void diff_norms(const void* x, const void* y, std::size_t n, DType t, double* sums) {
  double d2 = 0, y2 = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const double a = load_as_double(x, i, t), b = load_as_double(y, i, t);
    d2 += (a - b) * (a - b);
    y2 += b * b;
  }
  for (int o = 16; o > 0; o /= 2) {
    d2 += __shfl_down_sync(0xffffffffu, d2, o);
    y2 += __shfl_down_sync(0xffffffffu, y2, o);
  }
  if (threadIdx.x % 32 == 0) {
    atomicAdd(&sums[0], d2);
    atomicAdd(&sums[1], y2);
  }
}

double relative_difference(const void* x, const void* y, std::size_t n, DType t) {
  double* sums = nullptr;
  CUDA_OK(cudaMalloc(&sums, 2 * sizeof(double)));
  CUDA_OK(cudaMemset(sums, 0, 2 * sizeof(double)));
  diff_norms<<<1024, 256>>>(x, y, n, t, sums);
  CUDA_OK(cudaGetLastError());
  double host[2];
  CUDA_OK(cudaMemcpy(host, sums, sizeof(host), cudaMemcpyDeviceToHost));
  CUDA_OK(cudaFree(sums));
  return host[1] > 0 ? std::sqrt(host[0] / host[1]) : std::sqrt(host[0]);
}

struct Case {
  DType in;
  std::int64_t m, n, k;
  bool fp32_out = false;  // 16-bit inputs: fp32 output instead of the input type
};

DType out_type(const Case& c) {
  return (c.in == DType::bf16 || c.in == DType::f16) && !c.fp32_out ? c.in : DType::f32;
}

void run_case(const Case& c, int arch, flopline::kernels::testing::Cublas& cublas, int reps) {
  const DType out = out_type(c);
  const std::size_t es = flopline::kernels::dtype_bytes(c.in),
                    eo = flopline::kernels::dtype_bytes(out);
  const std::size_t mn = static_cast<std::size_t>(c.m * c.n);
  Buffer a(static_cast<std::size_t>(c.m * c.k) * es), b(static_cast<std::size_t>(c.k * c.n) * es),
      ours(mn * eo), theirs(mn * eo);
  fill_uniform<<<4096, 256>>>(a.p, static_cast<std::size_t>(c.m * c.k), static_cast<int>(es),
                              c.in == DType::bf16, 1);
  fill_uniform<<<4096, 256>>>(b.p, static_cast<std::size_t>(c.k * c.n), static_cast<int>(es),
                              c.in == DType::bf16, 2);
  CUDA_OK(cudaGetLastError());

  MatmulProblem p;
  p.a = a.p;
  p.b = b.p;
  p.c = ours.p;
  p.m = c.m;
  p.n = c.n;
  p.k = c.k;
  p.in = c.in;
  p.out = out;
  const double flops =
      2.0 * static_cast<double>(c.m) * static_cast<double>(c.n) * static_cast<double>(c.k);
  const bool huge = flops > 1e14;  // 46000^3: seconds a call
  const int warmup = huge ? 1 : 2;

  std::vector<MatmulPath> paths;
  if (c.in == DType::f32) {
    paths = {MatmulPath::simt};
  } else {
    paths = {MatmulPath::sm80};
    try {
      flopline::kernels::check_matmul_path(p, MatmulPath::sm90, arch);
      paths.push_back(MatmulPath::sm90);
    } catch (const flopline::kernels::KernelError&) {
    }
  }
  paths.push_back(MatmulPath::automatic);
  auto options_for = [](MatmulPath path) {
    flopline::kernels::MatmulOptions options;
    options.path = path;
    options.range = false;
    return options;
  };
  // cuBLAS and every path timed in interleaved rounds (bench_timing.h).
  std::vector<std::function<void()>> providers;
  for (MatmulPath path : paths)
    providers.push_back([&, path] { flopline::kernels::matmul(p, options_for(path)); });
  if (cublas.ok()) {
    providers.push_back([&] {
      if (!cublas.matmul(a.p, b.p, theirs.p, static_cast<long>(c.m), static_cast<long>(c.n),
                         static_cast<long>(c.k), c.in, out, nullptr)) {
        std::fprintf(stderr, "cuBLAS: %s\n", cublas.error().c_str());
        std::exit(1);
      }
    });
  }
  const std::vector<double> medians =
      flopline::bench::interleaved_medians_ms(providers, warmup, reps);
  const double cublas_ms = cublas.ok() ? medians.back() : NAN;
  const double cublas_tflops = flops / (cublas_ms * 1e-3) / 1e12;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const MatmulPath path = paths[i];
    // The error of this path's own output against cuBLAS's.
    CUDA_OK(cudaMemset(ours.p, 0xFF, mn * eo));
    flopline::kernels::matmul(p, options_for(path));
    CUDA_OK(cudaDeviceSynchronize());
    const double ms = medians[i];
    const double tflops = flops / (ms * 1e-3) / 1e12;
    const double err = cublas.ok() ? relative_difference(ours.p, theirs.p, mn, out) : NAN;
    std::printf(
        "bench=matmul path=%s dtype=%s out=%s m=%lld n=%lld k=%lld ms=%.4f tflops=%.1f "
        "cublas_ms=%.4f "
        "cublas_tflops=%.1f pct_of_cublas=%.1f err_vs_cublas=%.2e\n",
        flopline::kernels::matmul_path_name(path), flopline::kernels::dtype_name(c.in),
        flopline::kernels::dtype_name(out), static_cast<long long>(c.m),
        static_cast<long long>(c.n), static_cast<long long>(c.k), ms, tflops, cublas_ms,
        cublas_tflops, 100.0 * tflops / cublas_tflops, err);
    std::fflush(stdout);
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, big = false;
  int reps = 10;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick")) {
      quick = true;
    } else if (!std::strcmp(argv[i], "--big")) {
      big = true;
    } else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr, "usage: %s [--quick] [--big] [--reps N]\n", argv[0]);
      return 2;
    }
  }
  if (quick) reps = std::min(reps, 3);
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("skipped: no CUDA device\n");
    return 77;
  }
  cudaDeviceProp prop{};
  CUDA_OK(cudaGetDeviceProperties(&prop, 0));
  const int arch = flopline::kernels::current_arch();
  flopline::kernels::testing::Cublas cublas;
  std::printf("# bench_matmul device=\"%s\" sm_%d sms=%d cublas=%s\n", prop.name, arch,
              prop.multiProcessorCount, cublas.ok() ? "yes" : cublas.error().c_str());

  std::vector<Case> cases;
  for (DType t : {DType::f32, DType::tf32, DType::bf16}) {
    cases.push_back({t, 4096, 4096, 4096});
    if (!quick) cases.push_back({t, 8192, 8192, 8192});
  }
  // Rectangles: the fused-softmax experiment's shapes, and rows that are not 16-byte
  // aligned (odd or even k: the sm80 path's element or element-pair copies, automatic's
  // fallback on Hopper).
  cases.push_back({DType::bf16, 4096, 4096, 4096, true});  // the fused softmax's fp32 output
  cases.push_back({DType::bf16, 8192, 8192, 1024});
  if (!quick) {
    cases.push_back({DType::tf32, 8192, 8192, 1024});
    cases.push_back({DType::tf32, 16384, 2048, 128});
    cases.push_back({DType::bf16, 4097, 4097, 4097});
    cases.push_back({DType::bf16, 4098, 4098, 4098});  // 4-byte rows: element-pair copies
    cases.push_back({DType::tf32, 4097, 4097, 4097});
    cases.push_back({DType::f32, 4097, 4097, 4097});
  }
  if (big) {
    cases.push_back({DType::tf32, 46000, 46000, 46000});
    cases.push_back({DType::f32, 46000, 46000, 46000});
  }
  for (const Case& c : cases) {
    const double flops =
        2.0 * static_cast<double>(c.m) * static_cast<double>(c.n) * static_cast<double>(c.k);
    run_case(c, arch, cublas, flops > 1e14 ? std::min(reps, 3) : reps);
  }
  return 0;
}
