// Kernels whose DRAM traffic is known by construction, run in an order that leaves dirty
// lines in L2 before some of them: what a counted `dram bytes read` / `dram bytes written`
// holds. Counters.BytesWrittenAreTheKernelsOwnStores checks flopline's values;
// bench/dram_bytes_probe.py sets them beside Nsight Compute's (both cache settings).
//   Usage: dram_probe      (prints one line per kernel: name, bytes it reads, bytes it writes)
// Every kernel has its own function, so each is its own signature and its first launch is
// a measured one. L2 is 50 MB on an H100 and 60 MB on an H200: the 32 MB and smaller
// buffers fit it, the 256 MB ones do not.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

namespace {

constexpr size_t kMiB = 1 << 20;

__global__ void fill_small(float* a, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    a[i] = 1.0f;
}

__device__ void sum_into(const float* b, size_t n, float* out) {
  float s = 0.0f;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    s += b[i];
  if (s == -1.0f) *out = s;  // never true for these inputs: the read is all the kernel does
}

// Reads 16 MB, writes nothing: right after fill_small has left 32 MB of dirty lines.
__global__ void read_after_dirty(const float* b, size_t n, float* out) {
  sum_into(b, n, out);
}
// The same read after the L2 was cleaned by a large read.
__global__ void read_after_clean(const float* b, size_t n, float* out) {
  sum_into(b, n, out);
}

__device__ void copy(const float* src, float* dst, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    dst[i] = src[i];
}
// Reads 4 MB and writes 4 MB: the written lines fit L2 and stay dirty after the kernel.
__global__ void copy_small(const float* src, float* dst, size_t n) {
  copy(src, dst, n);
}
// Reads 256 MB and writes 256 MB: most writes are evicted while the kernel runs.
__global__ void copy_large(const float* src, float* dst, size_t n) {
  copy(src, dst, n);
}
// Reads and writes 16 MB in place, after a large read cleaned L2: the memory it writes is
// the memory it reads, which a replay saves before running it and restores between passes.
__global__ void scale_in_place(float* b, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    b[i] *= 2.0f;
}
// Reads 256 MB, writes nothing: leaves the L2 clean (and is itself a plain large read).
__global__ void read_large(const float* b, size_t n, float* out) {
  sum_into(b, n, out);
}

bool ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "dram_probe: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

}  // namespace

int main() {
  const size_t small = 32 * kMiB / 4, read_n = 16 * kMiB / 4, copy_n = 4 * kMiB / 4;
  const size_t large = 256 * kMiB / 4;
  float *a, *b, *c, *d, *big, *big2, *out;
  if (!ok(cudaMalloc(&a, small * 4), "cudaMalloc") ||
      !ok(cudaMalloc(&b, read_n * 4), "cudaMalloc") ||
      !ok(cudaMalloc(&c, copy_n * 4), "cudaMalloc") ||
      !ok(cudaMalloc(&d, copy_n * 4), "cudaMalloc") ||
      !ok(cudaMalloc(&big, large * 4), "cudaMalloc") ||
      !ok(cudaMalloc(&big2, large * 4), "cudaMalloc") || !ok(cudaMalloc(&out, 4), "cudaMalloc"))
    return 1;
  cudaMemset(a, 0, small * 4);
  cudaMemset(b, 0, read_n * 4);
  cudaMemset(c, 0, copy_n * 4);
  cudaMemset(d, 0, copy_n * 4);
  cudaMemset(big, 0, large * 4);
  cudaMemset(big2, 0, large * 4);
  const int blocks = 1056, threads = 256;
  // The memsets' dirty lines go out with a large read first.
  read_large<<<blocks, threads>>>(big, large, out);
  fill_small<<<blocks, threads>>>(a, small);
  read_after_dirty<<<blocks, threads>>>(b, read_n, out);
  read_large<<<blocks, threads>>>(big, large, out);
  read_after_clean<<<blocks, threads>>>(b, read_n, out);
  copy_small<<<blocks, threads>>>(c, d, copy_n);
  copy_large<<<blocks, threads>>>(big, big2, large);
  read_large<<<blocks, threads>>>(big, large, out);
  scale_in_place<<<blocks, threads>>>(b, read_n);
  if (!ok(cudaDeviceSynchronize(), "kernels")) return 1;
  std::printf("kernel reads writes\n");
  std::printf("read_large %zu 0\n", large * 4);
  std::printf("fill_small 0 %zu\n", small * 4);
  std::printf("read_after_dirty %zu 0\n", read_n * 4);
  std::printf("read_after_clean %zu 0\n", read_n * 4);
  std::printf("copy_small %zu %zu\n", copy_n * 4, copy_n * 4);
  std::printf("copy_large %zu %zu\n", large * 4, large * 4);
  std::printf("scale_in_place %zu %zu\n", read_n * 4, read_n * 4);
  return 0;
}
