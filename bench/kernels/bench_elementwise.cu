// Elementwise kernels and the standalone softmax against the device-to-device copy
// bandwidth: each case is timed with CUDA events (warm-up, then the median of kReps
// runs), its GB/s counted with the cost model's bytes (each input read once, the output
// written once), and set beside a cudaMemcpyAsync moving the same bytes (a copy of B
// bytes reads B and writes B, so it copies bytes / 2), timed in rounds interleaved with
// the case's (bench_timing.h), so clock drift weighs on both alike. A copy line, then
// one line per case:
//
//   bench=elementwise op=add dtype=fp32 n=67108864 us=... GBps=... copy_GBps=... pct_of_copy=...
//   bench=softmax dim=rows dtype=fp32 m=4096 n=4096 us=... GBps=... copy_GBps=... pct_of_copy=...
//
// Usage: bench_elementwise [--quick]   (--quick: n = 2^26 only, fewer reps)
#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "bench_timing.h"
#include "flopline/kernels/cost.h"
#include "flopline/kernels/elementwise.h"
#include "flopline/kernels/softmax.h"

namespace fk = flopline::kernels;

namespace {

#define BENCH_CUDA_OK(call)                                                                       \
  do {                                                                                            \
    cudaError_t e_ = (call);                                                                      \
    if (e_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                               \
    }                                                                                             \
  } while (0)

int g_reps = 25;
constexpr int kWarmup = 3;

// Buffers for the reference copies, each large enough for half the largest case's bytes.
void* g_copy_src = nullptr;
void* g_copy_dst = nullptr;
std::size_t g_copy_capacity = 0;

// Median microseconds of `run`, and the GB/s of a device-to-device copy moving `bytes`
// in all (bytes / 2 read, bytes / 2 written) timed in the same interleaved rounds.
struct Timed {
  double us, copy_gbps;
};
Timed time_beside_copy(const std::function<void()>& run, double bytes) {
  const std::size_t size = static_cast<std::size_t>(bytes / 2);
  if (size > g_copy_capacity) {
    std::fprintf(stderr, "copy of %zu bytes exceeds the copy buffers (%zu)\n", size,
                 g_copy_capacity);
    std::exit(1);
  }
  const std::vector<double> ms = flopline::bench::interleaved_medians_ms(
      {run,
       [&] {
         BENCH_CUDA_OK(cudaMemcpyAsync(g_copy_dst, g_copy_src, size, cudaMemcpyDeviceToDevice));
       }},
      kWarmup, g_reps);
  const double copy_us = 1e3 * ms[1];
  std::printf("bench=copy bytes=%zu us=%.1f GBps=%.0f\n", 2 * size, copy_us,
              bytes / (copy_us * 1e3));
  return {1e3 * ms[0], bytes / (copy_us * 1e3)};
}

// Fill with values in [-2, 2) of type t (a simple hash: the timings do not depend on them).
__global__ void fill_kernel(void* p, std::int64_t n, bool bf16, std::uint32_t salt) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    std::uint32_t h = static_cast<std::uint32_t>(i) * 2654435761u ^ salt;
    h ^= h >> 15;
    const float v = static_cast<float>(h & 0xFFFF) / 16384.0f - 2.0f;
    if (bf16)
      static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16(v);
    else
      static_cast<float*>(p)[i] = v;
  }
}

void fill(void* p, std::int64_t n, fk::DType t, std::uint32_t salt) {
  fill_kernel<<<1024, 256>>>(p, n, t == fk::DType::bf16, salt);
  BENCH_CUDA_OK(cudaGetLastError());
}

void report(const std::string& what, double us, double bytes, double copy) {
  const double gbps = bytes / (us * 1e3);
  std::printf("%s us=%.1f GBps=%.0f copy_GBps=%.0f pct_of_copy=%.1f\n", what.c_str(), us, gbps,
              copy, 100.0 * gbps / copy);
  std::fflush(stdout);
}

