// Shared-memory tiles of the sm80 matmul path and the copies that fill them.
//
// A CTA computes a 128 x 256 tile of C. Per pipeline stage it holds a 128 x kBK tile of A
// (64 bytes of each row: kBK = 32 for 16-bit types, 16 for tf32) and a kBK x 256 tile of
// B (row-major, as in memory): 8 KB + 16 KB whatever the type, 4 stages = 96 KB, which
// fits every sm_80+ part (the smallest opt-in limit, sm_86/89, is 99 KB).
//
// Both tiles are stored in 16-byte chunks whose position in a row is XOR-swizzled with
// bits of the row index, so that neither the copies (a warp writes whole rows) nor the
// fragment reads (8 rows of one chunk column at a time) hit a bank twice:
//   A, 64-byte rows:         chunk ^ ((row >> 1) & 3)  (a 128-byte line holds 2 rows)
//   B 16-bit, 512-byte rows: chunk ^ (row & 7)         (ldmatrix.trans reads 8 k rows)
//   B tf32, 1024-byte rows:  chunk ^ ((row & 3) << 1)  (LDS.32 reads 4 k rows x 8 columns)
//
// The copies come in three kinds, chosen per launch (Copy):
//   vec16: 16-byte cp.async; every row of A and B starts 16-byte aligned.
//   vec4:  4-byte cp.async (one tf32, two 16-bit elements): rows 4-byte aligned only,
//          e.g. tf32 with k or n not a multiple of 4, bf16 with k = 4098.
//   sync:  2-byte loads through registers (16-bit types whose rows are not 4-byte
//          aligned: odd k or n); they are issued before the math of a k tile and stored
//          to shared memory after it, so their latency overlaps the mma work.
// Elements outside the matrix are zero-filled in all three.
#pragma once

#include <cstdint>

#include "matmul_common.cuh"

namespace flopline::kernels::detail::sm80 {

constexpr int kBM = 128, kBN = 256;
constexpr int kThreads = 256;  // 8 warps: 2 (m) x 4 (n), 64 x 64 of C each
constexpr int kStages = 4;
constexpr int kRowBytesA = 64;
constexpr int kTileABytes = kBM * kRowBytesA;  // 8 KB
constexpr int kTileBBytes = 16 * 1024;
constexpr int kStageBytes = kTileABytes + kTileBBytes;
constexpr int kSmemBytes = kStages * kStageBytes;  // 96 KB

template <int kElemBytes>
struct Geometry {
  static constexpr int kBK = kRowBytesA / kElemBytes;        // k per stage: 32 or 16
  static constexpr int kChunkElems = 16 / kElemBytes;        // 8 or 4
  static constexpr int kRowBytesB = kBN * kElemBytes;        // 512 or 1024
  static constexpr int kChunksB = kRowBytesB / 16;           // 32 or 64
  static constexpr int kRowsPerPassB = kThreads / kChunksB;  // B rows one pass of the CTA copies
  static constexpr int kPassesB = kTileBBytes / (16 * kThreads);  // 4
  static_assert(kRowsPerPassB * kPassesB == kBK, "B tile geometry");
};

// Byte offset of 16-byte chunk `chunk` of row `row` inside the A tile / B tile.
__device__ __forceinline__ std::uint32_t a_offset(int row, int chunk) {
  return static_cast<std::uint32_t>(row * kRowBytesA + ((chunk ^ ((row >> 1) & 3)) << 4));
}
template <int kElemBytes>
__device__ __forceinline__ std::uint32_t b_offset(int row, int chunk) {
  if constexpr (kElemBytes == 2) {
    return static_cast<std::uint32_t>(row * 512 + ((chunk ^ (row & 7)) << 4));
  } else {
    return static_cast<std::uint32_t>(row * 1024 + ((chunk ^ ((row & 3) << 1)) << 4));
  }
}

enum class Copy { vec16, vec4, sync };

// Fills stage tiles from global memory. Thread t copies, per stage:
//   A: rows t/4 and t/4 + 64, chunk t%4 (one warp: 8 rows x 64 bytes);
//   B: rows t/kChunksB + i*kRowsPerPassB (i < 4), chunk t%kChunksB (a warp: 512 contiguous bytes).
// issue() starts the copies of k tile kt into a stage; finish() completes them where
// they went through registers (Copy::sync), after the stage being read is multiplied.
template <typename Elem, Copy kCopy>
struct TileLoader {
  using G = Geometry<sizeof(Elem)>;
  static constexpr int kChunks = 2 + G::kPassesB;  // chunks per thread per stage

  const Elem* A;
  const Elem* B;
  const Elem* a_base;   // &A[m0 + t/4][a_kc] (may point past A when the row is outside)
  const Elem* b_base;   // &B[t/kChunksB][n0 + b_col]
  std::int64_t a_step;  // 64 rows of A
  std::int64_t b_step;  // kRowsPerPassB rows of B
  int k, n, a_kc, b_row;
  int b_cols;          // columns of this thread's B chunk inside the matrix (0..kChunkElems)
  unsigned a_rows_ok;  // bit i: row t/4 + 64i is inside A
  std::uint32_t a_dst, b_dst;  // byte offsets of pass 0 in the A / B tile
  std::uint32_t staged[kCopy == Copy::sync ? kChunks : 1][4];
  std::uint32_t staged_stage;  // where finish() stores `staged` (shared address of the stage)
  bool staged_valid;

