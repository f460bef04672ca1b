// softmax(A x B) in one cooperative launch, for problems small enough that every 64x64
// tile of the scores has its own resident CTA (docs/KERNELS.md, "one launch"). At the
// classic experiment's sizes (128-512) the GPU work is a few microseconds and the
// multi-launch schemes spent more on launches and scratch allocations than on the math.
//
// Each CTA (8 warps, mma.sync on tensor cores: tf32 m16n8k8 or bf16 m16n8k16) computes
// its tile of the scores into registers, then:
//   1. the tile's softmax statistics per row over its 64 columns (or per column over its
//      64 rows) go to `partial`;
//   2. grid-wide barrier; each CTA combines the partials of its 64 rows (columns) into
//      their final (max, 1/sum);
//   3. when `partial` lies in the output buffer itself (no allocation), a second barrier
//      keeps any CTA from overwriting partials another still reads;
//   4. exp(s - max) / sum goes straight from the registers to the output.
// The scores never leave the registers. A and B are read with plain loads (any shape,
// any alignment) and staged through shared memory, double-buffered.
#include <cooperative_groups.h>
#include <cuda_bf16.h>

#include <cstdint>
#include <string>

#include "fast_exp.cuh"
#include "matmul_launch.h"
#include "matmul_sm80_mma.cuh"
#include "softmax_merge.cuh"
#include "softmax_one_launch.h"
#include "tile_shapes.h"

