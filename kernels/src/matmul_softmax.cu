// matmul_softmax(): softmax(A x B) over rows or columns. Small problems (m*n*k at most
// kOneLaunchMaxWork, every 64x64 tile with a resident CTA) take one cooperative
// launch on any sm_80+ device (softmax_one_launch.cu), except bf16 rows from 256^3 on
// Hopper. On Hopper (sm90 path), problems of few tiles with a long enough k
// split k into ranges on CTAs of their own, then one pass adds the partial scores and
// makes the softmax (split_k, see split_k_pays; this goes before the one launch for
// tf32 from 512^3). Row softmax over at most 16 column tiles runs in one
// sweep where that pays: a thread-block cluster holds a whole row of tiles and shares
// each row's statistics in distributed shared memory (softmax_cluster_rows.cuh, see
// cluster_rows_pays), or a group of any tiles_n CTAs of a cooperative launch shares them
// through L2 (softmax_group_rows.cuh, see group_rows_pays). Otherwise the softmax goes
// into the matmul's epilogue (rows: softmax_epilogue.cuh; columns: on the swapped core,
// C^T = B^T A^T, softmax_swapped.cuh, where a column's statistics over a 256-row tile
// stay in a quad of lanes and tf32 needs no transpose of B) with one of two schemes,
// chosen by k:
//  - recompute (k <= kRecomputeMaxK, bf16 -> fp32 rows k <= 768): sweep 1 keeps only
//    block statistics, sweep 2 recomputes the scores and writes the normalized output.
//    The matmul runs twice but the scores never touch memory: for small k the matmul is
//    cheap next to a pass over the m x n output.
//  - rescale: one sweep, one extra read+write of the output. With fp32 output and
//    n <= 16384 the sweep writes the raw scores and block maxima, and one pass per row
//    does the exps, the sum and the division (softmax_rows_after_max); otherwise the
//    sweep writes exp(s - block max) and block statistics and a pass per row combines
//    them and rescales in place (combine_rescale_rows).
//    bf16 -> fp32 rows at k >= kRescaleInLaunchMinK rescale inside the sweep's launch
//    instead (softmax_rescale_in_launch.cuh).
// Elsewhere (other devices, shapes TMA cannot take, fp32 inputs) it runs the matmul into
// scratch memory and the standalone softmax: correct, not fused.
#include <cuda_bf16.h>

#include <algorithm>
#include <optional>
#include <string>
#include <type_traits>

#include "flopline/kernels/matmul.h"
#include "flopline/kernels/softmax.h"
#include "matmul_launch.h"
#include "op_range.h"
#include "scratch.h"
#include "sm90_launch.cuh"
#include "softmax_cluster_rows.cuh"
#include "softmax_epilogue.cuh"
#include "softmax_finish.cuh"
#include "softmax_group_rows.cuh"
#include "softmax_launch.h"
#include "softmax_one_launch.h"
#include "softmax_rescale_in_launch.cuh"
#include "softmax_swapped.cuh"
#include "softmax_swapped_rows.cuh"

