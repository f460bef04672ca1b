// Device helpers shared by the portable matmul kernels (matmul_simt.cu, matmul_sm80.cu):
// cp.async copies that zero-fill what lies outside the matrix, and the order in which
// CTAs walk the output tiles.
#pragma once

#include <cstdint>

namespace flopline::kernels::detail {

__device__ __forceinline__ std::uint32_t smem_u32(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// Global -> shared copies (sm_80+). With valid == false nothing is read and the
// destination is zero-filled, so tiles hanging over the matrix edge multiply as zeros.
// `src` must point into the matrix even when invalid (callers pass the base pointer).
// 16 bytes of shared memory from the first src_bytes (0-16) at src, zero-filled after.
__device__ __forceinline__ void cp_async_16_partial(std::uint32_t dst, const void* src,
                                                    int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_16(std::uint32_t dst, const void* src, bool valid) {
  cp_async_16_partial(dst, src, valid ? 16 : 0);
}
__device__ __forceinline__ void cp_async_4(std::uint32_t dst, const void* src, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src),
               "r"(valid ? 4 : 0));
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}
// Waits until at most `Pending` of this thread's committed groups are still in flight.
// Other threads' copies become visible only after a __syncthreads() that follows.
template <int Pending>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending));
}

// Linear CTA index -> output tile. CTAs are walked in groups of `group_m` tile rows,
// column by column inside a group, so the CTAs resident at one time share a few A row
// panels and B column panels and read them from L2 rather than DRAM.
struct TileCoord {
  int m, n;
};
__device__ __forceinline__ TileCoord grouped_tile(int id, int tiles_m, int tiles_n, int group_m) {
  const int per_group = group_m * tiles_n;
  const int group = id / per_group;
  const int first_m = group * group_m;
  const int rows = min(tiles_m - first_m, group_m);
  const int in_group = id - group * per_group;
  return {first_m + in_group % rows, in_group / rows};
}

}  // namespace flopline::kernels::detail