namespace flopline::kernels::detail {
namespace {

namespace cg = cooperative_groups;
using sm80::Bf16Mma;
using sm80::Tf32Mma;

constexpr int kTile = shapes::kOneLaunchTile;  // rows and columns of a CTA's tile
// 8 warps: two k groups of 4 (2 x 2 warps of 32x32 each), each group taking half of
// every stage's k; the groups' accumulators are added at the end. Two warps per
// scheduler hide the shared-memory and mma latencies that one alone waited out.
constexpr int kThreads = 256;
using fast::exp2_ftz;
using fast::kLog2e;

// Input element type: how many k elements a 32-bit shared word packs, the words of k per
// stage (32 k elements either way), and the packing of loaded values into a word (zero
// where out of bounds, tf32 rounded to nearest).
template <class Mma>
struct Words;
template <>
struct Words<Tf32Mma> {
  using In = float;
  static constexpr int kPerWord = 1, kStageWords = 32;
  __device__ static std::uint32_t pack(float x0, float, bool ok0, bool) {
    return ok0 ? sm80::to_tf32(__float_as_uint(x0)) : 0u;
  }
};
template <>
struct Words<Bf16Mma> {
  using In = __nv_bfloat16;
  static constexpr int kPerWord = 2, kStageWords = 16;
  __device__ static std::uint32_t pack(__nv_bfloat16 x0, __nv_bfloat16 x1, bool ok0, bool ok1) {
    const unsigned short lo = ok0 ? __bfloat16_as_ushort(x0) : 0,
                         hi = ok1 ? __bfloat16_as_ushort(x1) : 0;
    return static_cast<std::uint32_t>(lo) | (static_cast<std::uint32_t>(hi) << 16);
  }
};

__device__ __forceinline__ void store_out(float* p, float v) {
  *p = v;
}
__device__ __forceinline__ void store_out(__nv_bfloat16* p, float v) {
  *p = __float2bfloat16_rn(v);
}

// (max, sum of exp(x - max)) merged with the one-instruction exp; an empty side is (-inf, 0).
struct Exp2FtzShifted {
  __device__ float operator()(float x, float mx) const { return exp2_ftz((x - mx) * kLog2e); }
};
__device__ __forceinline__ float2 merge(float2 a, float2 b) {
  return merge_stats<EmptySide::zero_when_all_empty>(a, b, Exp2FtzShifted{});
}

template <class Mma, class OutT, bool rows>
__global__ void __launch_bounds__(kThreads, 2)
    one_launch_kernel(const typename Words<Mma>::In* __restrict__ a,
                      const typename Words<Mma>::In* __restrict__ b, OutT* out, int m, int n, int k,
                      float2* partial, bool partial_in_out) {
  using W = Words<Mma>;
  using In = typename W::In;
  constexpr int kP = W::kPerWord;
  constexpr int kW = W::kStageWords;           // words of k per stage
  constexpr int kPitch = kW + 4;               // words per shared row: fragment loads hit 32 banks
  constexpr int kStage = 2 * kTile * kPitch;   // A rows, then B^T rows (columns of B)
  constexpr int kPer = kTile * kW / kThreads;  // words of A (and of B) each thread stages
  constexpr int kRowStep = kThreads / kW;      // rows of A one pass of the block covers
  // Two stages; at the end, k group 1's accumulators (4096 floats).
  __shared__ std::uint32_t smem[2 * kStage > 4096 ? 2 * kStage : 4096];
  __shared__ float2 halves[2][kTile];    // the two warps sharing a row (column) of the tile
  __shared__ float2 final_stats[kTile];  // (max * log2e, 1 / sum) of the tile's rows (columns)

  const int tiles_n = (n + kTile - 1) / kTile, tiles_m = (m + kTile - 1) / kTile;
  const int m0 = static_cast<int>(blockIdx.x) / tiles_n * kTile,
            n0 = static_cast<int>(blockIdx.x) % tiles_n * kTile;
  const int tid = static_cast<int>(threadIdx.x), warp = tid / 32, lane = tid % 32;
  const int kgroup = warp / 4, wm = warp % 4 / 2, wn = warp % 2, g = lane / 4, t = lane % 4;
  const int k_words = (k + kP - 1) / kP, stages = (k_words + kW - 1) / kW;

  // Staging: kPer words of A (row tid/kW + kRowStep*j, word tid%kW) and of B^T (column
  // tid%64, word tid/64 + 4j) per thread and stage: warps read runs of consecutive k of
  // rows of A and 32 consecutive columns of rows of B (coalesced). The raw values wait in
  // registers and are packed (rounded, zeroed out of bounds) only when stored to shared
  // memory: packed right after loading, each load's latency stalled the next one. The
  // addresses are clamped into the matrices, so the loads carry no branch. 32-bit offsets:
  // the launcher keeps m*k and k*n below 2^31.
  In a0[kPer], a1[kPer], b0[kPer], b1[kPer];
  const int col = n0 + tid % 64;
  const In* b_col = b + min(col, n - 1);
  auto a_row = [&](int j) { return m0 + tid / kW + kRowStep * j; };
  auto a_k = [&](int s) { return (s * kW + tid % kW) * kP; };
  auto b_k = [&](int s, int j) { return (s * kW + tid / 64 + 4 * j) * kP; };
  // Tiles wholly inside m and n, at stages wholly inside k (all but the edges): no clamps
  // and no bounds in the loads and packs, whose index arithmetic otherwise outnumbered the
  // mma instructions ten to one.
  const bool inner_tile = m0 + kTile <= m && n0 + kTile <= n;
  auto inner = [&](int s) { return inner_tile && (s + 1) * kW * kP <= k; };
  const In* a_thread = a + (m0 + tid / kW) * k + (tid % kW) * kP;
  const In* b_thread = b + (tid / 64) * kP * n + col;
  auto fetch = [&](int s) {
    if (inner(s)) {
      const In* pa = a_thread + s * kW * kP;
      const In* pb = b_thread + s * kW * kP * n;
#pragma unroll
      for (int j = 0; j < kPer; ++j) {
        a0[j] = pa[j * kRowStep * k];
        if (kP == 2) a1[j] = pa[j * kRowStep * k + 1];
        b0[j] = pb[j * 4 * kP * n];
        if (kP == 2) b1[j] = pb[j * 4 * kP * n + n];
      }
      return;
    }
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      const int ro = min(a_row(j), m - 1) * k, kk = a_k(s), kb = b_k(s, j);
      a0[j] = a[ro + min(kk, k - 1)];
      if (kP == 2) a1[j] = a[ro + min(kk + 1, k - 1)];
      b0[j] = b_col[min(kb, k - 1) * n];
      if (kP == 2) b1[j] = b_col[min(kb + 1, k - 1) * n];
    }
  };
  auto deposit = [&](int buf, int s) {
    std::uint32_t* sa = smem + buf * kStage + (tid / kW) * kPitch + tid % kW;
    std::uint32_t* sb = smem + buf * kStage + kTile * kPitch + (tid % 64) * kPitch + tid / 64;
    const bool all_in = inner(s);
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      const bool row_in = all_in || a_row(j) < m, col_in = all_in || col < n;
      const int kk = a_k(s), kb = b_k(s, j);
      sa[kRowStep * j * kPitch] =
          W::pack(a0[j], a1[j], row_in && (all_in || kk < k), row_in && (all_in || kk + 1 < k));
      sb[4 * j] =
          W::pack(b0[j], b1[j], col_in && (all_in || kb < k), col_in && (all_in || kb + 1 < k));
    }
  };

