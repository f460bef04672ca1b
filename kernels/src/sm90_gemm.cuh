// The Hopper matmul core: persistent CTAs compute tiles of C = A x B with wgmma on
// operands that TMA brings into 128-byte-swizzled shared memory, through a 4-stage
// mbarrier pipeline (3 where a staged epilogue needs more than 32 KB). Warpgroup 0 is the
// producer (one thread issues the TMA loads, the others give their registers away);
// warpgroups 1 and 2 are consumers, each keeping a 64x256 fp32 accumulator in registers
// (128 per thread). What happens to the accumulator is the Epilogue's job: a plain store
// (sm90_epilogue_store.cuh) or the softmax statistics of the fused matmul+softmax
// (softmax_epilogue.cuh, softmax_cluster_rows.cuh).
//
// Two schedules (TileWalk):
//  - streaming (cooperative): both consumers work on one 128x256 tile, 64 rows each,
//    and A and B stream through the stages. Their epilogues run at the same time, with
//    the tensor cores idle; 16-bit outputs are therefore staged in shared memory and
//    stored by TMA while the next tile runs (StagingBytes below).
//  - B-resident (ping-pong, small k): B's column tile stays in shared memory and the
//    consumers take alternate 64x256 tiles, their k loops in turn (named barriers): one
//    runs its epilogue (exp, statistics, stores) while the other's wgmma runs. With k of
//    a few hundred the epilogue costs as much as the k loop, so it must overlap.
//
// A is m x k row-major (K-major). B is k x n row-major (N-major) for 16-bit types, read
// with wgmma's transpose; tf32 has no transpose, so B arrives pre-transposed (n x k).
// (The tf32 matmul and the column softmax take the swapped core instead,
// sm90_gemm_swapped.cuh, which reads B as it is.)
// TMA zero-fills outside the matrices, so partial tiles in m, n and k need no special
// path; the epilogue masks rows >= m and columns >= n.
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "sm90_primitives.cuh"
#include "sm90_wgmma_ops.cuh"
#include "tile_shapes.h"

