#include "sample_gpu.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace flopline::samples {
namespace {

using kernels::DType;

constexpr int kThreads = 256;

int blocks_for(std::int64_t n) {
  const std::int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 65536 ? (b < 1 ? 1 : b) : 65536);  // grid-stride loops cover the rest
}

__device__ std::uint64_t mix(std::uint64_t x) {  // splitmix64's finalizer
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// max that keeps NaN (fmax drops it): a NaN anywhere must fail a comparison.
__device__ double nan_max(double a, double b) {
  return (a != a || b != b) ? a + b : fmax(a, b);
}

__device__ double load(const void* p, DType t, std::int64_t i) {
  switch (t) {
    case DType::bf16:
      return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    case DType::f16:
      return __half2float(static_cast<const __half*>(p)[i]);
    default:
      return static_cast<const float*>(p)[i];
  }
}

__device__ void store(void* p, DType t, std::int64_t i, float v) {
  switch (t) {
    case DType::bf16:
      static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16(v);
      break;
    case DType::f16:
      static_cast<__half*>(p)[i] = __float2half(v);
      break;
    default:
      static_cast<float*>(p)[i] = v;
      break;
  }
}

__global__ void fill_normal_kernel(void* p, std::int64_t n, DType t, std::uint64_t seed,
                                   float stddev) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t h = mix(seed * 0x9e3779b97f4a7c15ull + static_cast<std::uint64_t>(i));
    // Two 32-bit uniforms in (0, 1] -> one normal (Box-Muller).
    const float u1 = (static_cast<float>(h >> 40) + 1.0f) * (1.0f / 16777216.0f);
    const float u2 = static_cast<float>((h >> 8) & 0xffffff) * (1.0f / 16777216.0f);
    store(p, t, i, stddev * sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2));
  }
}

__global__ void fill_nan_kernel(void* p, std::int64_t n, DType t) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    store(p, t, i, __int_as_float(0x7fc00000));
  }
}

// Block sums in fp64, then atomics into one total: fine for a checksum.
__device__ double block_reduce_sum(double v) {
  __shared__ double part[kThreads / 32];
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = v;
  __syncthreads();
  v = threadIdx.x < kThreads / 32 ? part[threadIdx.x] : 0.0;
  if (threadIdx.x < 32) {
    for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
  }
  return v;
}

__device__ double block_reduce_max(double v) {
  __shared__ double part[kThreads / 32];
  for (int o = 16; o > 0; o /= 2) v = nan_max(v, __shfl_down_sync(0xffffffffu, v, o));
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = v;
  __syncthreads();
  v = threadIdx.x < kThreads / 32 ? part[threadIdx.x] : 0.0;
  if (threadIdx.x < 32) {
    for (int o = 16; o > 0; o /= 2) v = nan_max(v, __shfl_down_sync(0xffffffffu, v, o));
  }
  return v;
}

__device__ void atomic_max_nonneg(double* addr, double v) {
  // Non-negative doubles order like their bit patterns; NaN (0x7ff8...) wins, as it should.
  atomicMax(reinterpret_cast<unsigned long long*>(addr),
            static_cast<unsigned long long>(__double_as_longlong(v)));
}

__global__ void checksum_kernel(const void* p, std::int64_t n, DType t, double* total) {
  double s = 0;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    s += load(p, t, i);
  }
  s = block_reduce_sum(s);
  if (threadIdx.x == 0) atomicAdd(total, s);
}

__global__ void diff_kernel(const void* a, DType ta, const void* b, DType tb, std::int64_t n,
                            double* out) {
  double m = 0;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const double d = fabs(load(a, ta, i) - load(b, tb, i));
    m = nan_max(m, d);
  }
  m = block_reduce_max(m);
  if (threadIdx.x == 0) atomic_max_nonneg(out, m);
}

__global__ void ref_diff_kernel(const void* a, DType t, const double* ref, std::int64_t n,
                                double* out) {
  double m = 0, r = 0;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const double d = fabs(load(a, t, i) - ref[i]);
    m = nan_max(m, d);
    r = nan_max(r, fabs(ref[i]));
  }
  m = block_reduce_max(m);
  __syncthreads();
  r = block_reduce_max(r);
  if (threadIdx.x == 0) {
    atomic_max_nonneg(&out[0], m);
    atomic_max_nonneg(&out[1], r);
  }
}

// One thread per output element: slow, but exact enough to judge tf32 and bf16, and
// only run on the 1024^2 validation problem.
__global__ void reference_matmul_kernel(const void* a, const void* b, double* c, std::int64_t m,
                                        std::int64_t n, std::int64_t k, DType t) {
  const std::int64_t col = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  const std::int64_t row = blockIdx.y;
  if (col >= n || row >= m) return;
  double acc = 0;
  for (std::int64_t i = 0; i < k; ++i) acc += load(a, t, row * k + i) * load(b, t, i * n + col);
  c[row * n + col] = acc;
}

