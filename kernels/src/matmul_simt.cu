// fp32 matmul on CUDA cores (FFMA), sm_80 and newer.
//
// One CTA of 256 threads computes a 128x128 tile of C; each thread owns an 8x8 block of
// it (two 4-row by two 4-column pieces, 64 rows/columns apart) and accumulates outer
// products: per k step 4 LDS.128 feed 64 FFMA. K is walked 8 at a time through a
// 4-stage cp.async pipeline, so three tiles are in flight while one is multiplied.
//
// Shared memory holds A transposed (As[k][m]) so a thread reads its 8 rows of one k as
// two float4s. The transpose is done by the copy itself: A arrives element by element
// (4-byte cp.async), which also means A needs no alignment. B is copied as rows: 16-byte
// copies when every row of B starts 16-byte aligned, 4-byte copies otherwise. Copies that
// fall outside the matrix zero-fill, so edges and the k tail need no other special case;
// only the stores of C are bounds-checked.
#include <cuda_runtime.h>

#include <climits>
#include <cstdint>
#include <string>

#include "matmul_common.cuh"
#include "matmul_launch.h"

namespace flopline::kernels::detail {
namespace {

constexpr int kBM = 128, kBN = 128, kBK = 8;
constexpr int kStages = 4;
constexpr int kThreads = 256;
constexpr int kGroupM = 8;  // tile rows per L2 group (grouped_tile)
// A^T row pitch: 4 floats of padding so the 32 transposing copies of a warp (4 rows x 8 k)
// land in 32 different banks, while rows stay 16-byte aligned for the float4 reads.
constexpr int kLdA = kBM + 4;

struct SimtSmem {
  float a[kStages][kBK][kLdA];  // A^T: a[s][k][m]
  float b[kStages][kBK][kBN];   // B:   b[s][k][n]
};

// Issues the copies of k tile `kt` into stage `s`.
//   A: thread t copies rows t/8 + 32i (i < 4) at k column t%8 (a warp reads 4 rows x 32 B).
//   B: kVecB: row t/32, columns 4*(t%32)..+3 as one 16-byte copy;
//      else:  rows t/128 + 2i (i < 4), column t%128, four 4-byte copies.
template <bool kVecB>
struct SimtLoader {
  const float* A;
  const float* B;
  const float* a_base;  // &A[m0 + tid/8][a_col]; row i adds i * a_step
  const float* b_base;  // &B[b_row][n0 + b_col]
  std::int64_t a_step;  // 32 rows of A
  int k, n, a_col, b_row;
  unsigned a_rows_ok;  // bit i: row tid/8 + 32i is inside A
  bool b_col_ok;

  __device__ SimtLoader(const float* A_, const float* B_, int m, int n_, int k_, int m0, int n0,
                        int tid)
      : A(A_), B(B_), k(k_), n(n_) {
    a_col = tid % kBK;
    const int a_row = m0 + tid / kBK;
    a_base = A + static_cast<std::int64_t>(a_row) * k + a_col;
    a_step = 32 * static_cast<std::int64_t>(k);
    a_rows_ok = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) a_rows_ok |= (a_row + 32 * i < m ? 1u : 0u) << i;
    const int b_col = kVecB ? 4 * (tid % 32) : tid % kBN;
    b_row = kVecB ? tid / 32 : tid / kBN;
    b_col_ok = n0 + b_col < n;
    b_base = B + static_cast<std::int64_t>(b_row) * n + n0 + b_col;
  }

  // Out-of-range copies read nothing; they still get a pointer inside the matrix.
  __device__ __forceinline__ void issue(SimtSmem& s, int stage, int kt) const {
    const int tid = static_cast<int>(threadIdx.x);
    const int k0 = kt * kBK;
    const bool a_k_ok = k0 + a_col < k;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const bool ok = ((a_rows_ok >> i) & 1u) && a_k_ok;
      cp_async_4(smem_u32(&s.a[stage][a_col][tid / kBK + 32 * i]),
                 ok ? a_base + i * a_step + k0 : A, ok);
    }
    const float* b_tile = b_base + static_cast<std::int64_t>(k0) * n;
    if (kVecB) {
      const bool ok = b_col_ok && k0 + b_row < k;
      cp_async_16(smem_u32(&s.b[stage][b_row][4 * (tid % 32)]), ok ? b_tile : B, ok);
    } else {
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const bool ok = b_col_ok && k0 + b_row + 2 * i < k;
        cp_async_4(smem_u32(&s.b[stage][b_row + 2 * i][tid % kBN]),
                   ok ? b_tile + 2 * i * static_cast<std::int64_t>(n) : B, ok);
      }
    }
  }
};