  float d[2][4][4];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) d[i][j][e] = 0.0f;

  fetch(0);
  deposit(0, 0);
  __syncthreads();
  for (int s = 0; s < stages; ++s) {
    if (s + 1 < stages) fetch(s + 1);  // in flight during this stage's mma
    const std::uint32_t* sa = smem + (s & 1) * kStage;
    const std::uint32_t* sb = sa + kTile * kPitch;
    // Each k group takes half of the stage's words, 8 (one mma k step) at a time.
#pragma unroll
    for (int kw = kgroup * kW / 2; kw < (kgroup + 1) * kW / 2; kw += 8) {
      std::uint32_t af[2][4], bf[4][2];
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const std::uint32_t* r = sa + (wm * 32 + i * 16 + g) * kPitch + kw + t;
        af[i][0] = r[0];
        af[i][1] = r[8 * kPitch];
        af[i][2] = r[4];
        af[i][3] = r[8 * kPitch + 4];
      }
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const std::uint32_t* c = sb + (wn * 32 + j * 8 + g) * kPitch + kw + t;
        bf[j][0] = c[0];
        bf[j][1] = c[4];
      }
#pragma unroll
      for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) Mma::mma(d[i][j], af[i], bf[j][0], bf[j][1]);
    }
    if (s + 1 < stages)
      deposit((s + 1) & 1, s + 1);  // the other buffer: its last readers passed the barrier below
    __syncthreads();
  }

  // k group 1 hands its sums to group 0 through the (now unused) stage buffers; from here
  // on group 0 holds the tile and group 1 only joins the barriers.
  float* red = reinterpret_cast<float*>(smem) + (warp % 4) * 32 * 32 + lane;
  if (kgroup == 1) {
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) red[((i * 4 + j) * 4 + e) * 32] = d[i][j][e];
  }
  __syncthreads();
  const bool holder = kgroup == 0;
  if (holder) {
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) d[i][j][e] += red[((i * 4 + j) * 4 + e) * 32];
  }

  // Element (i, j, e) sits at row m0 + wm*32 + i*16 + g + 8*(e/2), column
  // n0 + wn*32 + j*8 + 2t + e%2.
  auto row_of = [&](int i, int e) { return m0 + wm * 32 + i * 16 + g + 8 * (e >> 1); };
  auto col_of = [&](int j, int e) { return n0 + wn * 32 + j * 8 + 2 * t + (e & 1); };

  // 1. Tile statistics.
  if (holder && rows) {  // rows: per row over the tile's 64 columns
#pragma unroll
    for (int i = 0; i < 2; ++i) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float mx = -INFINITY;
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
          for (int e = 2 * h; e < 2 * h + 2; ++e)
            if (col_of(j, e) < n) mx = fmaxf(mx, d[i][j][e]);
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        float sum = 0.0f;
        if (mx != -INFINITY) {
#pragma unroll
          for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int e = 2 * h; e < 2 * h + 2; ++e)
              if (col_of(j, e) < n) sum += exp2_ftz((d[i][j][e] - mx) * kLog2e);
        }
        sum += __shfl_xor_sync(0xffffffffu, sum, 1);
        sum += __shfl_xor_sync(0xffffffffu, sum, 2);
        if (t == 0) halves[wn][wm * 32 + i * 16 + g + 8 * h] = make_float2(mx, sum);
      }
    }
  } else if (holder) {  // cols: per column over the tile's 64 rows
#pragma unroll
    for (int j = 0; j < 4; ++j) {
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        float mx = -INFINITY;
#pragma unroll
        for (int i = 0; i < 2; ++i)
#pragma unroll
          for (int e = c; e < 4; e += 2)
            if (row_of(i, e) < m) mx = fmaxf(mx, d[i][j][e]);
#pragma unroll
        for (int o = 4; o < 32; o <<= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
        float sum = 0.0f;
        if (mx != -INFINITY) {
#pragma unroll
          for (int i = 0; i < 2; ++i)
#pragma unroll
            for (int e = c; e < 4; e += 2)
              if (row_of(i, e) < m) sum += exp2_ftz((d[i][j][e] - mx) * kLog2e);
        }
#pragma unroll
        for (int o = 4; o < 32; o <<= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
        if (g == 0) halves[wm][wn * 32 + j * 8 + 2 * t + c] = make_float2(mx, sum);
      }
    }
  }
  __syncthreads();
  // partial: rows [m][tiles_n], cols [tiles_m][n].
  if (tid < kTile) {
    const float2 st = merge(halves[0][tid], halves[1][tid]);
    if (rows && m0 + tid < m)
      partial[static_cast<std::int64_t>(m0 + tid) * tiles_n + n0 / kTile] = st;
    if (!rows && n0 + tid < n) partial[static_cast<std::int64_t>(m0 / kTile) * n + n0 + tid] = st;
  }

  // 2. Every tile's statistics are out: combine this tile's rows (columns).
  cg::this_grid().sync();
  if (tid < kTile) {
    float2 st = make_float2(-INFINITY, 0.0f);
    if (rows && m0 + tid < m) {
      const float2* p = partial + static_cast<std::int64_t>(m0 + tid) * tiles_n;
      for (int q = 0; q < tiles_n; ++q) st = merge(st, p[q]);
    }
    if (!rows && n0 + tid < n) {
      for (int q = 0; q < tiles_m; ++q)
        st = merge(st, partial[static_cast<std::int64_t>(q) * n + n0 + tid]);
    }
    final_stats[tid] = make_float2(st.x * kLog2e, 1.0f / st.y);
  }
  // 3. The partials live in the output: nobody writes until everyone has read them.
  if (partial_in_out) {
    cg::this_grid().sync();
  } else {
    __syncthreads();
  }
  if (!holder) return;

    // 4. The softmax, from the registers.
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int row = row_of(i, e), col = col_of(j, e);
        if (row >= m || col >= n) continue;
        const float2 f = final_stats[rows ? row - m0 : col - n0];
        store_out(out + static_cast<std::int64_t>(row) * n + col,
                  exp2_ftz(fmaf(d[i][j][e], kLog2e, -f.x)) * f.y);
      }
}

