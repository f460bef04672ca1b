// The Hopper core that computes C^T = B^T A^T: for tf32 without a transpose of B, and for
// bf16 with column statistics that stay inside a thread.
//
// tf32 wgmma reads its shared-memory operands K-major only, and B (k x n, row-major) is
// N-major; the core of sm90_gemm.cuh therefore needs B^T made beforehand, one more pass
// over B before every matmul. Swapping the operands avoids it: wgmma's A
// operand may come from registers in any layout the threads build, so the consumers load
// B^T's fragments straight from B's N-major tile in shared memory (LDS, then cvt.rna to
// tf32: Tf32Swapped), and A (m x k, row-major) is already the K-major operand wgmma wants
// as B. 16-bit wgmma reads an N-major A operand from shared memory itself (Bf16Swapped).
//
// Tiles: 256 rows x 128 columns of C. wgmma's M (64 per consumer warpgroup) runs along
// n, its N (256) along m: each consumer holds a 64 x 256 block of C^T, that is the
// tile's 256 rows at its 64 columns, and the quad of lanes sharing lane / 4 holds two of
// those columns at all 256 rows (what makes column statistics cheap, softmax_swapped.cuh).
// Per stage: A's 256-row tile (the wgmma B operand, 128-byte swizzle, shared by both
// consumers) and B's tile of 128 columns, 16 KB each way. Four stages; the output is
// staged in shared memory (32 rows per round, eight rounds per tile, two 8 KB buffers
// per consumer: a bigger staging buffer would cost the fourth stage, which the tf32
// matmul needs to keep up with cuBLAS) and stored by TMA while the next
// tile runs, as in the core of sm90_gemm.cuh (producer warpgroup 0, consumers 1-2).
//
// Which columns a thread holds (Ops::column): wgmma gives thread (warp, lane) rows
// r = 16 warp + lane/4 and r + 8 of C^T. bf16: those are columns r and r + 8. tf32: the
// row-to-column map is ours to choose (a permutation of the block's 64 columns): rows r
// and r + 8 hold two adjacent columns, so one 8-byte load per k fills both, and the
// quads of a half-warp read 16-byte chunks c and c ^ 4 of their box, which the 128-byte
// swizzle (chunk ^ k % 8) spreads over all 32 banks for the four k rows it reads at once.
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>

#include <cstdint>
#include <type_traits>
#include <utility>

#include "flopline/kernels/types.h"
#include "sm90_gemm.cuh"
#include "tile_shapes.h"