void bench_elementwise(std::int64_t n, fk::DType t, void* x, void* y, void* out) {
  fk::ElementwiseOptions options;
  options.range = false;  // no NVTX push/pop in the timed loop
  struct Case {
    fk::ElementwiseOp op;
    std::function<void()> run;
  };
  const Case cases[] = {
      {fk::ElementwiseOp::add, [&] { fk::add(x, y, out, n, t, options); }},
      {fk::ElementwiseOp::mul, [&] { fk::mul(x, y, out, n, t, options); }},
      {fk::ElementwiseOp::axpy, [&] { fk::axpy(0.5f, x, y, out, n, t, options); }},
      {fk::ElementwiseOp::relu, [&] { fk::relu(x, out, n, t, options); }},
      {fk::ElementwiseOp::gelu, [&] { fk::gelu(x, out, n, t, options); }},
  };
  for (const Case& c : cases) {
    const double bytes = fk::elementwise_cost(c.op, n, t).bytes;
    const Timed timed = time_beside_copy(c.run, bytes);
    report(std::string("bench=elementwise op=") + fk::elementwise_op_name(c.op) +
               " dtype=" + fk::dtype_name(t) + " n=" + std::to_string(n),
           timed.us, bytes, timed.copy_gbps);
  }
}

void bench_softmax(std::int64_t m, std::int64_t n, fk::SoftmaxDim dim, void* x, void* out) {
  fk::SoftmaxProblem p;
  p.x = x;
  p.out = out;
  p.m = m;
  p.n = n;
  const double bytes = fk::softmax_cost(m, n, dim, p.in, p.out_type).bytes;
  const Timed timed = time_beside_copy([&] { fk::softmax(p, dim, nullptr, false); }, bytes);
  report(std::string("bench=softmax dim=") + fk::softmax_dim_name(dim) +
             " dtype=fp32 m=" + std::to_string(m) + " n=" + std::to_string(n),
         timed.us, bytes, timed.copy_gbps);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("skipped: no CUDA device\n");
    return 77;
  }
  cudaDeviceProp prop{};
  BENCH_CUDA_OK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device=\"%s\" sms=%d\n", prop.name, prop.multiProcessorCount);
  if (quick) g_reps = 10;

  std::vector<std::int64_t> sizes = {std::int64_t{1} << 26};
  if (!quick) sizes.push_back(std::int64_t{1} << 28);
  const std::int64_t max_n = sizes.back();
  // Three buffers of the largest fp32 case: x, y, out (3 GiB at 2^28).
  void *x = nullptr, *y = nullptr, *out = nullptr;
  const std::size_t buffer = static_cast<std::size_t>(max_n) * 4;
  BENCH_CUDA_OK(cudaMalloc(&x, buffer));
  BENCH_CUDA_OK(cudaMalloc(&y, buffer));
  BENCH_CUDA_OK(cudaMalloc(&out, buffer));
  // Two-input fp32 ops move 12 bytes an element: copies of 6 bytes an element.
  g_copy_capacity = static_cast<std::size_t>(max_n) * 6;
  BENCH_CUDA_OK(cudaMalloc(&g_copy_src, g_copy_capacity));
  BENCH_CUDA_OK(cudaMalloc(&g_copy_dst, g_copy_capacity));
  BENCH_CUDA_OK(cudaMemset(g_copy_src, 0, g_copy_capacity));

  for (fk::DType t : {fk::DType::f32, fk::DType::bf16}) {
    for (std::int64_t n : sizes) {
      fill(x, n, t, 1);
      fill(y, n, t, 2);
      bench_elementwise(n, t, x, y, out);
    }
  }

  const std::pair<std::int64_t, std::int64_t> shapes[] = {{4096, 4096}, {16384, 2048}};
  for (const auto& [m, n] : shapes) {
    fill(x, m * n, fk::DType::f32, 3);
    for (fk::SoftmaxDim dim : {fk::SoftmaxDim::rows, fk::SoftmaxDim::cols})
      bench_softmax(m, n, dim, x, out);
  }
  BENCH_CUDA_OK(cudaDeviceSynchronize());
  cudaFree(x);
  cudaFree(y);
  cudaFree(out);
  cudaFree(g_copy_src);
  cudaFree(g_copy_dst);
  return 0;
}