template <bool kVecB>
__global__ void __launch_bounds__(kThreads, 2)
    matmul_simt_kernel(const float* __restrict__ A, const float* __restrict__ B,
                       float* __restrict__ C, int m, int n, int k, int tiles_m, int tiles_n,
                       bool vec_c) {
  __shared__ __align__(16) SimtSmem smem;
  const TileCoord tile = grouped_tile(static_cast<int>(blockIdx.x), tiles_m, tiles_n, kGroupM);
  const int m0 = tile.m * kBM, n0 = tile.n * kBN;
  const int tid = static_cast<int>(threadIdx.x);
  const int k_tiles = (k + kBK - 1) / kBK;

  const SimtLoader<kVecB> loader(A, B, m, n, k, m0, n0, tid);
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < k_tiles) loader.issue(smem, s, s);
    cp_async_commit();
  }

  // Warps form a 4 (m) x 2 (n) grid, lanes a 4 x 8 grid inside a warp: one k step's A reads
  // are 4 distinct float4s and B reads 8 consecutive float4s per warp (one wavefront each).
  const int warp = tid / 32, lane = tid % 32;
  const int row_t = (warp / 2) * 16 + (lane / 8) * 4;  // rows row_t..+3 and row_t+64..+3
  const int col_t = (warp % 2) * 32 + (lane % 8) * 4;  // cols col_t..+3 and col_t+64..+3
  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.f;

  for (int kt = 0; kt < k_tiles; ++kt) {
    // Tile kt has landed (this thread's copies); the barrier publishes everyone's and
    // also says all warps are done with tile kt-1, whose stage the next copy reuses.
    cp_async_wait<kStages - 2>();
    __syncthreads();
    const int next = kt + kStages - 1;
    if (next < k_tiles) loader.issue(smem, next % kStages, next);
    cp_async_commit();  // possibly empty: keeps the wait_group count aligned with tiles

    const int s = kt % kStages;
#pragma unroll
    for (int kk = 0; kk < kBK; ++kk) {
      const float4 a0 = *reinterpret_cast<const float4*>(&smem.a[s][kk][row_t]);
      const float4 a1 = *reinterpret_cast<const float4*>(&smem.a[s][kk][row_t + 64]);
      const float4 b0 = *reinterpret_cast<const float4*>(&smem.b[s][kk][col_t]);
      const float4 b1 = *reinterpret_cast<const float4*>(&smem.b[s][kk][col_t + 64]);
      const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
      const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
  }
  cp_async_wait<0>();  // only empty groups remain; leave nothing in flight at exit

  // Each row piece is 4 consecutive columns: one float4 store where C allows it.
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int row = m0 + row_t + (i < 4 ? i : 60 + i);
    if (row >= m) continue;
    float* c_row = C + static_cast<std::int64_t>(row) * n;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int col = n0 + col_t + 64 * h;
      const float* v = &acc[i][4 * h];
      if (vec_c && col + 3 < n) {
        *reinterpret_cast<float4*>(c_row + col) = make_float4(v[0], v[1], v[2], v[3]);
      } else {
#pragma unroll
        for (int j = 0; j < 4; ++j)
          if (col + j < n) c_row[col + j] = v[j];
      }
    }
  }
}

bool aligned16(const void* p) {
  return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0;
}

}  // namespace

void launch_matmul_simt(const MatmulProblem& p, cudaStream_t stream) {
  const int m = static_cast<int>(p.m), n = static_cast<int>(p.n), k = static_cast<int>(p.k);
  const int tiles_m = (m + kBM - 1) / kBM, tiles_n = (n + kBN - 1) / kBN;
  const std::int64_t ctas = static_cast<std::int64_t>(tiles_m) * tiles_n;
  if (ctas > INT_MAX)
    throw KernelError("matmul: m*n = " + std::to_string(p.m * p.n) +
                      " is too large for one launch");
  const auto* a = static_cast<const float*>(p.a);
  const auto* b = static_cast<const float*>(p.b);
  auto* c = static_cast<float*>(p.c);
  // 16-byte rows of B need n % 4 == 0 and an aligned base; the same for C's float4 stores.
  const bool vec_b = n % 4 == 0 && aligned16(b);
  const bool vec_c = n % 4 == 0 && aligned16(c);
  const dim3 grid(static_cast<unsigned>(ctas));
  if (vec_b) {
    matmul_simt_kernel<true>
        <<<grid, kThreads, 0, stream>>>(a, b, c, m, n, k, tiles_m, tiles_n, vec_c);
  } else {
    matmul_simt_kernel<false>
        <<<grid, kThreads, 0, stream>>>(a, b, c, m, n, k, tiles_m, tiles_n, vec_c);
  }
  throw_if_launch_failed("matmul (simt)");
}

}  // namespace flopline::kernels::detail
