// tf32 / bf16 / fp16 matmul on tensor cores with mma.sync (sm_80 and newer), fp32
// accumulation; the portable path, and Hopper's fallback when wgmma + TMA cannot take a
// problem (rows not 16-byte aligned).
//
// CTA tile 128 x 256, 8 warps of 64 x 64, a 4-stage cp.async pipeline over k
// (matmul_sm80_tiles.cuh: layouts, swizzles, copies). Per k step of the mma a warp loads
// 4 A fragments (ldmatrix.x4) and 8 B fragments (ldmatrix.x4.trans for 16-bit types;
// LDS.32 for tf32, whose 32-bit words ldmatrix cannot transpose) and issues 32 mma.sync;
// its 64 x 64 fp32 accumulators stay in registers (128 per thread). C is written straight
// from the accumulators, 2 columns per store, bounds-checked.
#include <cuda_runtime.h>

#include <atomic>
#include <climits>
#include <cstdint>
#include <string>
#include <type_traits>

#include "matmul_launch.h"
#include "matmul_sm80_mma.cuh"
#include "matmul_sm80_tiles.cuh"

namespace flopline::kernels::detail {
namespace sm80 {
namespace {

constexpr int kGroupM = 8;  // tile rows per L2 group (grouped_tile)

template <class Mma, Copy kCopy>
__global__ void __launch_bounds__(kThreads, 1)
    matmul_sm80_kernel(const typename Mma::Elem* __restrict__ A,
                       const typename Mma::Elem* __restrict__ B, void* __restrict__ C, int m, int n,
                       int k, int tiles_m, int tiles_n, bool out_f32, bool vec_c) {
  using Elem = typename Mma::Elem;
  using G = Geometry<sizeof(Elem)>;
  constexpr int kSteps = G::kBK / Mma::kMmaK;  // mma k steps per stage: 2
  static_assert(kSteps % 2 == 0, "fragment buffers alternate by k step parity");
  extern __shared__ __align__(128) unsigned char smem[];

  const TileCoord tile = grouped_tile(static_cast<int>(blockIdx.x), tiles_m, tiles_n, kGroupM);
  const int m0 = tile.m * kBM, n0 = tile.n * kBN;
  const int k_tiles = (k + G::kBK - 1) / G::kBK;
  const std::uint32_t smem0 = smem_u32(smem);

  // Prologue: tiles 0..kStages-1 fill all stages (one commit group each, empty past k).
  TileLoader<Elem, kCopy> loader(A, B, m, n, k, m0, n0);
#pragma unroll
  for (int s = 0; s < kStages; ++s) {
    if (s < k_tiles) {
      loader.issue(smem0 + s * kStageBytes, s);
      loader.finish();
    }
    cp_async_commit();
  }

  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  const int wm = warp / 4, wn = warp % 4;  // this warp's 64 x 64 piece: rows wm*64, cols wn*64
  const int g = lane / 4, t = lane % 4;    // mma fragment coordinates

  // A fragments (ldmatrix.x4): lanes 0-15 address rows 0-15 of the first 16-byte chunk of
  // the k step, lanes 16-31 the same rows of the second chunk. The swizzle depends on
  // row bits 1-2 only, so an m tile (16 rows) further is a plain 16*64 bytes further.
  std::uint32_t a_frag[kSteps];
#pragma unroll
  for (int ks = 0; ks < kSteps; ++ks)
    a_frag[ks] = a_offset(wm * 64 + lane % 16, ks * 2 + lane / 16);
  // B fragments. 16-bit: ldmatrix.x4.trans over k rows 0-15 (lanes 0-7: rows 0-7, 8-15:
  // rows 8-15) of two chunks (two n tiles; lanes 16-31 the second). tf32: lane reads
  // k rows t and t+4 of column g of each n tile.
  std::uint32_t b_frag[4];
#pragma unroll
  for (int np = 0; np < 4; ++np) {
    b_frag[np] =
        Mma::kLdsmB ? b_offset<2>(lane % 8 + ((lane / 8) % 2) * 8, wn * 8 + np * 2 + lane / 16) : 0;
  }

  struct Frags {
    std::uint32_t a[4][4], b[8][2];
  };
  auto load_frags = [&](Frags& f, std::uint32_t stage, int ks) {
    const std::uint32_t sa = stage, sb = stage + kTileABytes;
#pragma unroll
    for (int mt = 0; mt < 4; ++mt) {
      ldmatrix_x4(f.a[mt], sa + a_frag[ks] + mt * 16 * kRowBytesA);
#pragma unroll
      for (int r = 0; r < 4; ++r) f.a[mt][r] = Mma::fix(f.a[mt][r]);
    }
    if constexpr (Mma::kLdsmB) {
#pragma unroll
      for (int np = 0; np < 4; ++np) {
        std::uint32_t r[4];
        ldmatrix_x4_trans(r, sb + b_frag[np] + ks * 16 * G::kRowBytesB);
        f.b[2 * np][0] = r[0];
        f.b[2 * np][1] = r[1];
        f.b[2 * np + 1][0] = r[2];
        f.b[2 * np + 1][1] = r[3];
      }
    } else {
#pragma unroll
      for (int nt = 0; nt < 8; ++nt) {
        const std::uint32_t off = b_offset<4>(t, wn * 16 + nt * 2 + g / 4) + (g % 4) * 4 +
                                  ks * Mma::kMmaK * G::kRowBytesB;
        f.b[nt][0] = Mma::fix(lds_u32(sb + off));
        f.b[nt][1] = Mma::fix(lds_u32(sb + off + 4 * G::kRowBytesB));
      }
    }
  };

  float acc[4][8][4];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int r = 0; r < 4; ++r) acc[i][j][r] = 0.f;