namespace flopline::kernels::sm90::swapped {

constexpr int kBlockM = shapes::kSwappedBlockM;  // rows of C per tile: wgmma's N
constexpr int kBlockN =
    shapes::kSwappedBlockN;             // columns of C per tile: wgmma's M, 64 per consumer
constexpr int kABytes = kBlockM * 128;  // 256 rows of 128 bytes of k
constexpr int kBBytes = 128 * kBlockN;  // 128 bytes of n (a box) per k row, times k rows
constexpr int kStageBytes = kABytes + kBBytes;
constexpr int kStages = 4;
// The output: per consumer, 32 rows x 64 columns per round (eight rounds per tile), as
// TMA boxes of 32 rows x 128 bytes (two of 32 fp32 columns, or one of 64 bf16 columns).
constexpr int kOutRounds = 8;
constexpr int kOutRows = kBlockM / kOutRounds;
constexpr int kRegsPerRound = kAccum / kOutRounds;
constexpr int kOutBoxBytes = kOutRows * 128;
constexpr int kStagingRoundBytes =
    2 * kOutBoxBytes;  // a consumer's round: 32 rows x 64 columns of fp32
// Rounds alternate between two buffers per consumer, so that a round is written while
// the previous round's TMA stores still read theirs (one buffer made every round wait
// for the last with the tensor cores idle).
constexpr int kStagingBuffers = 2;
static_assert(kOutRounds % kStagingBuffers == 0, "a tile's first round must take buffer 0");
constexpr int kStagingPerConsumer = kStagingBuffers * kStagingRoundBytes;
constexpr int kStagingOffset = kStages * kStageBytes;
constexpr int kBarrierOffset = kStagingOffset + 2 * kStagingPerConsumer;
// 256 words for an epilogue's per-row work across both consumers (softmax_swapped_rows.cuh),
// zero at the start.
constexpr int kRowScratchOffset = kBarrierOffset + 128;
constexpr int kRowScratchWords = kBlockM;
constexpr int kSmemBytes = kRowScratchOffset + 4 * kRowScratchWords + 1024;  // alignment slack
static_assert(kSmemBytes <= kMaxSmemPerCta,
              "the swapped core's shared memory exceeds sm_90's opt-in");

// tf32: the column (within the consumer's 64, even) held by fragment row 16 warp + lane/4;
// row + 8 holds the next one. See the header comment.
__device__ __forceinline__ int fragment_col(int warp, int lane) {
  const int g = lane >> 2, quad_pair = g & 3;
  const int chunk = 2 * (warp & 1) + (g >> 2) + 4 * (quad_pair >> 1);
  return 32 * (warp >> 1) + 4 * chunk + 2 * (quad_pair & 1);  // 32 columns per tf32 box
}
// Accumulator register i of a consumer thread: row (of the tile's 256) and whether it is
// the thread's second column (Ops::column(warp, lane, 1)).
__device__ __forceinline__ int accum_m(int i, int lane) {
  return (i >> 2) * 8 + (lane & 3) * 2 + (i & 1);
}
__device__ __forceinline__ int accum_second_col(int i) {
  return (i >> 1) & 1;
}

// The stage's pipeline state as a consumer sees it: stage `it` (counted since the start)
// is in shared memory once full[it % kStages] completes its phase; the consumers give it
// back on empty[].
struct ConsumerPipe {
  unsigned char* smem;
  std::uint64_t* full;
  std::uint64_t* empty;
  int it;

#ifdef FLOPLINE_SM90A
  __device__ std::uint32_t wait_full() {
    const int s = it % kStages;
    mbar_wait(&full[s], (it / kStages) & 1);
    return smem_addr(smem + s * kStageBytes);
  }
  __device__ void release_previous(int tid) {
    if (tid == 0) mbar_arrive(&empty[(it - 1) % kStages]);
  }
#endif
};

// The wgmma inputs of one tf32 k tile: B^T's fragments (per k step of 8) and A's
// shared-memory descriptors. Two of these alternate, so that one k tile's fragments are
// loaded while the previous k tile's wgmmas still read theirs.
struct KTileInputs {
  std::uint32_t a[4][4];
  std::uint64_t desc[4];
};

#ifdef FLOPLINE_SM90A
// A use of a set's fragment registers, placed after the wgmma.wait_group that retires
// the wgmmas reading them. ptxas's register allocator ends a register at its last use,
// which for a wgmma operand is the wgmma's issue, not its completion: it gave the next
// k tile's fragments the registers still being read, and then serialized every wgmma
// behind the previous one (warning C7513, a WARPGROUP.DEPBAR after each HGMMA). An empty asm
// statement is no use to ptxas (it emits nothing); this is one: the fragments XORed into
// a store under a predicate that is never true (`never`: k < 0), so ptxas keeps them
// until here. Cost: a handful of LOP3s and a skipped store per k tile.
__device__ __forceinline__ void keep_until_here(const KTileInputs& in, int never,
                                                std::uint32_t scratch) {
  std::uint32_t x = 0;
#pragma unroll
  for (int s = 0; s < 4; ++s) {
#pragma unroll
    for (int j = 0; j < 4; ++j) x ^= in.a[s][j];
  }
  asm volatile(
      "{\n"
      ".reg .pred q;\n"
      "setp.ne.b32 q, %1, 0;\n"
      "@q st.shared.u32 [%2], %0;\n"
      "}\n" ::"r"(x),
      "r"(never), "r"(scratch)
      : "memory");
}
__device__ __forceinline__ std::uint32_t round_tf32(float x) {
  std::uint32_t r;
  asm volatile("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return r;
}
#endif

// tf32: B^T's fragments from registers (wgmma's RS form), loaded from B's tile by the
// consumers. B arrives as four boxes of 32 k x 32 n.
struct Tf32Swapped {
  static constexpr DType kType = DType::tf32;
  static constexpr int kElemBytes = 4, kBlockK = 32, kBoxN = 32;
  static constexpr bool kAdjacentCols = true;
  __device__ static int column(int warp, int lane, int second) {
    return fragment_col(warp, lane) + second;
  }

  // The k loop of one tile into d; `never` is false at run time (keep_until_here).
  __device__ static void k_loop(float (&d)[kAccum], ConsumerPipe& pipe, int k_tiles, int consumer,
                                int warp, int lane, int never) {
#ifdef FLOPLINE_SM90A
    const int tid = warp * 32 + lane;
    // Where this thread's fragment pairs sit in a stage's B tile, for k = lane % 4 (and
    // + 8, 16, 24: 1024 bytes on) and for k + 4.
    const int col = fragment_col(warp, lane), q = lane & 3;
    const int box = 2 * consumer + col / kBoxN;
    const int chunk = (col % kBoxN) / 4, pair_byte = (col % 4) * 4;
    constexpr int kBoxBytes = kBlockK * 128;
    const std::uint32_t off_k =
        kABytes + box * kBoxBytes + q * 128 + ((chunk ^ q) << 4) + pair_byte;
    const std::uint32_t off_k4 =
        kABytes + box * kBoxBytes + (q + 4) * 128 + ((chunk ^ (q + 4)) << 4) + pair_byte;
    KTileInputs ia, ib;
    auto k_step = [&](KTileInputs& in, KTileInputs& other, int kt) {
      const std::uint32_t stage = pipe.wait_full();
#pragma unroll
      for (int ks = 0; ks < 4; ++ks) {
        const float2 lo = ld_shared_pair(stage + off_k + ks * 1024);
        const float2 hi = ld_shared_pair(stage + off_k4 + ks * 1024);
        in.a[ks][0] = round_tf32(lo.x);
        in.a[ks][1] = round_tf32(lo.y);
        in.a[ks][2] = round_tf32(hi.x);
        in.a[ks][3] = round_tf32(hi.y);
        in.desc[ks] = desc_k_major_sw128(stage + ks * 32);
      }
      wgmma_fence();
#pragma unroll
      for (int ks = 0; ks < 4; ++ks) wgmma_m64n256k8_tf32_rs(d, in.a[ks], in.desc[ks], 1);
      wgmma_commit();
      // The previous k tile's group is done once at most this one is pending: its
      // stage goes back to the producer and its fragment buffer may be reloaded.
      wgmma_wait<1>();
      fence_registers(d);
      keep_until_here(other, never, stage);
      if (kt > 0) pipe.release_previous(tid);
      ++pipe.it;
    };
    for (int kt = 0; kt < k_tiles; kt += 2) {
      k_step(ia, ib, kt);
      if (kt + 1 < k_tiles) k_step(ib, ia, kt + 1);
    }
#endif
  }
};

// bf16: both operands from shared memory, B^T read N-major by wgmma's transpose of A. B
// arrives as two boxes of 64 k x 64 n, one per consumer.
struct Bf16Swapped {
  static constexpr DType kType = DType::bf16;
  static constexpr int kElemBytes = 2, kBlockK = 64, kBoxN = 64;
  static constexpr bool kAdjacentCols = false;
  __device__ static int column(int warp, int lane, int second) {
    return 16 * warp + (lane >> 2) + 8 * second;
  }

  __device__ static void k_loop(float (&d)[kAccum], ConsumerPipe& pipe, int k_tiles, int consumer,
                                int warp, int lane, int /*never*/) {
#ifdef FLOPLINE_SM90A
    const int tid = warp * 32 + lane;
    constexpr int kBoxBytes = kBlockK * 128;
    for (int kt = 0; kt < k_tiles; ++kt) {
      const std::uint32_t stage = pipe.wait_full();
      const std::uint32_t bt = stage + kABytes + consumer * kBoxBytes;
      wgmma_fence();
#pragma unroll
      for (int ks = 0; ks < kBlockK / 16; ++ks) {
        // B^T: 16 k rows of 128 bytes per step; its 64 n are one 64-element block.
        wgmma_m64n256k16_bf16_at(d, desc_mn_major_sw128(bt + ks * 16 * 128, kBoxBytes),
                                 desc_k_major_sw128(stage + ks * 32), 1);
      }
      wgmma_commit();
      wgmma_wait<1>();
      fence_registers(d);
      if (kt > 0) pipe.release_previous(tid);
      ++pipe.it;
    }
#endif
  }
};
static_assert(Tf32Swapped::kBlockK == shapes::swapped_block_k(DType::tf32) &&
                  Bf16Swapped::kBlockK == shapes::swapped_block_k(DType::bf16),
              "tile_shapes.h: the swapped core's k tiles");

// A consumer's output (OutT: float or __nv_bfloat16) staged for TMA: begin() takes the
// buffer (once the previous round's stores have read it), put() writes values of one
// row, finish() hands the round to TMA. Swizzled like the operands (chunk ^ row % 8).
template <class OutT>
struct SwappedStaging {
  static constexpr int kBoxCols = 128 / static_cast<int>(sizeof(OutT));
  static constexpr int kBoxes = 64 / kBoxCols;  // per round of a consumer's 64 columns
#ifdef FLOPLINE_SM90A
  __device__ static unsigned char* buffer(unsigned char* staging, int consumer, int round) {
    return staging + consumer * kStagingPerConsumer +
           (round % kStagingBuffers) * kStagingRoundBytes;
  }
  __device__ static std::uint32_t begin(unsigned char* staging, int consumer, int tid, int round) {
    if (tid == 0) bulk_wait_read<kStagingBuffers - 1>();
    named_barrier_sync(kBarrierStaging + consumer, 128);
    return smem_addr(buffer(staging, consumer, round));
  }
  // Where column c (of the consumer's 64) of row r (of the round's kOutRows) goes.
  __device__ static std::uint32_t at(std::uint32_t base, int r, int c) {
    const int byte = (c % kBoxCols) * static_cast<int>(sizeof(OutT));
    return base + (c / kBoxCols) * kOutBoxBytes + r * 128 + (((byte >> 4) ^ (r & 7)) << 4) +
           (byte & 15);
  }
  // Row r at columns c0 and c1: adjacent (c1 = c0 + 1, c0 even; fp32 only) or not.
  template <bool kAdjacent>
  __device__ static void put(std::uint32_t base, int r, int c0, int c1, float a, float b) {
    if constexpr (sizeof(OutT) == 2) {
      static_assert(!kAdjacent, "16-bit output takes the bf16 operands' column map");
      // A warp's 8 lanes of one row write 8 consecutive columns: one 16-byte chunk per
      // row, four rows in four bank groups.
      const __nv_bfloat16 x = __float2bfloat16_rn(a), y = __float2bfloat16_rn(b);
      asm volatile("st.shared.b16 [%0], %1;" ::"r"(at(base, r, c0)), "h"(__bfloat16_as_ushort(x))
                   : "memory");
      asm volatile("st.shared.b16 [%0], %1;" ::"r"(at(base, r, c1)), "h"(__bfloat16_as_ushort(y))
                   : "memory");
    } else if constexpr (kAdjacent) {
      asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(at(base, r, c0)), "f"(a), "f"(b)
                   : "memory");
    } else {
      asm volatile("st.shared.f32 [%0], %1;" ::"r"(at(base, r, c0)), "f"(a) : "memory");
      asm volatile("st.shared.f32 [%0], %1;" ::"r"(at(base, r, c1)), "f"(b) : "memory");
    }
  }
  // row0, col0: the round's first row and the consumer's first column in C.
  __device__ static void finish(const CUtensorMap* map_c, unsigned char* staging, int consumer,
                                int tid, int round, int row0, int col0) {
    fence_proxy_async_shared();
    named_barrier_sync(kBarrierStaging + consumer, 128);
    if (tid == 0) {
      unsigned char* buf = buffer(staging, consumer, round);
#pragma unroll
      for (int b = 0; b < kBoxes; ++b)
        tma_store_2d(map_c, buf + b * kOutBoxBytes, col0 + b * kBoxCols, row0);
      bulk_commit();
    }
  }
#endif
};

// What the epilogue gets besides the accumulator.
struct SwappedContext {
  unsigned char* staging;
  const CUtensorMap* map_c;
  int consumer;
  unsigned* row_scratch;  // kRowScratchWords, shared by both consumers
};

// Every round of a consumer's 256 x 64 block of C (OutT), value(i) being what goes out
// for accumulator register i (row accum_m(i), column Ops::column(warp, lane,
// accum_second_col(i))). value() is called once per register, in ascending order.
template <class Ops, class OutT, class Value>
__device__ __forceinline__ void stage_block(const SwappedContext& ctx, int row0, int col0, int warp,
                                            int lane, Value&& value) {
#ifdef FLOPLINE_SM90A
  using Staging = SwappedStaging<OutT>;
  const int tid = warp * 32 + lane;
  const int c0 = Ops::column(warp, lane, 0), c1 = Ops::column(warp, lane, 1);
#pragma unroll
  for (int round = 0; round < kOutRounds; ++round) {
    const std::uint32_t base = Staging::begin(ctx.staging, ctx.consumer, tid, round);
#pragma unroll
    for (int i = round * kRegsPerRound; i < (round + 1) * kRegsPerRound; i += 4) {
      const int r = accum_m(i, lane) - round * kOutRows;
      const float v0 = value(i), v1 = value(i + 1), v2 = value(i + 2), v3 = value(i + 3);
      // Registers i, i+2: row r at columns c0, c1; i+1, i+3: row r+1.
      Staging::template put<Ops::kAdjacentCols>(base, r, c0, c1, v0, v2);
      Staging::template put<Ops::kAdjacentCols>(base, r + 1, c0, c1, v1, v3);
    }
    Staging::finish(ctx.map_c, ctx.staging, ctx.consumer, tid, round, row0 + round * kOutRows,
                    col0);
  }
#endif
}

// Plain fp32 store of the accumulator.
template <class Ops>
struct SwappedStoreEpilogue {
  __device__ void operator()(const float (&d)[kAccum], int row0, int col0, int warp, int lane,
                             const SwappedContext& ctx) const {
    stage_block<Ops, float>(ctx, row0, col0, warp, lane, [&](int i) { return d[i]; });
  }
};

// Split k: the k tiles are cut into k_splits consecutive ranges and each (tile, range)
// is a work item of its own, so a problem of few tiles still fills the SMs. An epilogue
// with `int k_splits` gets split s's partial sums of a tile at rows offset by s x the
// padded height (tiles_m x kBlockM): its map_c covers k_splits such slabs.
template <class E, class = void>
struct SplitsK : std::false_type {};
template <class E>
struct SplitsK<E, std::void_t<decltype(std::declval<E>().k_splits)>> : std::true_type {};

// The plain fp32 store of one split's partial sums (SplitsK).
template <class Ops>
struct SwappedSplitStoreEpilogue : SwappedStoreEpilogue<Ops> {
  int k_splits;
};

// The k tiles of split `split` of k_splits: every split but the last has
// shapes::split_k_tiles; the host picks k_splits so none is empty.
using shapes::split_k_tiles;

// An epilogue with `unsigned* written` ([tiles_m], zero at the launch; or null) has each
// consumer's thread 0 count its half of every tile there (release, GPU scope) once the
// tile's TMA stores are complete: checked before the epilogue of its next tile (a k
// loop later, when they have long drained) and at the end. The CTAs also let a
// dependent launch start early (griddepcontrol.launch_dependents): a pass launched
// with programmatic stream serialization then runs on the SMs that the last wave of
// tiles leaves idle, on the row blocks already counted whole (combine_rescale_rows).
template <class E, class = void>
struct CountsWritten : std::false_type {};
template <class E>
struct CountsWritten<E, std::void_t<decltype(std::declval<E>().written)>> : std::true_type {};

// map_a: A (m x k) in boxes of 256 x Ops::kBlockK; map_b: B (k x n) in boxes of
// Ops::kBlockK x Ops::kBoxN; map_c: C (m x n) in boxes of kOutRows x 128 bytes. Persistent
// CTAs walk the 256 x 128 tiles in groups of kGroupM rows of tiles (tile_coords).
// Epilogue: `void operator()(const float (&d)[128], int row0, int col0, int warp, int
// lane, const SwappedContext&)`, row0: the tile's first row (with split k, plus the
// split's slab: SplitsK), col0: the consumer's first column. map_c's element type and
// box are the epilogue's (SwappedStaging<OutT>).
template <class Ops, class Epilogue>
__global__ void __launch_bounds__(kThreads, 1)
    gemm_swapped_kernel(const __grid_constant__ CUtensorMap map_a,
                        const __grid_constant__ CUtensorMap map_b,
                        const __grid_constant__ CUtensorMap map_c, int m, int n, int k,
                        Epilogue epilogue) {
#ifdef FLOPLINE_SM90A
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem = reinterpret_cast<unsigned char*>(
      (reinterpret_cast<std::uintptr_t>(smem_raw) + 1023) & ~static_cast<std::uintptr_t>(1023));
  unsigned char* staging = smem + kStagingOffset;
  std::uint64_t* full = reinterpret_cast<std::uint64_t*>(smem + kBarrierOffset);
  std::uint64_t* empty = full + kStages;
  unsigned* row_scratch = reinterpret_cast<unsigned*>(smem + kRowScratchOffset);

  const int warpgroup = static_cast<int>(threadIdx.x) / 128;
  const int tid = static_cast<int>(threadIdx.x) % 128;
  const int tiles_m = (m + kBlockM - 1) / kBlockM, tiles_n = (n + kBlockN - 1) / kBlockN;
  const int tiles = tiles_m * tiles_n;
  const int k_tiles = (k + Ops::kBlockK - 1) / Ops::kBlockK;
  // Work items: every tile once, or with split k every (split, tile), split-major.
  int k_splits = 1;
  if constexpr (SplitsK<Epilogue>::value) k_splits = epilogue.k_splits;
  const int items = tiles * k_splits, per_split = split_k_tiles(k_tiles, k_splits);

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], 2);  // one arrival per consumer
    }
    fence_barrier_init();
  }
  for (int i = static_cast<int>(threadIdx.x); i < kRowScratchWords; i += kThreads)
    row_scratch[i] = 0u;
  __syncthreads();
  constexpr bool kCounts = CountsWritten<Epilogue>::value;
  if constexpr (kCounts) {
    if (threadIdx.x == 0) griddep_launch_dependents();
  }

  if (warpgroup == 0) {
    // 24 + 2 x 240 registers per thread of each warpgroup: the launch's 168 x 3. The
    // consumers take 8 more than in sm90_gemm.cuh's core (the column statistics pass
    // spilled 4-24 bytes within 232); one producer thread's loop fits in 24.
    regs_release<24>();
    if (tid == 0) {
      prefetch_tensor_map(&map_a);
      prefetch_tensor_map(&map_b);
      constexpr int kBoxBytes = Ops::kBlockK * 128;
      int it = 0;
      for (int t = static_cast<int>(blockIdx.x); t < items; t += static_cast<int>(gridDim.x)) {
        int tm = 0, tn = 0;
        tile_coords(t % tiles, tiles_m, tiles_n, &tm, &tn);
        const int kt0 = (t / tiles) * per_split, kt_end = min(k_tiles, kt0 + per_split);
        for (int kt = kt0; kt < kt_end; ++kt, ++it) {
          const int s = it % kStages;
          if (it >= kStages) mbar_wait(&empty[s], ((it / kStages) + 1) & 1);
          unsigned char* stage = smem + s * kStageBytes;
          mbar_expect_tx(&full[s], kStageBytes);
          tma_load_2d(stage, &map_a, &full[s], kt * Ops::kBlockK, tm * kBlockM);
#pragma unroll
          for (int j = 0; j < kBlockN / Ops::kBoxN; ++j) {
            tma_load_2d(stage + kABytes + j * kBoxBytes, &map_b, &full[s],
                        tn * kBlockN + j * Ops::kBoxN, kt * Ops::kBlockK);
          }
        }
      }
    }
  } else {
    regs_claim<240>();
    const int consumer = warpgroup - 1;
    const int warp = tid / 32, lane = tid % 32;
    const SwappedContext ctx{staging, &map_c, consumer, row_scratch};
    ConsumerPipe pipe{smem, full, empty, 0};
    int uncounted_tm = -1;  // kCounts: the row block of the tile stored last, not yet counted
    auto count_written = [&] {
      if constexpr (kCounts) {
        if (tid == 0 && uncounted_tm >= 0 && epilogue.written != nullptr) {
          bulk_wait<0>();
          fence_proxy_async_global();
          red_add_release_gpu(epilogue.written + uncounted_tm, 1u);
        }
      }
    };
    for (int t = static_cast<int>(blockIdx.x); t < items; t += static_cast<int>(gridDim.x)) {
      int tm = 0, tn = 0;
      tile_coords(t % tiles, tiles_m, tiles_n, &tm, &tn);
      const int split = t / tiles;
      float d[kAccum];
#pragma unroll
      for (int i = 0; i < kAccum; ++i) d[i] = 0.0f;
      Ops::k_loop(d, pipe, min(per_split, k_tiles - split * per_split), consumer, warp, lane,
                  k < 0);
      wgmma_wait<0>();
      fence_registers(d);
      pipe.release_previous(tid);  // this tile's last stage
      count_written();
      epilogue(d, (split * tiles_m + tm) * kBlockM, tn * kBlockN + consumer * 64, warp, lane, ctx);
      uncounted_tm = tm;
    }
    // The last stores must have read the staging memory before the CTA goes.
    if (tid == 0) bulk_wait<0>();
    count_written();
  }
#endif
}

}  // namespace flopline::kernels::sm90::swapped