  __device__ TileLoader(const Elem* A_, const Elem* B_, int m, int n_, int k_, int m0, int n0)
      : A(A_), B(B_), k(k_), n(n_) {
    const int t = static_cast<int>(threadIdx.x);
    const int a_row = t / 4, a_chunk = t % 4;
    a_kc = a_chunk * G::kChunkElems;
    a_base = A + static_cast<std::int64_t>(m0 + a_row) * k + a_kc;
    a_step = 64 * static_cast<std::int64_t>(k);
    a_rows_ok = (m0 + a_row < m ? 1u : 0u) | (m0 + a_row + 64 < m ? 2u : 0u);
    a_dst = a_offset(a_row, a_chunk);  // row + 64 keeps the swizzle: pass 1 is a_dst + 64 rows
    b_row = t / G::kChunksB;
    const int b_chunk = t % G::kChunksB;
    const int b_col = n0 + b_chunk * G::kChunkElems;
    b_cols = min(max(n - b_col, 0), G::kChunkElems);
    b_base = B + static_cast<std::int64_t>(b_row) * n + b_col;
    b_step = G::kRowsPerPassB * static_cast<std::int64_t>(n);
    b_dst = b_offset<sizeof(Elem)>(b_row, b_chunk);  // passes keep the swizzle (rows + 8 or + 4)
    staged_valid = false;
  }

  // Starts copying k tile kt into the stage at shared address `stage`.
  __device__ __forceinline__ void issue(std::uint32_t stage, int kt) {
    const int k0 = kt * G::kBK;
    const std::uint32_t sa = stage, sb = stage + kTileABytes;
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const bool row_ok = (a_rows_ok >> i) & 1u;
      const Elem* src = a_base + i * a_step + k0;
      const std::uint32_t dst = sa + a_dst + i * 64 * kRowBytesA;
      copy_chunk(i, dst, src, row_ok, k - (k0 + a_kc));
    }
    const Elem* b_tile = b_base + static_cast<std::int64_t>(k0) * n;
#pragma unroll
    for (int i = 0; i < G::kPassesB; ++i) {
      const bool row_ok = k0 + b_row + i * G::kRowsPerPassB < k;
      const Elem* src = b_tile + i * b_step;
      const std::uint32_t dst = sb + b_dst + i * G::kRowsPerPassB * G::kRowBytesB;
      copy_chunk(2 + i, dst, src, row_ok, b_cols);
    }
    if constexpr (kCopy == Copy::sync) {
      staged_stage = stage;
      staged_valid = true;
    }
  }

  // Stores what issue() staged in registers (Copy::sync); nothing to do otherwise.
  __device__ __forceinline__ void finish() {
    if constexpr (kCopy == Copy::sync) {
      if (!staged_valid) return;
      staged_valid = false;
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        asm volatile(
            "st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(chunk_addr(staged_stage, c)),
            "r"(staged[c][0]), "r"(staged[c][1]), "r"(staged[c][2]), "r"(staged[c][3]));
      }
    }
  }

 private:
  // Shared address of this thread's chunk c (0-1: A rows t/4, t/4+64; 2-5: B passes).
  __device__ __forceinline__ std::uint32_t chunk_addr(std::uint32_t stage, int c) const {
    return c < 2 ? stage + a_dst + c * 64 * kRowBytesA
                 : stage + kTileABytes + b_dst + (c - 2) * G::kRowsPerPassB * G::kRowBytesB;
  }

  // One 16-byte chunk: `row_ok` says its row is inside the matrix, `elems` how many of its
  // elements are (<= 0: none, >= kChunkElems: all).
  __device__ __forceinline__ void copy_chunk(int c, std::uint32_t dst, const Elem* src, bool row_ok,
                                             int elems) {
    if constexpr (kCopy == Copy::vec16) {
      (void)c;
      const bool ok = row_ok && elems > 0;  // rows are 16-byte multiples: all or nothing
      cp_async_16(dst, ok ? static_cast<const void*>(src) : A, ok);
    } else if constexpr (kCopy == Copy::vec4) {
      // Rows hold a whole number of 4-byte words, so a word is all inside or all outside.
      constexpr int kPerWord = 4 / sizeof(Elem);
      (void)c;
#pragma unroll
      for (int w = 0; w < 4; ++w) {
        const bool ok = row_ok && w * kPerWord < elems;
        cp_async_4(dst + 4 * w, ok ? static_cast<const void*>(src + w * kPerWord) : A, ok);
      }
    } else {
      static_assert(sizeof(Elem) == 2, "register-staged copies are for 16-bit types");
      const auto* s16 = reinterpret_cast<const unsigned short*>(src);
      unsigned short v[8];
#pragma unroll
      for (int e = 0; e < 8; ++e)
        v[e] = (row_ok && e < elems) ? s16[e] : static_cast<unsigned short>(0);
#pragma unroll
      for (int w = 0; w < 4; ++w)
        staged[c][w] = v[2 * w] | (static_cast<std::uint32_t>(v[2 * w + 1]) << 16);
      (void)dst;
    }
  }
};

}  // namespace flopline::kernels::detail::sm80