  // Main loop. Fragments are double-buffered in registers: the k step being multiplied
  // was loaded one step earlier. The one barrier per k tile sits before the mma of the
  // tile's last k step, whose fragments are already in registers, so its latency and the
  // first fragment loads of the next tile overlap those mma. After that barrier no warp
  // reads tile kt's stage again, so the copy of tile kt + kStages goes straight into it.
  cp_async_wait<kStages - 1>();  // tile 0 (this thread's copies)
  __syncthreads();               // ... and everyone's
  Frags frags[2];                // by k step parity: static indices once unrolled, no copies
  load_frags(frags[0], smem0, 0);
  for (int kt = 0; kt < k_tiles; ++kt) {
    const std::uint32_t stage = smem0 + (kt % kStages) * kStageBytes;
#pragma unroll
    for (int ks = 0; ks < kSteps; ++ks) {
      Frags& cur = frags[ks % 2];
      Frags& nxt = frags[(ks + 1) % 2];
      // Copy::sync loads go to registers, so they can start a whole tile before their
      // stage is free; finish() stores them after the barrier below.
      if (kCopy == Copy::sync && ks == 0 && kt + kStages < k_tiles)
        loader.issue(stage, kt + kStages);
      if (ks == kSteps - 1) {
        // Groups committed so far: tiles 0 .. kt+kStages-1; tile kt+1 must be complete.
        cp_async_wait<kStages - 2>();
        __syncthreads();
        if (kCopy != Copy::sync && kt + kStages < k_tiles) loader.issue(stage, kt + kStages);
        cp_async_commit();  // possibly empty: keeps the group count in step with the tiles
        // Past the last tile this reads a stage that is never used: harmless.
        load_frags(nxt, smem0 + ((kt + 1) % kStages) * kStageBytes, 0);
      } else {
        load_frags(nxt, stage, ks + 1);
      }
#pragma unroll
      for (int mt = 0; mt < 4; ++mt)
#pragma unroll
        for (int nt = 0; nt < 8; ++nt) Mma::mma(acc[mt][nt], cur.a[mt], cur.b[nt][0], cur.b[nt][1]);
    }
    loader.finish();  // Copy::sync: registers -> tile kt's stage, read again only after a barrier
  }
  cp_async_wait<0>();  // only empty groups remain; leave nothing in flight at exit

