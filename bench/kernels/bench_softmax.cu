// Fused softmax(A x B) against the unfused pair (cuBLAS matmul + flopline's standalone
// softmax) at the classic experiment's shapes, rows and columns. cudaEvent timing,
// median of the repetitions after a warm-up; fused, cuBLAS alone and the pair timed in
// interleaved rounds (the schemes by name separately). Prints one key=value line per case:
//   bench=matmul_softmax dim=rows dtype=tf32 out=fp32 m= n= k= fused_ms= unfused_ms= speedup= ...
//   plan=
// (plan: the launch sequence the automatic scheme ran, softmax_plan.h).
// The output is fp32 unless --out bf16 (for bf16 inputs; tf32 inputs keep fp32).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "bench_timing.h"
#include "cublas_loader.h"
#include "flopline/kernels/softmax.h"

namespace fk = flopline::kernels;

namespace {

void cuda_ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "bench_softmax: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

__global__ void fill(float* p, long n, float scale) {
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long>(gridDim.x) * blockDim.x) {
    p[i] = scale * (static_cast<float>((i * 2654435761u) % 1000) / 500.0f - 1.0f);
  }
}

__global__ void to_bf16(const float* in, unsigned short* out, long n) {
  for (long i = blockIdx.x * static_cast<long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long>(gridDim.x) * blockDim.x) {
    out[i] = static_cast<unsigned short>(__float_as_uint(in[i]) >> 16);
  }
}

