#include "transpose.cuh"

#include "matmul_launch.h"

namespace flopline::kernels::detail {
namespace {

constexpr int kTile = 32;

__device__ __forceinline__ float round_to_tf32(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return __uint_as_float(r);
}

// 32x32 tiles through shared memory (one padding column: no bank conflicts), both the
// read and the write coalesced.
__global__ void transpose_tf32_kernel(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
  __shared__ float tile[kTile][kTile + 1];
  const int c0 = static_cast<int>(blockIdx.x) * kTile, r0 = static_cast<int>(blockIdx.y) * kTile;
  for (int j = static_cast<int>(threadIdx.y); j < kTile; j += static_cast<int>(blockDim.y)) {
    const int r = r0 + j, c = c0 + static_cast<int>(threadIdx.x);
    if (r < rows && c < cols) tile[j][threadIdx.x] = round_to_tf32(in[static_cast<std::int64_t>(r) * cols + c]);
  }
  __syncthreads();
  for (int j = static_cast<int>(threadIdx.y); j < kTile; j += static_cast<int>(blockDim.y)) {
    const int c = c0 + j, r = r0 + static_cast<int>(threadIdx.x);
    if (r < rows && c < cols) out[static_cast<std::int64_t>(c) * rows + r] = tile[threadIdx.x][j];
  }
}

}  // namespace

void transpose_to_tf32(const float* in, float* out, std::int64_t rows, std::int64_t cols, cudaStream_t stream) {
  const dim3 block(kTile, 8);
  const dim3 grid(static_cast<unsigned>((cols + kTile - 1) / kTile), static_cast<unsigned>((rows + kTile - 1) / kTile));
  transpose_tf32_kernel<<<grid, block, 0, stream>>>(in, out, static_cast<int>(rows), static_cast<int>(cols));
  throw_if_launch_failed("transpose to tf32");
}

}  // namespace flopline::kernels::detail