// One thread per row (or column): a few thousand lines of a validation matrix at most.
__global__ void reference_softmax_kernel(double* c, std::int64_t m, std::int64_t n, bool cols) {
  const std::int64_t line = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  const std::int64_t lines = cols ? n : m, len = cols ? m : n;
  if (line >= lines) return;
  const std::int64_t step = cols ? n : 1;
  double* base = cols ? c + line : c + line * n;
  double mx = -INFINITY, sum = 0;
  for (std::int64_t i = 0; i < len; ++i) mx = fmax(mx, base[i * step]);
  for (std::int64_t i = 0; i < len; ++i) sum += exp(base[i * step] - mx);
  for (std::int64_t i = 0; i < len; ++i) base[i * step] = exp(base[i * step] - mx) / sum;
}

const char* g_program = "sample";

}  // namespace

std::string require_device(const char* program) {
  g_program = program;
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    std::fprintf(stderr, "%s: no CUDA device (%s)\n", program,
                 e != cudaSuccess ? cudaGetErrorString(e) : "cudaGetDeviceCount found none");
    std::exit(3);
  }
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  return prop.name;
}

void check_cuda(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "%s: %s: %s\n", g_program, what, cudaGetErrorString(e));
  std::exit(1);
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  const cudaError_t e = cudaMalloc(&ptr_, bytes == 0 ? 1 : bytes);
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: cannot allocate %.3f GB on the GPU: %s\n", g_program, bytes / 1e9,
                 cudaGetErrorString(e));
    std::exit(1);
  }
}

DeviceBuffer::~DeviceBuffer() {
  if (ptr_ != nullptr) cudaFree(ptr_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept
    : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_ != nullptr) cudaFree(ptr_);
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

void fill_normal(void* data, std::int64_t n, DType t, std::uint64_t seed, cudaStream_t stream,
                 float stddev) {
  if (n <= 0) return;
  fill_normal_kernel<<<blocks_for(n), kThreads, 0, stream>>>(data, n, t, seed, stddev);
  check_cuda(cudaGetLastError(), "fill_normal");
}

void fill_nan(void* data, std::int64_t n, DType t, cudaStream_t stream) {
  if (n <= 0) return;
  fill_nan_kernel<<<blocks_for(n), kThreads, 0, stream>>>(data, n, t);
  check_cuda(cudaGetLastError(), "fill_nan");
}

namespace {
// Runs a reduction kernel into `count` zeroed doubles and copies them back.
template <class Launch>
void reduce_into(double* host, int count, Launch&& launch) {
  DeviceBuffer d(sizeof(double) * count);
  check_cuda(cudaMemset(d.get(), 0, d.bytes()), "cudaMemset");
  launch(d.as<double>());
  check_cuda(cudaGetLastError(), "reduction kernel");
  check_cuda(cudaMemcpy(host, d.get(), d.bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy");
}
}  // namespace

double checksum(const void* data, std::int64_t n, DType t) {
  double total = 0;
  reduce_into(&total, 1,
              [&](double* d) { checksum_kernel<<<blocks_for(n), kThreads>>>(data, n, t, d); });
  return total;
}

double max_abs_diff(const void* a, DType ta, const void* b, DType tb, std::int64_t n) {
  double m = 0;
  reduce_into(&m, 1,
              [&](double* d) { diff_kernel<<<blocks_for(n), kThreads>>>(a, ta, b, tb, n, d); });
  return m;
}

RefDiff diff_to_reference(const void* a, DType t, const double* ref, std::int64_t n) {
  double out[2] = {0, 0};
  reduce_into(out, 2,
              [&](double* d) { ref_diff_kernel<<<blocks_for(n), kThreads>>>(a, t, ref, n, d); });
  return {.max_abs_diff = out[0], .max_abs_ref = out[1]};
}

void reference_matmul(const void* a, const void* b, double* c, std::int64_t m, std::int64_t n,
                      std::int64_t k, DType t) {
  const dim3 grid(static_cast<unsigned>((n + kThreads - 1) / kThreads), static_cast<unsigned>(m));
  reference_matmul_kernel<<<grid, kThreads>>>(a, b, c, m, n, k, t);
  check_cuda(cudaGetLastError(), "reference_matmul");
}

void reference_softmax(double* c, std::int64_t m, std::int64_t n, bool over_columns) {
  const std::int64_t lines = over_columns ? n : m;
  reference_softmax_kernel<<<static_cast<unsigned>((lines + 127) / 128), 128>>>(c, m, n,
                                                                                over_columns);
  check_cuda(cudaGetLastError(), "reference_softmax");
}

}  // namespace flopline::samples
