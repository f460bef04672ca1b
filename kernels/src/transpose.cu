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
__global__ void transpose_tf32_kernel(const float* __restrict__ in, float* __restrict__ out,
                                      int rows, int cols) {
  __shared__ float tile[kTile][kTile + 1];
  const int c0 = static_cast<int>(blockIdx.x) * kTile, r0 = static_cast<int>(blockIdx.y) * kTile;
  for (int j = static_cast<int>(threadIdx.y); j < kTile; j += static_cast<int>(blockDim.y)) {
    const int r = r0 + j, c = c0 + static_cast<int>(threadIdx.x);
    if (r < rows && c < cols)
      tile[j][threadIdx.x] = round_to_tf32(in[static_cast<std::int64_t>(r) * cols + c]);
  }
  __syncthreads();
  for (int j = static_cast<int>(threadIdx.y); j < kTile; j += static_cast<int>(blockDim.y)) {
    const int c = c0 + j, r = r0 + static_cast<int>(threadIdx.x);
    if (r < rows && c < cols) out[static_cast<std::int64_t>(c) * rows + r] = tile[threadIdx.x][j];
  }
}

// 4x4 blocks per thread without shared memory: a thread loads four float4 from four
// consecutive rows (the same four columns) and stores four float4 into four consecutive
// rows of the output. A warp's lanes are 8 column groups x 4 row groups, so each load
// instruction reads 4 rows x 128 contiguous bytes and each store writes 8 output rows x
// 64 contiguous bytes: whole 32-byte sectors both ways, and 64 bytes in flight per
// thread. (The 32x32 shared-memory kernel above moved 2 TB/s at 4096 x 4096.) A block is
// 8 warps: 32 columns x 128 rows. Needs rows and cols multiples of 4 and 16-byte
// aligned pointers.
constexpr int kBlockCols4 = 32, kBlockRows4 = 128;

__device__ __forceinline__ float component(const float4& v, int j) {
  return j == 0 ? v.x : j == 1 ? v.y : j == 2 ? v.z : v.w;
}

__global__ void __launch_bounds__(256)
    transpose_tf32_4x4_kernel(const float4* __restrict__ in, float4* __restrict__ out, int rows,
                              int cols) {
  const int lane = static_cast<int>(threadIdx.x) & 31, warp = static_cast<int>(threadIdx.x) >> 5;
  const int c = static_cast<int>(blockIdx.x) * kBlockCols4 + (lane & 7) * 4;
  const int r = static_cast<int>(blockIdx.y) * kBlockRows4 + warp * 16 + (lane >> 3) * 4;
  if (c >= cols || r >= rows) return;
  float4 v[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) v[i] = __ldcs(in + (static_cast<std::int64_t>(r + i) * cols + c) / 4);
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    out[(static_cast<std::int64_t>(c + j) * rows + r) / 4] =
        make_float4(round_to_tf32(component(v[0], j)), round_to_tf32(component(v[1], j)),
                    round_to_tf32(component(v[2], j)), round_to_tf32(component(v[3], j)));
  }
}

}  // namespace

void transpose_to_tf32(const float* in, float* out, std::int64_t rows, std::int64_t cols,
                       cudaStream_t stream) {
  const bool vec4 = rows % 4 == 0 && cols % 4 == 0 &&
                    reinterpret_cast<std::uintptr_t>(in) % 16 == 0 &&
                    reinterpret_cast<std::uintptr_t>(out) % 16 == 0;
  if (vec4) {
    const dim3 grid(static_cast<unsigned>((cols + kBlockCols4 - 1) / kBlockCols4),
                    static_cast<unsigned>((rows + kBlockRows4 - 1) / kBlockRows4));
    transpose_tf32_4x4_kernel<<<grid, 256, 0, stream>>>(
        reinterpret_cast<const float4*>(in), reinterpret_cast<float4*>(out), static_cast<int>(rows),
        static_cast<int>(cols));
    throw_if_launch_failed("transpose to tf32");
    return;
  }
  const dim3 block(kTile, 8);
  const dim3 grid(static_cast<unsigned>((cols + kTile - 1) / kTile),
                  static_cast<unsigned>((rows + kTile - 1) / kTile));
  transpose_tf32_kernel<<<grid, block, 0, stream>>>(in, out, static_cast<int>(rows),
                                                    static_cast<int>(cols));
  throw_if_launch_failed("transpose to tf32");
}

}  // namespace flopline::kernels::detail
