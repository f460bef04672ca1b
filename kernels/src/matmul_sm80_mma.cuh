// The tensor-core instructions of the sm80 matmul path, one struct per input type:
// mma.sync (fp32 accumulate), and the loads of A and B fragments from the swizzled
// shared-memory tiles (layouts in matmul_sm80_tiles.cuh).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace flopline::kernels::detail::sm80 {

// ldmatrix: four 8x8 matrices of 16-bit elements (8 rows of 16 bytes each); lane l gives
// the row address of matrix l/8, row l%8. Without .trans, lane l receives the 32-bit
// word l%4 of row l/4 of each matrix; with .trans, of the transposed matrix. For 32-bit
// data (tf32) the non-transposed form is an 8x4 tile of words, lane l getting (l/4, l%4).
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], std::uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ std::uint32_t lds_u32(std::uint32_t addr) {
  std::uint32_t v;
  asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(v) : "r"(addr));
  return v;
}

// Round-to-nearest into tf32 (10-bit mantissa). Feeding raw fp32 bits would truncate,
// which biases every product toward zero (a relative error near 1e-3 on long sums).
__device__ __forceinline__ std::uint32_t to_tf32(std::uint32_t f32_bits) {
  std::uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(__uint_as_float(f32_bits)));
  return r;
}

// One warp-wide D += A(16 x kMmaK) x B(kMmaK x 8). A: 4 registers (rows g and g+8 of the
// two k halves), B: 2 registers, D: rows g, g+8 and columns 2t, 2t+1 (g = lane/4, t = lane%4).
struct Bf16Mma {
  using Elem = __nv_bfloat16;
  static constexpr int kMmaK = 16;
  static constexpr bool kLdsmB = true;  // B fragments by ldmatrix.trans
  __device__ __forceinline__ static void mma(float (&d)[4], const std::uint32_t (&a)[4],
                                             std::uint32_t b0, std::uint32_t b1) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  __device__ __forceinline__ static std::uint32_t fix(std::uint32_t v) { return v; }
  __device__ __forceinline__ static std::uint32_t pack_out(float x, float y) {
    const __nv_bfloat162 v = __floats2bfloat162_rn(x, y);
    return *reinterpret_cast<const std::uint32_t*>(&v);
  }
  __device__ __forceinline__ static unsigned short one_out(float x) {
    const __nv_bfloat16 v = __float2bfloat16_rn(x);
    return *reinterpret_cast<const unsigned short*>(&v);
  }
};

struct F16Mma {
  using Elem = __half;
  static constexpr int kMmaK = 16;
  static constexpr bool kLdsmB = true;
  __device__ __forceinline__ static void mma(float (&d)[4], const std::uint32_t (&a)[4],
                                             std::uint32_t b0, std::uint32_t b1) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  __device__ __forceinline__ static std::uint32_t fix(std::uint32_t v) { return v; }
  __device__ __forceinline__ static std::uint32_t pack_out(float x, float y) {
    const __half2 v = __floats2half2_rn(x, y);
    return *reinterpret_cast<const std::uint32_t*>(&v);
  }
  __device__ __forceinline__ static unsigned short one_out(float x) {
    const __half v = __float2half_rn(x);
    return *reinterpret_cast<const unsigned short*>(&v);
  }
};

struct Tf32Mma {
  using Elem = float;
  static constexpr int kMmaK = 8;
  // ldmatrix cannot transpose 32-bit words: B fragments come from LDS.32, each straight
  // into the register the mma reads (an LDS.128 of 4 columns would need register moves to
  // pair b0 and b1 of one column, which are 4 k rows apart).
  static constexpr bool kLdsmB = false;
  __device__ __forceinline__ static void mma(float (&d)[4], const std::uint32_t (&a)[4],
                                             std::uint32_t b0, std::uint32_t b1) {
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  // Fragments are loaded as fp32 bits and rounded once, before their first mma.
  __device__ __forceinline__ static std::uint32_t fix(std::uint32_t v) { return to_tf32(v); }
  // tf32 writes fp32 only.
  __device__ __forceinline__ static std::uint32_t pack_out(float, float) { return 0; }
  __device__ __forceinline__ static unsigned short one_out(float) { return 0; }
};

}  // namespace flopline::kernels::detail::sm80