// Cooperative launches need every CTA resident at once: the most the device takes (the
// row and column kernels use the same resources; the row one is asked).
template <class Mma, class OutT>
long resident_limit() {
  static const long limit = [] {
    int per_sm = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, one_launch_kernel<Mma, OutT, true>,
                                                      kThreads, 0) != cudaSuccess) {
      cudaGetLastError();
      return 0L;
    }
    int device = 0, sms = 0, cooperative = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device);
    return cooperative ? static_cast<long>(per_sm) * sms : 0L;
  }();
  return limit;
}

template <class Mma, class OutT>
void launch(const MatmulProblem& p, bool rows, float2* partial, bool partial_in_out,
            cudaStream_t stream) {
  using In = typename Words<Mma>::In;
  const In* a = static_cast<const In*>(p.a);
  const In* b = static_cast<const In*>(p.b);
  OutT* out = static_cast<OutT*>(p.c);
  int m = static_cast<int>(p.m), n = static_cast<int>(p.n), k = static_cast<int>(p.k);
  void* args[] = {&a, &b, &out, &m, &n, &k, &partial, &partial_in_out};
  const unsigned grid = static_cast<unsigned>(shapes::one_launch_tiles(p.m, p.n));
  const void* kernel = rows ? reinterpret_cast<const void*>(one_launch_kernel<Mma, OutT, true>)
                            : reinterpret_cast<const void*>(one_launch_kernel<Mma, OutT, false>);
  const cudaError_t e =
      cudaLaunchCooperativeKernel(kernel, dim3(grid), dim3(kThreads), args, 0, stream);
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw CudaError(std::string("matmul_softmax (one launch): ") + cudaGetErrorString(e));
  }
}

}  // namespace

long one_launch_capacity(const MatmulProblem& p) {
  if (p.in == DType::tf32) return resident_limit<Tf32Mma, float>();
  if (p.in == DType::bf16) {
    return p.out == DType::bf16 ? resident_limit<Bf16Mma, __nv_bfloat16>()
                                : resident_limit<Bf16Mma, float>();
  }
  return 0;
}

void launch_matmul_softmax_one_launch(const MatmulProblem& p, bool rows, float2* partial,
                                      bool partial_in_out, cudaStream_t stream) {
  if (p.in == DType::tf32) {
    launch<Tf32Mma, float>(p, rows, partial, partial_in_out, stream);
  } else if (p.out == DType::bf16) {
    launch<Bf16Mma, __nv_bfloat16>(p, rows, partial, partial_in_out, stream);
  } else {
    launch<Bf16Mma, float>(p, rows, partial, partial_in_out, stream);
  }
}

}  // namespace flopline::kernels::detail