  // Accumulator (mt, nt) holds rows g and g+8, columns 2t and 2t+1 of its 16 x 8 tile.
#pragma unroll
  for (int mt = 0; mt < 4; ++mt) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = m0 + wm * 64 + mt * 16 + g + 8 * h;
      if (row >= m) continue;
      const std::int64_t row_off = static_cast<std::int64_t>(row) * n;
#pragma unroll
      for (int nt = 0; nt < 8; ++nt) {
        const int col = n0 + wn * 64 + nt * 8 + 2 * t;
        const float x = acc[mt][nt][2 * h], y = acc[mt][nt][2 * h + 1];
        if (std::is_same_v<Mma, Tf32Mma> || out_f32) {
          float* p = static_cast<float*>(C) + row_off + col;
          if (vec_c && col + 1 < n) {
            *reinterpret_cast<float2*>(p) = make_float2(x, y);
          } else {
            if (col < n) p[0] = x;
            if (col + 1 < n) p[1] = y;
          }
        } else {
          unsigned short* p = static_cast<unsigned short*>(C) + row_off + col;
          if (vec_c && col + 1 < n) {
            *reinterpret_cast<std::uint32_t*>(p) = Mma::pack_out(x, y);
          } else {
            if (col < n) p[0] = Mma::one_out(x);
            if (col + 1 < n) p[1] = Mma::one_out(y);
          }
        }
      }
    }
  }
}

bool aligned(const void* p, unsigned bytes) {
  return (reinterpret_cast<std::uintptr_t>(p) & (bytes - 1)) == 0;
}

template <class Mma, Copy kCopy>
void run(const MatmulProblem& p, cudaStream_t stream) {
  using Elem = typename Mma::Elem;
  const auto kernel = matmul_sm80_kernel<Mma, kCopy>;
  // 96 KB of dynamic shared memory needs an opt-in, once per device.
  static std::atomic<std::uint64_t> opted_in{0};
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) throw CudaError("matmul (sm80): cudaGetDevice failed");
  const std::uint64_t bit = 1ull << (dev & 63);
  if (!(opted_in.load(std::memory_order_relaxed) & bit)) {
    const cudaError_t e =
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
    if (e != cudaSuccess) {
      throw CudaError(std::string("matmul (sm80): cannot get 96 KB of shared memory: ") +
                      cudaGetErrorString(e));
    }
    opted_in.fetch_or(bit, std::memory_order_relaxed);
  }
  const int m = static_cast<int>(p.m), n = static_cast<int>(p.n), k = static_cast<int>(p.k);
  const int tiles_m = (m + kBM - 1) / kBM, tiles_n = (n + kBN - 1) / kBN;
  const std::int64_t ctas = static_cast<std::int64_t>(tiles_m) * tiles_n;
  if (ctas > INT_MAX)
    throw KernelError("matmul: m*n = " + std::to_string(p.m * p.n) +
                      " is too large for one launch");
  const bool out_f32 = p.out == DType::f32;
  // Two columns per store: n even and C aligned to two elements.
  const bool vec_c = n % 2 == 0 && aligned(p.c, out_f32 ? 8 : 4);
  kernel<<<static_cast<unsigned>(ctas), kThreads, kSmemBytes, stream>>>(
      static_cast<const Elem*>(p.a), static_cast<const Elem*>(p.b), p.c, m, n, k, tiles_m, tiles_n,
      out_f32, vec_c);
  throw_if_launch_failed("matmul (sm80)");
}

// The widest copies every row of A and B allows (matmul_sm80_tiles.cuh).
template <class Mma>
void run_any_alignment(const MatmulProblem& p, cudaStream_t stream) {
  constexpr std::int64_t es = sizeof(typename Mma::Elem);
  auto rows_aligned = [&](unsigned bytes) {
    return (p.k * es) % bytes == 0 && (p.n * es) % bytes == 0 && aligned(p.a, bytes) &&
           aligned(p.b, bytes);
  };
  if (rows_aligned(16)) {
    run<Mma, Copy::vec16>(p, stream);
  } else if (es == 4 || rows_aligned(4)) {  // fp32 storage: always (a float* is 4-byte aligned)
    run<Mma, Copy::vec4>(p, stream);
  } else if constexpr (es == 2) {
    run<Mma, Copy::sync>(p, stream);
  }
}

}  // namespace
}  // namespace sm80

void launch_matmul_sm80(const MatmulProblem& p, cudaStream_t stream) {
  switch (p.in) {
    case DType::tf32:
      sm80::run_any_alignment<sm80::Tf32Mma>(p, stream);
      return;
    case DType::bf16:
      sm80::run_any_alignment<sm80::Bf16Mma>(p, stream);
      return;
    case DType::f16:
      sm80::run_any_alignment<sm80::F16Mma>(p, stream);
      return;
    case DType::f32:
      break;
  }
  throw KernelError("matmul (sm80): fp32 runs on the simt path");
}

}  // namespace flopline::kernels::detail