struct Shape {
  long m, n, k;
};

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  fk::DType bf16_out = fk::DType::f32;  // the output type of the bf16-input cases
  std::vector<Shape> only;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick"))
      quick = true;
    else if (!std::strcmp(argv[i], "--shape") && i + 3 < argc) {
      only.push_back({std::atol(argv[i + 1]), std::atol(argv[i + 2]), std::atol(argv[i + 3])});
      i += 3;
    } else if (!std::strcmp(argv[i], "--out") && i + 1 < argc) {
      const std::string t = argv[++i];
      if (t != "bf16" && t != "fp32") {
        std::fprintf(stderr, "bench_softmax: --out takes bf16 or fp32, not %s\n", t.c_str());
        return 2;
      }
      bf16_out = t == "bf16" ? fk::DType::bf16 : fk::DType::f32;
    } else if (!std::strcmp(argv[i], "--help")) {
      std::printf(
          "usage: bench_softmax [--quick] [--out bf16|fp32] [--shape M N K]...\n"
          "  fused softmax(A x B) vs cuBLAS matmul + standalone softmax; --shape runs only those;\n"
          "  --out: the output type of the bf16-input cases (fp32 by default)\n");
      return 0;
    } else {
      std::fprintf(stderr, "bench_softmax: unknown argument %s (see --help)\n", argv[i]);
      return 2;
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("skipped: no CUDA device\n");
    return 77;
  }
  fk::testing::Cublas cublas;
  if (!cublas.ok())
    std::printf("note: %s (unfused baseline uses flopline's matmul)\n", cublas.error().c_str());
  const int reps = quick ? 5 : 20;
  // The anchor shapes (where PyTorch's softmax(A @ B) was measured), three more with
  // k <= 2048, two at k = 2048 where bf16 -> fp32 rows start to rescale in the sweep's
  // launch, and the classic experiment's square sizes (128-512) with 1024 and 2048.
  std::vector<Shape> shapes = {{4096, 4096, 4096}, {8192, 8192, 1024}, {16384, 2048, 128},
                               {4096, 2048, 512},  {16384, 1024, 64},  {8192, 2048, 2048},
                               {8192, 8192, 2048}, {4096, 4096, 2048}, {128, 128, 128},
                               {256, 256, 256},    {512, 512, 512},    {1024, 1024, 1024},
                               {2048, 2048, 2048}};
  if (!only.empty()) shapes = only;
  const long max_elems = 8192L * 8192;
  float *a32, *b32, *scores, *out;
  unsigned short *a16, *b16;
  cuda_ok(cudaMalloc(&a32, 16384L * 4096 * 4), "alloc");
  cuda_ok(cudaMalloc(&b32, 4096L * 8192 * 4), "alloc");
  cuda_ok(cudaMalloc(&a16, 16384L * 4096 * 2), "alloc");
  cuda_ok(cudaMalloc(&b16, 4096L * 8192 * 2), "alloc");
  cuda_ok(cudaMalloc(&scores, max_elems * 4), "alloc");
  cuda_ok(cudaMalloc(&out, max_elems * 4), "alloc");
  for (const Shape& s : shapes) {
    if (s.m * s.k > 16384L * 4096 || s.k * s.n > 4096L * 8192 || s.m * s.n > max_elems) continue;
    const float scale = 1.0f / std::sqrt(std::sqrt(static_cast<float>(s.k)));
    fill<<<1024, 256>>>(a32, s.m * s.k, scale);
    fill<<<1024, 256>>>(b32, s.k * s.n, scale);
    to_bf16<<<1024, 256>>>(a32, a16, s.m * s.k);
    to_bf16<<<1024, 256>>>(b32, b16, s.k * s.n);
    for (auto dim : {fk::SoftmaxDim::rows, fk::SoftmaxDim::cols}) {
      for (auto in : {fk::DType::tf32, fk::DType::bf16}) {
        if (quick && in == fk::DType::bf16) continue;
        fk::MatmulProblem p;
        p.a = in == fk::DType::tf32 ? static_cast<const void*>(a32) : a16;
        p.b = in == fk::DType::tf32 ? static_cast<const void*>(b32) : b16;
        p.c = out;
        p.m = s.m;
        p.n = s.n;
        p.k = s.k;
        p.in = in;
        p.out = in == fk::DType::bf16 ? bf16_out : fk::DType::f32;
        fk::MatmulSoftmaxOptions o;
        o.dim = dim;
        o.range = false;
        // Each fused scheme by name where it can run (-1 where it cannot), to place the
        // automatic choice's threshold.
        auto scheme_ms = [&](fk::SoftmaxScheme scheme) {
          fk::MatmulSoftmaxOptions so = o;
          so.scheme = scheme;
          try {
            fk::matmul_softmax(p, so);
          } catch (const fk::KernelError&) {
            return -1.0;
          }
          return flopline::bench::median_ms([&] { fk::matmul_softmax(p, so); }, 3, reps);
        };
        const bool small = s.m * s.n <= 2048L * 2048;
        const double one_launch = small ? scheme_ms(fk::SoftmaxScheme::one_launch) : -1.0;
        const double sweeps = scheme_ms(fk::SoftmaxScheme::sweeps);
        const double cluster =
            dim == fk::SoftmaxDim::rows ? scheme_ms(fk::SoftmaxScheme::cluster_rows) : -1.0;
        const double group =
            dim == fk::SoftmaxDim::rows ? scheme_ms(fk::SoftmaxScheme::group_rows) : -1.0;
        const double split = scheme_ms(fk::SoftmaxScheme::split_k);
        fk::SoftmaxProblem sp;
        sp.x = scores;
        sp.out = out;
        sp.m = s.m;
        sp.n = s.n;
        sp.out_type = p.out;
        // The comparison itself (fused, cuBLAS alone, cuBLAS + softmax) in interleaved
        // rounds, so that the GPU's clocks drifting over the case weigh on all three alike.
        const std::vector<double> compared = flopline::bench::interleaved_medians_ms(
            {[&] { fk::matmul_softmax(p, o); },
             [&] {
               if (cublas.ok())
                 cublas.matmul(p.a, p.b, scores, s.m, s.n, s.k, in, fk::DType::f32, nullptr);
             },
             [&] {
               if (cublas.ok())
                 cublas.matmul(p.a, p.b, scores, s.m, s.n, s.k, in, fk::DType::f32, nullptr);
               fk::softmax(sp, dim, nullptr, false);
             }},
            3, reps);
        const double fused = compared[0], mm_only = compared[1], unfused = compared[2];
        cuda_ok(cudaDeviceSynchronize(), "run");
        std::printf(
            "bench=matmul_softmax dim=%s dtype=%s out=%s m=%ld n=%ld k=%ld fused_ms=%.4f "
            "unfused_ms=%.4f "
            "cublas_matmul_ms=%.4f speedup=%.2f one_launch_ms=%.4f sweeps_ms=%.4f "
            "cluster_rows_ms=%.4f "
            "group_rows_ms=%.4f split_k_ms=%.4f plan=%s\n",
            fk::softmax_dim_name(dim), fk::dtype_name(in), fk::dtype_name(p.out), s.m, s.n, s.k,
            fused, unfused, mm_only, unfused / fused, one_launch, sweeps, cluster, group, split,
            fk::softmax_plan_name(fk::matmul_softmax_plan(p, o).plan));
        std::fflush(stdout);
      }
    }
  }
  return 0;
}