namespace flopline::kernels::sm90 {

constexpr int kBlockM = shapes::kCoreBlockM;
constexpr int kBlockN = shapes::kCoreBlockN;
constexpr int kStages = 4;
constexpr int kThreads = 384;               // producer warpgroup + 2 consumer warpgroups
constexpr int kMaxSmemPerCta = 227 * 1024;  // sm_90's dynamic shared memory opt-in
constexpr int kGroupM = 8;   // tiles walked in groups of 8 rows of tiles for L2 reuse
constexpr int kAccum = 128;  // fp32 accumulators per consumer thread

// Element type of A and B: the wgmma used, the K of one instruction, and whether B is
// N-major (transposed) in shared memory.
template <bool kBf16>
struct HalfOperands {  // bf16 or fp16
  static constexpr int kElemBytes = 2, kInstrK = 16;
  static constexpr bool kBNMajor = true;
  __device__ static void mma(float (&d)[kAccum], std::uint64_t a, std::uint64_t b) {
#ifdef FLOPLINE_SM90A
    if constexpr (kBf16) {
      wgmma_m64n256k16_bf16_bt(d, a, b, 1);
    } else {
      wgmma_m64n256k16_f16_bt(d, a, b, 1);
    }
#endif
  }
};
using Bf16Operands = HalfOperands<true>;
using F16Operands = HalfOperands<false>;
struct Tf32Operands {
  static constexpr int kElemBytes = 4, kInstrK = 8;
  static constexpr bool kBNMajor = false;
  __device__ static void mma(float (&d)[kAccum], std::uint64_t a, std::uint64_t b) {
#ifdef FLOPLINE_SM90A
    wgmma_m64n256k8_tf32(d, a, b, 1);
#endif
  }
};

template <class Ops>
struct Tile {
  static constexpr int kBlockK = 128 / Ops::kElemBytes;  // one 128-byte swizzle row of K
  static constexpr int kABytes = kBlockM * 128;
  static constexpr int kBBytes = kBlockN * 128;
  static constexpr int kStageBytes = kABytes + kBBytes;
  static constexpr int kBarrierBytes = 128;  // full[], empty[], b_full, rounded up
  static constexpr int kSmemBytes =
      kStages * kStageBytes + kBarrierBytes + 1024;  // + alignment slack
  // B-resident runs stage only 64-row A tiles and keep all of B's k tiles for one
  // column tile in the rest of the same shared memory: 5 k tiles (k <= 160 in tf32,
  // 320 in bf16).
  static constexpr int kResidentRows = 64;
  static constexpr int kResidentABytes = kResidentRows * 128;
  static constexpr int kMaxResidentKTiles =
      (kStages * kStageBytes - kStages * kResidentABytes) / kBBytes;
  static_assert(kMaxResidentKTiles == shapes::kCoreMaxResidentKTiles,
                "tile_shapes.h: B-resident k tiles");
};
static_assert(Tile<Tf32Operands>::kBlockK == shapes::core_block_k(DType::tf32) &&
                  Tile<Bf16Operands>::kBlockK == shapes::core_block_k(DType::bf16),
              "tile_shapes.h: the core's k tiles");

// Where accumulator register i of a consumer thread sits in its warpgroup's 64x256 block
// (wgmma's fragment layout): pairs of columns, rows r and r+8 per 8-column block.
__device__ __forceinline__ int accum_row(int i, int warp, int lane) {
  return warp * 16 + (lane >> 2) + 8 * ((i >> 1) & 1);
}
__device__ __forceinline__ int accum_col(int i, int lane) {
  return (i >> 2) * 8 + (lane & 3) * 2 + (i & 1);
}

__device__ __forceinline__ void tile_coords(int pid, int tiles_m, int tiles_n, int* tm, int* tn) {
  const int per_group = kGroupM * tiles_n;
  const int first_m = (pid / per_group) * kGroupM;
  const int group_rows = min(tiles_m - first_m, kGroupM);
  *tm = first_m + (pid % per_group) % group_rows;
  *tn = (pid % per_group) / group_rows;
}

// Which tiles a CTA computes. Streaming: 128x256 tiles blockIdx.x, +gridDim.x, ... in
// grouped order. Column-stationary (B-resident runs, and clustered epilogues): the grid
// is a multiple of tiles_n; CTA c stays on column tile c % tiles_n and walks the row tiles
// c / tiles_n, + gridDim.x / tiles_n, ... B-resident (small k, 64x256 tiles) keeps that
// column tile of B in shared memory for the whole run: only A streams through the
// pipeline, which cuts the shared-memory fill per tile to a fifth when k is too small to
// amortize B. A cluster of tiles_n consecutive CTAs then holds one whole row of tiles.
struct TileWalk {
  int tiles_m, tiles_n;
  bool column_stationary;
  __device__ int first() const {
    return column_stationary ? static_cast<int>(blockIdx.x) / tiles_n
                             : static_cast<int>(blockIdx.x);
  }
  __device__ int step() const {
    return column_stationary ? static_cast<int>(gridDim.x) / tiles_n : static_cast<int>(gridDim.x);
  }
  __device__ int count() const { return column_stationary ? tiles_m : tiles_m * tiles_n; }
  __device__ void coords(int t, int* tm, int* tn) const {
    if (column_stationary) {
      *tm = t;
      *tn = static_cast<int>(blockIdx.x) % tiles_n;
    } else {
      tile_coords(t, tiles_m, tiles_n, tm, tn);
    }
  }
};

// What a clustered epilogue gets besides the accumulator: its own shared memory (after
// the pipeline's), which consumer warpgroup calls, and the ordinal of the tile among
// that consumer's tiles (the same in every CTA of a cluster, which walk in step).
struct EpilogueContext {
  unsigned char* smem;
  int consumer;
  int ordinal;
  const CUtensorMap* map_c;  // a staged epilogue's output (TMA stores)
};

// An epilogue with `static constexpr bool kClustered = true` runs with the CTAs launched
// in clusters of tiles_n along n (one row of tiles per cluster, column-stationary walk);
// it provides `static void init(unsigned char* smem)` (thread 0, before the start) and
// `static std::size_t smem_bytes(int cluster_size)` (host).
template <class E, class = void>
struct IsClustered : std::false_type {};
template <class E>
struct IsClustered<E, std::void_t<decltype(E::kClustered)>> : std::bool_constant<E::kClustered> {};
// An epilogue with `static constexpr bool kGrouped = true` runs column-stationary on a
// cooperative launch (all CTAs resident): groups of tiles_n CTAs that share a row of
// tiles through global memory (softmax_group_rows.cuh); it gets the EpilogueContext.
template <class E, class = void>
struct IsGrouped : std::false_type {};
template <class E>
struct IsGrouped<E, std::void_t<decltype(E::kGrouped)>> : std::bool_constant<E::kGrouped> {};

// An epilogue with `static constexpr int kStagingBytes` > 0 stages its output in shared
// memory for TMA stores on streaming runs: the pipeline gives up one stage for it (three
// instead of four) where it takes more than 32 KB with any in-launch rescaling memory
// (16-bit output: 64 KB; fp32: 32 KB, four stages), and the epilogue gets the staging memory in its
// EpilogueContext (null on B-resident runs, which store directly) with map_c, the output's TMA map
// in boxes of 64 rows x kBoxCols columns, 128-byte swizzle. The consumers then go on to the next
// tile while the stores drain, instead of issuing them with the tensor cores idle.
template <class E, class = void>
struct StagingBytes : std::integral_constant<int, 0> {};
template <class E>
struct StagingBytes<E, std::void_t<decltype(E::kStagingBytes)>>
    : std::integral_constant<int, E::kStagingBytes> {};
template <class E>
constexpr bool kStagesOutput = StagingBytes<E>::value > 0 && !IsClustered<E>::value;
// Shared memory an in-launch rescaling epilogue takes after the staging (below).
template <class E, class = void>
struct RescaleSmemBytes : std::integral_constant<int, 0> {};
template <class E>
struct RescaleSmemBytes<E, std::void_t<decltype(E::kRescaleSmemBytes)>>
    : std::integral_constant<int, E::kRescaleSmemBytes> {};
// Pipeline stages and where a staged epilogue's memory starts (1024-aligned for the
// 128-byte swizzle), for streaming runs. Four stages, 1 KB of barriers, 32 KB of staging
// and 1 KB of alignment slack are 226 KB, within the 227 KB a CTA may have.
template <class E>
constexpr int kPipelineStages =
    !kStagesOutput<E> || StagingBytes<E>::value + RescaleSmemBytes<E>::value <= 32 * 1024
        ? kStages
        : kStages - 1;
template <class Ops, class E>
constexpr int kStagingOffset = kPipelineStages<E>* Tile<Ops>::kStageBytes + 1024;

// An epilogue with `static constexpr bool kRescalesInLaunch = true`
// (softmax_rescale_in_launch.cuh) scales its own output in place during the launch, on
// streaming staged runs of a cooperative launch: the producer warpgroup's warps 1-3 call
// `rescale_tile(tm, tn, smem, tid)` for each of the CTA's tiles in the consumers'
// order, with kRescaleSmemBytes of shared memory after the staging; each consumer's
// thread 0 calls `tile_written(tm)` once the stores of its half of a tile are complete.
// That wait is placed at k tile kCountAtKTile of the consumer's next tile (or its last k
// tile, or after the last tile): several k tiles after the stores were issued, when they
// have drained, where a wait at the end of the epilogue would idle the tensor cores.
template <class E, class = void>
struct RescalesInLaunch : std::false_type {};
template <class E>
struct RescalesInLaunch<E, std::void_t<decltype(E::kRescalesInLaunch)>>
    : std::bool_constant<E::kRescalesInLaunch> {};
constexpr int kCountAtKTile = 8;

// Epilogue: `void operator()(float (&d)[128], int row0, int col0, int warp, int lane)`
// (clustered or staged: one more argument, the EpilogueContext) called by every consumer thread
// after its accumulator is final; row0/col0 are the global coordinates of the
// warpgroup's 64x256 block. It may overwrite d.
template <class Ops, class Epilogue, bool kBResident>
__global__ void __launch_bounds__(kThreads, 1)
    gemm_kernel(const __grid_constant__ CUtensorMap map_a,
                const __grid_constant__ CUtensorMap map_b,
                const __grid_constant__ CUtensorMap map_c, int m, int n, int k, Epilogue epilogue) {
#ifdef FLOPLINE_SM90A
  using T = Tile<Ops>;
  extern __shared__ unsigned char smem_raw[];
  // 128-byte swizzle atoms repeat every 1024 bytes: the tiles start 1024-aligned.
  unsigned char* smem = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) & ~static_cast<std::uintptr_t>(1023));
  // Rows of A per stage (and of the tile one consumer, or both, compute).
  constexpr int kRows = kBResident ? T::kResidentRows : kBlockM;
  // A staged epilogue (streaming runs only) takes the last stage's place.
  constexpr bool kStaged = kStagesOutput<Epilogue> && !kBResident;
  constexpr int kPipe = kStaged ? kPipelineStages<Epilogue> : kStages;  // pipeline stages
  static_assert(!kStaged || kStagingOffset<Ops, Epilogue> + StagingBytes<Epilogue>::value +
                                    RescaleSmemBytes<Epilogue>::value + 1024 <=
                                kMaxSmemPerCta,
                "the staged epilogue's shared memory exceeds sm_90's opt-in");
  // Streaming: kPipe x (A, B). B-resident: kPipe x A, then all of B's k tiles.
  constexpr int kStageStride = kBResident ? T::kResidentABytes : T::kStageBytes;
  unsigned char* b_resident = smem + kPipe * kStageStride;
  std::uint64_t* full = reinterpret_cast<std::uint64_t*>(smem + kPipe * T::kStageBytes);
  std::uint64_t* empty = full + kPipe;
  std::uint64_t* b_full = empty + kPipe;
  constexpr bool kClustered = IsClustered<Epilogue>::value;
  constexpr bool kRescales = RescalesInLaunch<Epilogue>::value && kStaged;
  // Registers per thread after the split (12 warps x 168 at entry): the producer
  // warpgroup's TMA loop needs few; rescaling warps need 80 to keep 8 loads per thread
  // in flight without spilling, and the consumers' epilogue still fits in 208 (ptxas -v).
  constexpr int kProducerRegs = kRescales ? 80 : 40, kConsumerRegs = kRescales ? 208 : 232;
  static_assert(128 * kProducerRegs + 256 * kConsumerRegs <= kThreads * 168,
                "more registers than the CTA has");
  unsigned char* epilogue_smem = kStaged ? smem + kStagingOffset<Ops, Epilogue>
                                         : smem + kPipe * T::kStageBytes + T::kBarrierBytes;

  const int warpgroup = static_cast<int>(threadIdx.x) / 128;
  const int tid_in_group = static_cast<int>(threadIdx.x) % 128;
  constexpr bool kGrouped = IsGrouped<Epilogue>::value;
  const TileWalk walk{(m + kRows - 1) / kRows, (n + kBlockN - 1) / kBlockN,
                      kBResident || kClustered || kGrouped};
  const int k_tiles = (k + T::kBlockK - 1) / T::kBlockK;

  if (threadIdx.x == 0) {
    for (int s = 0; s < kPipe; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s],
                kBResident ? 1 : 2);  // one arrival per consumer warpgroup using the stage
    }
    mbar_init(b_full, 1);
    if constexpr (kClustered) Epilogue::init(epilogue_smem);
    fence_barrier_init();
  }
  __syncthreads();
  if constexpr (kClustered) cluster_sync();  // every CTA's barriers exist before any remote access

  // B's k tile kt of column tile tn into dst (N-major: four 64-column boxes).
  auto load_b = [&](unsigned char* dst, std::uint64_t* bar, int kt, int tn) {
    if constexpr (Ops::kBNMajor) {
      constexpr int kBoxCols = 128 / Ops::kElemBytes;
#pragma unroll
      for (int j = 0; j < kBlockN / kBoxCols; ++j) {
        tma_load_2d(dst + j * T::kBlockK * 128, &map_b, bar, tn * kBlockN + j * kBoxCols,
                    kt * T::kBlockK);
      }
    } else {
      tma_load_2d(dst, &map_b, bar, kt * T::kBlockK, tn * kBlockN);  // B^T is n x k
    }
  };

  // The pipeline runs on across tiles (`it` counts stages used since the start), so the
  // producer loads the next tile while the consumers run the epilogue of this one.
  if (warpgroup == 0) {
    regs_release<kProducerRegs>();
    if (tid_in_group == 0) {
      prefetch_tensor_map(&map_a);
      prefetch_tensor_map(&map_b);
      if constexpr (kBResident) {
        mbar_expect_tx(b_full, static_cast<unsigned>(k_tiles * T::kBBytes));
        for (int kt = 0; kt < k_tiles; ++kt)
          load_b(b_resident + kt * T::kBBytes, b_full, kt,
                 static_cast<int>(blockIdx.x) % walk.tiles_n);
      }
      int it = 0;
      for (int t = walk.first(); t < walk.count(); t += walk.step()) {
        int tm = 0, tn = 0;
        walk.coords(t, &tm, &tn);
        for (int kt = 0; kt < k_tiles; ++kt, ++it) {
          const int s = it % kPipe;
          if (it >= kPipe) mbar_wait(&empty[s], ((it / kPipe) + 1) & 1);
          unsigned char* sa = smem + s * kStageStride;
          mbar_expect_tx(&full[s], kStageStride);
          tma_load_2d(sa, &map_a, &full[s], kt * T::kBlockK, tm * kRows);
          if constexpr (!kBResident) load_b(sa + T::kABytes, &full[s], kt, tn);
        }
      }
    } else if (tid_in_group >= 32) {
      if constexpr (kRescales) {
        unsigned char* rescale_smem = epilogue_smem + StagingBytes<Epilogue>::value;
        for (int t = walk.first(); t < walk.count(); t += walk.step()) {
          int tm = 0, tn = 0;
          walk.coords(t, &tm, &tn);
          epilogue.rescale_tile(tm, tn, rescale_smem, tid_in_group - 32);
        }
      }
    }
  } else {
    regs_claim<kConsumerRegs>();
    const int consumer = warpgroup - 1;
    const int warp = tid_in_group / 32, lane = tid_in_group % 32;
    if constexpr (kBResident) mbar_wait(b_full, 0);
    // kRescales: the row block of this consumer's last tile, until it is counted
    // written (-1: none).
    int uncounted_tm = -1;
    const int count_at = min(k_tiles - 1, kCountAtKTile);
    // The k loop of one tile: stages it, it+1, ... of the pipeline into d.
    auto k_loop = [&](float(&d)[kAccum], int& it) {
      for (int kt = 0; kt < k_tiles; ++kt, ++it) {
        if constexpr (kRescales) {
          if (kt == count_at && uncounted_tm >= 0) {
            if (tid_in_group == 0) {
              bulk_wait<0>();
              epilogue.tile_written(uncounted_tm);
            }
            uncounted_tm = -1;
          }
        }
        const int s = it % kPipe;
        mbar_wait(&full[s], (it / kPipe) & 1);
        const std::uint32_t sa =
            smem_addr(smem + s * kStageStride) + (kBResident ? 0 : consumer * 64 * 128);
        const std::uint32_t sb = kBResident ? smem_addr(b_resident + kt * T::kBBytes)
                                            : smem_addr(smem + s * kStageStride + T::kABytes);
        wgmma_fence();
#pragma unroll
        for (int ks = 0; ks < T::kBlockK / Ops::kInstrK; ++ks) {
          const std::uint64_t da = desc_k_major_sw128(sa + ks * Ops::kInstrK * Ops::kElemBytes);
          std::uint64_t db;
          if constexpr (Ops::kBNMajor) {
            db = desc_mn_major_sw128(sb + ks * Ops::kInstrK * 128, T::kBlockK * 128);
          } else {
            db = desc_k_major_sw128(sb + ks * Ops::kInstrK * Ops::kElemBytes);
          }
          Ops::mma(d, da, db);
        }
        wgmma_commit();
        // Keep one group in flight: the previous stage's group is complete once at most
        // one (this one) is pending, and its buffers go back to the producer.
        wgmma_wait<1>();
        fence_registers(d);
        if (kt > 0 && tid_in_group == 0) mbar_arrive(&empty[(it - 1) % kPipe]);
      }
    };
    // Ping-pong: consumer c takes the CTA's tiles c, c+2, ... and the k loops alternate.
    // Named barrier kBarrierConsumerTurn + c is consumer c's turn: the other consumer
    // arrives there when its k loop is issued, if c has a tile after it (so every arrival
    // has its wait).
    const int first = walk.first() + (kBResident ? consumer * walk.step() : 0);
    const int step = kBResident ? 2 * walk.step() : walk.step();
    int it = kBResident ? consumer * k_tiles : 0;
    int ordinal = 0;
    for (int t = first; t < walk.count(); t += step, ++ordinal) {
      int tm = 0, tn = 0;
      walk.coords(t, &tm, &tn);
      if (kBResident && (consumer == 1 || t != first))
        named_barrier_sync(kBarrierConsumerTurn + consumer, 256);
      float d[kAccum];
#pragma unroll
      for (int i = 0; i < kAccum; ++i) d[i] = 0.0f;
      k_loop(d, it);
      if (kBResident && t + walk.step() < walk.count())
        named_barrier_arrive(kBarrierConsumerTurn + 1 - consumer, 256);
      wgmma_wait<0>();
      fence_registers(d);
      if (tid_in_group == 0) mbar_arrive(&empty[(it - 1) % kPipe]);  // this tile's last stage
      const int row0 = tm * kRows + (kBResident ? 0 : consumer * 64);
      if constexpr (kClustered) {
        epilogue(d, row0, tn * kBlockN, warp, lane,
                 EpilogueContext{epilogue_smem, consumer, ordinal, nullptr});
      } else if constexpr (StagingBytes<Epilogue>::value > 0 || kGrouped) {
        epilogue(d, row0, tn * kBlockN, warp, lane,
                 EpilogueContext{kStaged ? epilogue_smem : nullptr, consumer, ordinal, &map_c});
      } else {
        epilogue(d, row0, tn * kBlockN, warp, lane);
      }
      if constexpr (kRescales) uncounted_tm = tm;
      if (kBResident) it += k_tiles;  // the other consumer's tile
    }
    // The staged output's last stores must be done before the CTA (and its shared
    // memory) goes.
    if (kStaged && tid_in_group == 0) bulk_wait<0>();
    if constexpr (kRescales) {
      if (tid_in_group == 0 && uncounted_tm >= 0) epilogue.tile_written(uncounted_tm);
    }
  }
  if constexpr (kClustered) {
    // No CTA leaves while a peer may still address its shared memory.
    __syncwarp();
    cluster_sync();
  }
#endif
}

}  // namespace flopline::kernels::sm90