namespace flopline::kernels {
namespace {

// Recomputing costs 2mnk FLOPs; rescaling costs 2mn output elements of traffic. At about
// 300-600 TFLOP/s against 3.5-4 TB/s the two meet near k = 340 (docs/KERNELS.md).
constexpr std::int64_t kRecomputeMaxK = 320;
// bf16 -> fp32 rows (transposing core) recompute further. The two sweeps against the
// rescale (score sweep + one pass per row), 8192x8192 (H100, docs/KERNELS.md): k = 512
// 0.290-0.298 ms against 0.347-0.349, 640 0.333-0.345 against 0.371-0.389, 768
// 0.381-0.438 against 0.395-0.401 (even), 896 0.427-0.437 against 0.416-0.417. With bf16
// output the rescale's traffic is half and it stays ahead (k = 512: 0.244 against 0.269).
constexpr std::int64_t kRecomputeMaxKBf16ToFp32Rows = 768;
// Rows over at most this many 256-column tiles (n <= 4096) are combined in the second
// sweep's epilogue (each thread reads its row's partials) instead of by a separate kernel.
constexpr int kEpilogueCombineMaxTiles = 16;
// bf16 -> fp32 rows rescale inside the sweep's launch (softmax_rescale_in_launch.cuh)
// from this k up: a tile's k loop then outlasts the scaling of a tile (128 KB read and
// written by 3 warps, about 25 us on an H100). At k = 1024 (8192x8192x1024) the scaling
// fell behind the tensor cores and the launch took 0.49-0.50 ms against 0.46 for the
// separate passes; at k = 2048 8192x8192x2048 0.61-0.62 against 0.63-0.64 and
// 4096x4096x2048 0.150-0.156 against 0.161-0.163; at k = 4096 (4096^3) 0.227-0.233
// against 0.246-0.250 (H100, docs/KERNELS.md). bf16 output halves the passes' traffic
// and they stay ahead (8192x8192x1024: 0.32 against 0.40).
constexpr std::int64_t kRescaleInLaunchMinK = 2048;
// tf32 rows on the swapped core overlap the row pass with the sweep's last wave of
// tiles from this k up (softmax_rows_after_max or combine_rescale_rows with
// WrittenRows; the figures below are the latter's): the SMs
// that wave leaves idle take the row blocks already whole, top-down. The pass then
// loses the bottom-up order's L2 hits, and the idle SMs' time grows with k. Measured
// (H100, fused ms, three calls each, against the pass bottom-up after the sweep):
// 4096^3 0.397-0.404 against 0.405-0.424 (two machines), 4096x8192x4096 0.797-0.804
// against 0.808-0.814, 8192x4096x4096 and 2048x2048x8192 within the spread; below
// k = 4096 it lost: 4096x4096x2048 0.248-0.259 against 0.252-0.260, 8192x8192x1024
// 0.638-0.652 against 0.617-0.625.
constexpr std::int64_t kOverlapPassMinK = 4096;

// Whether bf16 rows past the recompute range rescale in the sweep's launch.
bool rescales_in_launch(const MatmulProblem& p) {
  const int tiles_n = static_cast<int>((p.n + sm90::kBlockN - 1) / sm90::kBlockN);
  return p.in == DType::bf16 && p.out == DType::f32 && p.k >= kRescaleInLaunchMinK &&
         sm90::RescaleInLaunchEpilogue<float>::fits(tiles_n);
}

// The one-launch scheme up to m*n*k = 2^28 (512^3, 4096x256x256): there its single
// launch and 64x64 tiles beat the sweeps' 3-4 launches and 128x256 tiles, too few to fill
// the GPU. Above it the sweeps' wgmma wins: the one-launch k loop is an mma.sync loop
// paced by one L2 round trip per 32 k (measured on an H200, docs/KERNELS.md).
constexpr std::int64_t kOneLaunchMaxWork = std::int64_t{1} << 28;
// From this m*n*k (256^3) up, bf16 row softmax takes cluster rows before the one launch.
constexpr std::int64_t kClustersBeforeOneLaunchWork = std::int64_t{1} << 24;

using detail::Scratch;

// Why the one-launch scheme cannot take the problem, or "" when it can.
std::string one_launch_refusal(const MatmulProblem& p, int arch) {
  const bool types = (p.in == DType::tf32 && p.out == DType::f32) ||
                     (p.in == DType::bf16 && (p.out == DType::f32 || p.out == DType::bf16));
  if (!types) return std::string("inputs ") + dtype_name(p.in) + " with output " + dtype_name(p.out);
  if (arch < 80) return "it needs an sm_80 or newer device";
  constexpr std::int64_t kMaxElems = std::int64_t{1} << 31;  // the kernel indexes A and B with int
  if (p.m * p.k >= kMaxElems || p.k * p.n >= kMaxElems) return "A or B has 2^31 elements or more";
  const long tiles = detail::one_launch_tiles(p), capacity = detail::one_launch_capacity(p);
  if (tiles > capacity) {
    return std::to_string(tiles) + " tiles of 64x64 but the device keeps " + std::to_string(capacity) +
           " of its CTAs resident";
  }
  return "";
}

void one_launch(const MatmulProblem& p, bool rows, cudaStream_t stream) {
  const std::size_t bytes = detail::one_launch_partial_bytes(p, rows);
  const std::size_t out_bytes = static_cast<std::size_t>(p.m * p.n) * dtype_bytes(p.out);
  // The statistics fit in the output buffer (written only after they are read) unless
  // it is tiny or not 8-byte aligned.
  if (bytes <= out_bytes && reinterpret_cast<std::uintptr_t>(p.c) % alignof(float2) == 0) {
    detail::launch_matmul_softmax_one_launch(p, rows, static_cast<float2*>(p.c), true, stream);
  } else {
    Scratch partial(bytes, stream, "tile statistics");
    detail::launch_matmul_softmax_one_launch(p, rows, partial.as<float2>(), false, stream);
  }
}

bool fused_supported(const MatmulProblem& p, MatmulPath path, int arch) {
  if (path != MatmulPath::automatic && path != MatmulPath::sm90) return false;
  const bool types = (p.in == DType::tf32 && p.out == DType::f32) ||
                     (p.in == DType::bf16 && (p.out == DType::f32 || p.out == DType::bf16));
  if (!types) return false;
  if (choose_matmul_path(p, arch) != MatmulPath::sm90) return false;
  return p.n % 4 == 0;  // the epilogue and rescale write 2 and 4 columns at once
}

// Clusters of the cluster_rows kernel for p that the device keeps resident (0: none).
template <class OutT>
int cluster_rows_capacity_for(const MatmulProblem& p) {
  using E = sm90::ClusterRowsEpilogue<OutT>;
  return p.in == DType::tf32 ? detail::sm90_cluster_capacity<sm90::Tf32Operands, E>(p)
                             : detail::sm90_cluster_capacity<sm90::Bf16Operands, E>(p);
}
int cluster_rows_capacity(const MatmulProblem& p) {
  return p.out == DType::bf16 ? cluster_rows_capacity_for<__nv_bfloat16>(p) : cluster_rows_capacity_for<float>(p);
}

// What the fused sm90 schemes need, for their refusals.
constexpr const char* kFusedSm90Needs =
    "the sm90 path (an sm_90 device, 16-byte aligned rows, n a multiple of 4) and inputs tf32 -> fp32 or bf16 -> "
    "fp32/bf16";

// Why a one-sweep row scheme (cluster or group rows) cannot take the problem for reasons
// they share, or "".
std::string one_sweep_rows_refusal(const MatmulProblem& p, SoftmaxDim dim, MatmulPath path, int arch) {
  if (dim != SoftmaxDim::rows) return "it computes softmax over rows only";
  if (!fused_supported(p, path, arch)) return std::string("it needs ") + kFusedSm90Needs;
  return "";
}

// Why the cluster_rows scheme cannot take the problem, or "" when it can.
std::string cluster_rows_refusal(const MatmulProblem& p, SoftmaxDim dim, MatmulPath path, int arch) {
  if (std::string why = one_sweep_rows_refusal(p, dim, path, arch); !why.empty()) return why;
  const long tiles_n = (p.n + sm90::kBlockN - 1) / sm90::kBlockN;
  constexpr int kMax = sm90::ClusterRowsEpilogue<float>::kMaxClusterSize;
  if (tiles_n > kMax) {
    return std::to_string(tiles_n) + " column tiles of 256, more than a cluster's " + std::to_string(kMax) + " CTAs";
  }
  if (cluster_rows_capacity(p) == 0) return "the device runs no cluster of " + std::to_string(tiles_n) + " CTAs";
  return "";
}

// Why the group_rows scheme cannot take the problem, or "" when it can.
std::string group_rows_refusal(const MatmulProblem& p, SoftmaxDim dim, MatmulPath path, int arch) {
  if (std::string why = one_sweep_rows_refusal(p, dim, path, arch); !why.empty()) return why;
  const long tiles_n = (p.n + sm90::kBlockN - 1) / sm90::kBlockN;
  const int sms = detail::current_device_facts().sms;
  if (tiles_n > sms) {
    return std::to_string(tiles_n) + " column tiles of 256, more than the device's " + std::to_string(sms) + " SMs";
  }
  return "";
}

// Zeroes `count` counters in scratch memory, in stream order, for CTAs that count work
// on them during the launch that follows.
void clear_counts(const Scratch& counts, std::size_t count, cudaStream_t stream, const char* what) {
  const cudaError_t e = cudaMemsetAsync(counts.as<unsigned>(), 0, count * sizeof(unsigned), stream);
  if (e != cudaSuccess) throw CudaError(std::string(what) + ": " + cudaGetErrorString(e));
}

// Rows in one sweep: groups of tiles_n CTAs share each row's statistics through L2
// (softmax_group_rows.cuh).
template <class OutT>
void group_rows(const MatmulProblem& p, cudaStream_t stream) {
  const int tiles_n = static_cast<int>((p.n + sm90::kBlockN - 1) / sm90::kBlockN);
  const std::size_t blocks64 = static_cast<std::size_t>((p.m + 63) / 64);
  Scratch partial(static_cast<std::size_t>(p.m) * tiles_n * sizeof(float2), stream, "row block statistics");
  Scratch arrived(blocks64 * sizeof(unsigned), stream, "row block arrivals");
  clear_counts(arrived, blocks64, stream, "group rows: clearing the arrivals");
  const sm90::GroupRowsEpilogue<OutT> e{static_cast<OutT*>(p.c), static_cast<int>(p.m), static_cast<int>(p.n),
                                        partial.as<float2>(), arrived.as<unsigned>(), tiles_n};
  if (p.in == DType::tf32) {
    detail::launch_sm90_tf32(p, stream, e);  // B transposed into scratch first
  } else {
    detail::launch_sm90_core<sm90::Bf16Operands>(p, p.b, stream, e);
  }
}

// One sweep of the matmul with the softmax epilogue; b_operand is B, or for tf32 the
// B^T that wgmma reads (made once by swept_rows for both sweeps of the recompute scheme).
template <class Epilogue>
void run_sweep(const MatmulProblem& p, const void* b_operand, cudaStream_t stream, const Epilogue& epilogue) {
  if (p.in == DType::tf32) {
    detail::launch_sm90_core<sm90::Tf32Operands>(p, b_operand, stream, epilogue);
  } else {
    detail::launch_sm90_core<sm90::Bf16Operands>(p, b_operand, stream, epilogue);
  }
}

// Columns on the swapped core, which keeps column statistics per 256-row tile in-thread
// (softmax_swapped.cuh) instead of per 16 rows across lanes, and for tf32 needs no
// transpose of B. The same two schemes as swept_rows: recompute for k <=
// kRecomputeMaxK, rescale above. OutT: float, or __nv_bfloat16 with Bf16Swapped.
template <class Ops, class OutT>
void swapped_cols(const MatmulProblem& p, cudaStream_t stream) {
  namespace sw = sm90::swapped;
  const int blocks = static_cast<int>((p.m + sw::kBlockM - 1) / sw::kBlockM);
  const std::size_t count = static_cast<std::size_t>(blocks) * static_cast<std::size_t>(p.n);
  Scratch partial(count * sizeof(float2), stream, "column block statistics");
  Scratch final_stats(static_cast<std::size_t>(p.n) * sizeof(float2), stream, "column statistics");
  const int m = static_cast<int>(p.m), n = static_cast<int>(p.n);
  using sm90::SoftmaxPass;
  if (p.k <= kRecomputeMaxK) {
    detail::launch_sm90_swapped<Ops>(
        p, stream, sw::SwappedColsEpilogue<Ops, OutT, SoftmaxPass::stats>{m, n, partial.as<float2>(), nullptr});
    detail::combine_softmax_stats(partial.as<float2>(), final_stats.as<float2>(), nullptr, p.m, p.n, false, blocks,
                                  stream);
    detail::launch_sm90_swapped<Ops>(
        p, stream, sw::SwappedColsEpilogue<Ops, OutT, SoftmaxPass::normalize>{m, n, nullptr, final_stats.as<float2>()});
    return;
  }
  Scratch scales(count * sizeof(float), stream, "column block factors");
  detail::launch_sm90_swapped<Ops>(
      p, stream, sw::SwappedColsEpilogue<Ops, OutT, SoftmaxPass::stats_store_exp>{m, n, partial.as<float2>(), nullptr});
  detail::combine_softmax_stats(partial.as<float2>(), final_stats.as<float2>(), scales.as<float>(), p.m, p.n, false,
                                blocks, stream);
  detail::rescale_softmax_cols(p.c, p.out, scales.as<float>(), p.m, p.n, 8, stream);  // 256-row blocks
}

// The rescale scheme's sweep with the rescale inside the same launch
// (softmax_rescale_in_launch.cuh): bf16 operands (B as it is), k past the B-resident
// range. `stats` carries the output, the shape and the statistics buffer.
void rescale_in_launch(const MatmulProblem& p, cudaStream_t stream, const sm90::SoftmaxEpilogue<float>& stats) {
  const std::size_t tiles_m = static_cast<std::size_t>((p.m + sm90::kBlockM - 1) / sm90::kBlockM);
  Scratch written(tiles_m * sizeof(unsigned), stream, "row block counts");
  clear_counts(written, tiles_m, stream, "rows rescaled in launch: clearing the counts");
  sm90::RescaleInLaunchEpilogue<float> e{stats, written.as<unsigned>()};
  e.pass = sm90::SoftmaxPass::stats_store_exp;
  e.final_stats = nullptr;
  detail::launch_sm90_core<sm90::Bf16Operands>(p, p.b, stream, e);
}

// Row softmax in two sweeps of the transposing core (softmax_epilogue.cuh).
template <class OutT>
void swept_rows(const MatmulProblem& p, cudaStream_t stream) {
  const int tiles_n = static_cast<int>((p.n + sm90::kBlockN - 1) / sm90::kBlockN);
  Scratch partial(static_cast<std::size_t>(p.m) * tiles_n * sizeof(float2), stream, "block statistics");
  sm90::SoftmaxEpilogue<OutT> e{static_cast<OutT*>(p.c), static_cast<int>(p.m), static_cast<int>(p.n),
                                sm90::SoftmaxPass::stats, partial.as<float2>(), nullptr, tiles_n};
  // tf32 wgmma reads B K-major: transpose (and round) it once, for every sweep.
  std::optional<Scratch> bt;
  const void* b_operand = p.b;
  if (p.in == DType::tf32) {
    bt.emplace(static_cast<std::size_t>(p.n) * static_cast<std::size_t>(p.k) * 4, stream, "tf32 B^T");
    detail::transpose_to_tf32(static_cast<const float*>(p.b), bt->as<float>(), p.k, p.n, stream);
    b_operand = bt->as<float>();
  }
  const bool bf16_to_fp32 = p.in == DType::bf16 && p.out == DType::f32;
  if (p.k <= (bf16_to_fp32 ? kRecomputeMaxKBf16ToFp32Rows : kRecomputeMaxK)) {
    run_sweep(p, b_operand, stream, e);
    // With few partials per row the second sweep combines them itself (final_stats null).
    std::optional<Scratch> final_stats;
    if (tiles_n > kEpilogueCombineMaxTiles) {
      final_stats.emplace(static_cast<std::size_t>(p.m) * sizeof(float2), stream, "statistics");
      detail::combine_softmax_stats(partial.as<float2>(), final_stats->as<float2>(), nullptr, p.m, p.n, true, tiles_n,
                                    stream);
      e.final_stats = final_stats->as<float2>();
    }
    e.pass = sm90::SoftmaxPass::normalize;
    run_sweep(p, b_operand, stream, e);
  } else if (rescales_in_launch(p)) {  // fp32 output only
    if constexpr (std::is_same_v<OutT, float>) rescale_in_launch(p, stream, e);
  } else if (std::is_same_v<OutT, float> && p.n <= detail::kAfterMaxMaxCols) {
    // fp32 output: the sweep stores the scores and their block maxima, and the pass
    // does the exps while it streams the rows (softmax_finish.cuh).
    e.pass = sm90::SoftmaxPass::store_scores;
    run_sweep(p, b_operand, stream, e);
    detail::softmax_rows_after_max(p.c, partial.as<float2>(), p.m, p.n, tiles_n, stream);
  } else {
    e.pass = sm90::SoftmaxPass::stats_store_exp;
    run_sweep(p, b_operand, stream, e);
    detail::combine_rescale_rows(p.c, p.out, partial.as<float2>(), p.m, p.n, tiles_n, 8, stream);  // 256 columns
  }
}

// Rows with fp32 output and k > kRecomputeMaxK (the rescale scheme) on the swapped core:
// for tf32 it needs no B^T. With n <= 16384 one sweep writes the raw scores and each
// row's max per 128-column tile (softmax_swapped_rows.cuh), then softmax_rows_after_max
// (since 2026-11-24; against the exps and the combine-and-rescale pass, H100: 4096^3
// sweep 356 -> 353 us and span 384-388 -> 381, 8192x8192x1024 sweep 439 -> 433 us and
// pass 181 -> 176); wider rows write exp(s - tile max) and (max, sum) per tile, then
// the combine and the rescale. Taken for tf32
// only: bf16 -> fp32 rows on it measured the same as the transposing core at 4096^3 and
// 3-4% slower at 8192x8192x1024 and 8192x2048x2048 (H100, 2026-11-24), and bf16 has no
// transpose to save.
template <class Ops>
void swapped_rows(const MatmulProblem& p, cudaStream_t stream) {
  namespace sw = sm90::swapped;
  const int tiles_n = static_cast<int>((p.n + sw::kBlockN - 1) / sw::kBlockN);
  const std::size_t tiles_m = static_cast<std::size_t>((p.m + sw::kBlockM - 1) / sw::kBlockM);
  Scratch partial(static_cast<std::size_t>(p.m) * tiles_n * sizeof(float2), stream, "block statistics");
  // From kOverlapPassMinK the sweep counts each 256-row block's tile halves as they
  // land, and the pass starts on whole row blocks while the sweep's last tiles run.
  std::optional<Scratch> written;
  unsigned* counts = nullptr;
  if (p.k >= kOverlapPassMinK) {
    written.emplace(tiles_m * sizeof(unsigned), stream, "row block counts");
    clear_counts(*written, tiles_m, stream, "tf32 rows: clearing the counts");
    counts = written->as<unsigned>();
  }
  const detail::WrittenRows rows{counts, 8, 2u * static_cast<unsigned>(tiles_n)};
  if (p.n <= detail::kAfterMaxMaxCols) {
    // The sweep stores the raw scores and the tile maxima; the pass does the exps.
    detail::launch_sm90_swapped<Ops>(p, stream,
                                     sw::SwappedRowsEpilogue<Ops, true>{static_cast<int>(p.m), static_cast<int>(p.n),
                                                                        partial.as<float2>(), counts});
    detail::softmax_rows_after_max(p.c, partial.as<float2>(), p.m, p.n, tiles_n, stream, rows);
  } else {
    detail::launch_sm90_swapped<Ops>(p, stream,
                                     sw::SwappedRowsEpilogue<Ops>{static_cast<int>(p.m), static_cast<int>(p.n),
                                                                  partial.as<float2>(), counts});
    detail::combine_rescale_rows(p.c, p.out, partial.as<float2>(), p.m, p.n, tiles_n, 7, stream,
                                 rows);  // 128 columns
  }
}

// The sweeps scheme: rows on the transposing core (tf32 rescale on the swapped core),
// columns on the swapped core.
template <class OutT>
void fused_sm90(const MatmulProblem& p, SoftmaxDim dim, cudaStream_t stream) {
  if (dim == SoftmaxDim::rows) {
    if constexpr (std::is_same_v<OutT, float>) {
      if (p.in == DType::tf32 && p.k > kRecomputeMaxK) {
        swapped_rows<sm90::swapped::Tf32Swapped>(p, stream);
        return;
      }
    }
    swept_rows<OutT>(p, stream);
    return;
  }
  // tf32 comes with fp32 output only (fused_supported).
  if constexpr (std::is_same_v<OutT, float>) {
    if (p.in == DType::tf32) {
      swapped_cols<sm90::swapped::Tf32Swapped, float>(p, stream);
      return;
    }
  }
  swapped_cols<sm90::swapped::Bf16Swapped, OutT>(p, stream);
}

// Where the cluster_rows scheme (which the caller checked can run) beats the sweeps and
// group rows, as measured on an H200 (docs/KERNELS.md):
//  - B-resident runs (small k);
//  - streaming runs whose 128-row tiles all get a resident cluster at once (1024^3:
//    13-22% faster than the sweeps, 10-17% faster than group rows).
// Slower: a last round of a few clusters on a mostly idle GPU (2048^3: 16 row tiles, 15
// clusters of 8: 26-30% slower), and clusters of 16 (4096^3: 7 resident, 112 of 132
// SMs: 3-9% slower); group rows takes those.
bool cluster_rows_pays(const MatmulProblem& p) {
  const bool resident = p.in == DType::tf32 ? detail::sm90_b_resident<sm90::Tf32Operands>(p)
                                            : detail::sm90_b_resident<sm90::Bf16Operands>(p);
  if (resident) return true;
  const long tiles_m = (p.m + sm90::kBlockM - 1) / sm90::kBlockM;
  return tiles_m <= cluster_rows_capacity(p);
}

// Where the group_rows scheme (which the caller checked can run) beats the sweeps, on
// streaming runs that cluster rows does not take. Against the transposing core's sweeps
// (bf16; tf32 with k <= kRecomputeMaxK), measured on an H200 (2026-11-21,
// docs/KERNELS.md, before tf32's rescale moved to the swapped core): rows of at most 16
// column tiles, 2048^3 8-15%, 4096x2048x512 13-18%,
// 8192x2048x2048 5-13%, 4096^3 1-2% faster; bf16 output only up to 8 column tiles (at
// 4096^3 the sweeps' staged 16-bit output is 4% faster). Slower: 32 column tiles
// (8192x8192x1024: 4 groups of 32 exchange 16 times each, 25-30% slower).
// tf32 with k > kRecomputeMaxK, where the sweeps scheme is the swapped core's rescale sweep
// (no B^T), measured on an H100 (2026-11-24): group rows still wins at n = 2048 from
// m = 4096 (4096x2048x512 0.063 against 0.075 ms, 8192x2048x2048 0.230 against 0.265);
// the sweep wins at 2048^3 (0.074-0.080 against 0.079-0.085: one wave, where group rows'
// B^T is a bigger share) and at 4096^3 (0.420-0.426 against 0.472-0.478).
bool group_rows_pays(const MatmulProblem& p) {
  const long tiles_n = (p.n + sm90::kBlockN - 1) / sm90::kBlockN;
  if (p.in == DType::tf32 && p.k > kRecomputeMaxK) return tiles_n <= 8 && p.m > 2048;
  // Past 8 column tiles the in-launch rescale is faster (4096^3: 0.231-0.233 ms against
  // 0.245-0.258 for group rows, H100).
  if (rescales_in_launch(p)) return tiles_n <= 8;
  return tiles_n <= (p.out == DType::bf16 ? 8 : 16);
}

// Rows in one sweep: a cluster of CTAs holds a whole row of tiles (softmax_cluster_rows.cuh).
template <class OutT>
void cluster_rows(const MatmulProblem& p, cudaStream_t stream) {
  const sm90::ClusterRowsEpilogue<OutT> e{static_cast<OutT*>(p.c), static_cast<int>(p.m), static_cast<int>(p.n)};
  if (p.in == DType::tf32) {
    detail::launch_sm90_tf32(p, stream, e);  // B transposed into scratch first
  } else {
    detail::launch_sm90_core<sm90::Bf16Operands>(p, p.b, stream, e);
  }
}

// Split k (problems of few tiles): at 1024^3 the 256x128 tiles are 32 CTAs on
// 132 SMs, and every scheme that keeps one CTA per tile leaves three quarters of the GPU
// idle through a long k loop. Cutting k into ranges of at least kSplitMinKTiles k tiles
// (the pipeline's depth) gives each (tile, range) its own CTA; the partial scores go to
// scratch memory (written and read back within L2 at these sizes) and one pass per row
// adds them and makes the softmax (rows), or the column softmax reads their sums.
constexpr long kSplitMinKTiles = 4;
constexpr long kMaxKSplits = 8;

// Into how many k ranges split_k cuts p's k (1: none, when the tiles alone take
// more than half the SMs or k has fewer than 2 x kSplitMinKTiles k tiles).
// The k tile of the swapped core's operands for p's input type.
long split_block_k(const MatmulProblem& p) {
  return p.in == DType::tf32 ? sm90::swapped::Tf32Swapped::kBlockK : sm90::swapped::Bf16Swapped::kBlockK;
}
int k_split_count(const MatmulProblem& p) {
  namespace sw = sm90::swapped;
  const long tiles = ((p.m + sw::kBlockM - 1) / sw::kBlockM) * ((p.n + sw::kBlockN - 1) / sw::kBlockN);
  const long k_tiles = (p.k + split_block_k(p) - 1) / split_block_k(p);
  const long sms = detail::current_device_facts().sms;
  const long splits = std::min({sms / tiles, k_tiles / kSplitMinKTiles, kMaxKSplits});
  if (splits < 2) return 1;
  // Equal ranges of ceil(k_tiles / splits), none of them empty.
  const long per_split = sw::split_k_tiles(static_cast<int>(k_tiles), static_cast<int>(splits));
  return static_cast<int>((k_tiles + per_split - 1) / per_split);
}

// Why the split_k scheme cannot take the problem, or "" when it can.
std::string split_k_refusal(const MatmulProblem& p, SoftmaxDim dim, MatmulPath path, int arch) {
  if (!fused_supported(p, path, arch)) return std::string("it needs ") + kFusedSm90Needs;
  if (dim == SoftmaxDim::rows && p.n > detail::kAfterMaxMaxCols) {
    return std::to_string(p.n) + " columns, more than the " + std::to_string(detail::kAfterMaxMaxCols) +
           " a row pass holds in registers";
  }
  if (k_split_count(p) < 2) {
    return "nothing to split: it needs at most half as many 256x128 tiles as the device has SMs and at least " +
           std::to_string(2 * kSplitMinKTiles) + " k tiles (" + std::to_string(split_block_k(p)) + " wide)";
  }
  return "";
}

// From this m*n*k (512^3) up, tf32 rows take split_k before the one launch.
constexpr std::int64_t kSplitBeforeOneLaunchWork = std::int64_t{1} << 27;

// Where split_k (which the caller checked can run) beats the other schemes, as measured
// on an H100 (2026-11-24, docs/KERNELS.md; ms, the schemes by name). Rows: tf32 from
// 512^3, where the others pay for B^T or run mma.sync (512^3 0.018-0.021 against the one
// launch's 0.022-0.025; 1024^3 0.025-0.029 against cluster rows' 0.037-0.041;
// 2048x1024x1024 0.032-0.036 against 0.038-0.042; 1024x1024x4096 0.042-0.046 against the
// sweeps' 0.094-0.100; not at 256^3, two ranges over two tiles: 0.017-0.020 against the
// one launch's 0.016-0.018); bf16 with 4 ranges or more (1024^3 0.022-0.026 against
// cluster rows' 0.024-0.025, 1024x1024x4096 0.030-0.034 against 0.050-0.053), not with 2
// (2048x1024x1024 0.026-0.030 against cluster rows' 0.024-0.026).
// Columns: the column softmax reads the slabs' sums twice, so split k pays there only
// with 4 ranges or more and a longer k (1024x1024x4096 tf32 0.058-0.060 against the
// sweeps' 0.095-0.100, bf16 0.045-0.048 against 0.058-0.062; 1024x1024x2048 tf32
// 0.046-0.048 against 0.058-0.060; at 1024^3 tf32 0.040-0.042 against 0.040-0.045 and bf16
// 0.036-0.040 against 0.030-0.038).
constexpr std::int64_t kSplitColsMinK = 2048;
bool split_k_pays(const MatmulProblem& p, SoftmaxDim dim) {
  const int splits = k_split_count(p);
  if (dim == SoftmaxDim::cols) return splits >= 4 && p.k >= kSplitColsMinK;
  if (p.in == DType::tf32) return splits >= 2 && p.m * p.n * p.k >= kSplitBeforeOneLaunchWork;
  return splits >= 4;
}

// Split k (see kSplitMinKTiles) on the swapped core (tf32 needs no B^T there): k_splits
// slabs of partial scores, then the row pass (one block per row) or the column pass (the
// standalone column softmax's kernels reading the slabs' sums).
template <class Ops>
void split_k(const MatmulProblem& p, bool rows, cudaStream_t stream) {
  namespace sw = sm90::swapped;
  const int k_splits = k_split_count(p);
  const std::int64_t slab_rows = (p.m + sw::kBlockM - 1) / sw::kBlockM * sw::kBlockM;
  Scratch partial(static_cast<std::size_t>(k_splits * slab_rows * p.n) * sizeof(float), stream,
                  "split-k partial scores");
  MatmulProblem slabs = p;
  slabs.c = partial.as<float>();
  slabs.out = DType::f32;
  sw::SwappedSplitStoreEpilogue<Ops> e{};
  e.k_splits = k_splits;
  detail::launch_sm90_swapped<Ops>(slabs, stream, e);
  if (rows) {
    detail::softmax_rows_of_split_sums(p.c, p.out, partial.as<float>(), k_splits, slab_rows, p.m, p.n, stream);
  } else {
    detail::softmax_cols_of_split_sums(p.c, p.out, partial.as<float>(), k_splits, slab_rows, p.m, p.n, stream);
  }
}

// Any device and shape: matmul into fp32 scratch, then the standalone softmax.
void unfused(const MatmulProblem& p, const MatmulSoftmaxOptions& o) {
  Scratch scores(static_cast<std::size_t>(p.m) * static_cast<std::size_t>(p.n) * 4, o.stream, "scores");
  MatmulProblem mm = p;
  mm.c = scores.as<float>();
  mm.out = DType::f32;
  MatmulOptions mo;
  mo.path = o.path;
  mo.stream = o.stream;
  mo.range = false;  // the caller's range covers both launches
  matmul(mm, mo);
  SoftmaxProblem sp;
  sp.x = scores.as<float>();
  sp.out = p.c;
  sp.m = p.m;
  sp.n = p.n;
  sp.in = DType::f32;
  sp.out_type = p.out;
  softmax(sp, o.dim, o.stream, false);
}

}  // namespace

const char* softmax_scheme_name(SoftmaxScheme s) {
  switch (s) {
    case SoftmaxScheme::automatic: return "automatic";
    case SoftmaxScheme::one_launch: return "one_launch";
    case SoftmaxScheme::sweeps: return "sweeps";
    case SoftmaxScheme::cluster_rows: return "cluster_rows";
    case SoftmaxScheme::group_rows: return "group_rows";
    case SoftmaxScheme::split_k: return "split_k";
    case SoftmaxScheme::unfused: return "unfused";
  }
  return "?";
}

void matmul_softmax(const MatmulProblem& p, const MatmulSoftmaxOptions& options) {
  const int arch = current_arch();
  check_matmul_path(p, options.path, arch);
  if (p.out != DType::f32 && p.out != DType::bf16 && p.out != DType::f16) {
    throw KernelError(std::string("matmul_softmax: unsupported output type ") + dtype_name(p.out));
  }
  SoftmaxScheme scheme = options.scheme;
  if (scheme == SoftmaxScheme::automatic) {
    // one_launch is an mma.sync kernel: it stands in for the automatic and sm80 paths.
    const bool small = p.m * p.n * p.k <= kOneLaunchMaxWork &&
                       (options.path == MatmulPath::automatic || options.path == MatmulPath::sm80);
    const bool clusters = cluster_rows_refusal(p, options.dim, options.path, arch).empty() && cluster_rows_pays(p);
    const bool groups =
        !clusters && group_rows_refusal(p, options.dim, options.path, arch).empty() && group_rows_pays(p);
    // bf16 rows from 256^3 up: cluster rows beats the one launch on an H200 (256^3 3-7%,
    // 512^3 14-17%); at 128^3 the two trade places from run to run, and tf32 is slower
    // in clusters (its B transpose is one more launch).
    const bool clusters_first = clusters && p.in == DType::bf16 && p.m * p.n * p.k >= kClustersBeforeOneLaunchWork;
    // Split k first where it pays, before the one launch too (tf32 at 512^3).
    const bool split = split_k_refusal(p, options.dim, options.path, arch).empty() && split_k_pays(p, options.dim);
    if (split) {
      scheme = SoftmaxScheme::split_k;
    } else if (small && !clusters_first && one_launch_refusal(p, arch).empty()) {
      scheme = SoftmaxScheme::one_launch;
    } else if (clusters) {
      scheme = SoftmaxScheme::cluster_rows;
    } else if (groups) {
      scheme = SoftmaxScheme::group_rows;
    } else {
      scheme = fused_supported(p, options.path, arch) ? SoftmaxScheme::sweeps : SoftmaxScheme::unfused;
    }
  } else if (scheme == SoftmaxScheme::one_launch) {
    const std::string why = one_launch_refusal(p, arch);
    if (!why.empty()) throw KernelError("matmul_softmax: the one-launch scheme cannot take this problem: " + why);
  } else if (scheme == SoftmaxScheme::cluster_rows) {
    const std::string why = cluster_rows_refusal(p, options.dim, options.path, arch);
    if (!why.empty()) throw KernelError("matmul_softmax: the cluster_rows scheme cannot take this problem: " + why);
  } else if (scheme == SoftmaxScheme::group_rows) {
    const std::string why = group_rows_refusal(p, options.dim, options.path, arch);
    if (!why.empty()) throw KernelError("matmul_softmax: the group_rows scheme cannot take this problem: " + why);
  } else if (scheme == SoftmaxScheme::split_k) {
    const std::string why = split_k_refusal(p, options.dim, options.path, arch);
    if (!why.empty()) throw KernelError("matmul_softmax: the split_k scheme cannot take this problem: " + why);
  } else if (scheme == SoftmaxScheme::sweeps && !fused_supported(p, options.path, arch)) {
    throw KernelError(std::string("matmul_softmax: the sweeps scheme needs ") + kFusedSm90Needs);
  }
  detail::OpRange range(matmul_softmax_cost(p.m, p.n, p.k, options.dim, p.in, p.out), options.range);
  const bool rows = options.dim == SoftmaxDim::rows;
  // The fused schemes are templates on the output type (bf16 or fp32): run(OutT{}).
  auto by_output = [&](auto run) {
    if (p.out == DType::bf16) {
      run(__nv_bfloat16{});
    } else {
      run(float{});
    }
  };
  switch (scheme) {
    case SoftmaxScheme::one_launch:
      one_launch(p, rows, options.stream);
      break;
    case SoftmaxScheme::cluster_rows:
      by_output([&](auto out) { cluster_rows<decltype(out)>(p, options.stream); });
      break;
    case SoftmaxScheme::group_rows:
      by_output([&](auto out) { group_rows<decltype(out)>(p, options.stream); });
      break;
    case SoftmaxScheme::sweeps:
      by_output([&](auto out) { fused_sm90<decltype(out)>(p, options.dim, options.stream); });
      break;
    case SoftmaxScheme::split_k:
      if (p.in == DType::tf32) {
        split_k<sm90::swapped::Tf32Swapped>(p, rows, options.stream);
      } else {
        split_k<sm90::swapped::Bf16Swapped>(p, rows, options.stream);
      }
      break;
    default:
      unfused(p, options);
  }
}

}  // namespace flopline::kernels
