// The tuning constants of the fused matmul+softmax plan (matmul_softmax_plan.cc). Each
// was set where one launch sequence overtook another when measured; the measurements,
// with their devices, are in docs/results/ (docs/KERNELS.md, "The plan", says which
// file), not here.
#pragma once

#include <cstdint>

namespace flopline::kernels::tuning {

// Recompute (two sweeps, no scores in memory) while the extra matmul costs less than one
// more read and write of the output: 2mnk FLOPs against 2mn elements of traffic.
constexpr std::int64_t kRecomputeMaxK = 320;
// bf16 -> fp32 rows on the sm90 core recompute further: the rescale's fp32 traffic is
// twice bf16's while their matmul is as cheap.
constexpr std::int64_t kRecomputeMaxKBf16ToFp32Rows = 768;
// The recompute's second sweep combines a row's partial statistics itself while each
// thread reads at most this many (n <= 4096); past it a combine kernel runs between.
constexpr int kEpilogueCombineMaxTiles = 16;
// bf16 -> fp32 rows rescale inside the sweep's launch from this k: a tile's k loop then
// outlasts the rescale of a tile by the producer's spare warps.
constexpr std::int64_t kRescaleInLaunchMinK = 2048;
// tf32 rows on the swapped core start their row pass beside the sweep's last wave from
// this k: the idle SMs' time then outweighs the L2 hits the bottom-up pass loses.
constexpr std::int64_t kOverlapPassMinK = 4096;

// The one-launch scheme up to this m*n*k (2^28): its single launch and 64x64 tiles beat
// the sweeps' several launches, and above it wgmma beats its mma.sync k loop.
constexpr std::int64_t kOneLaunchMaxWork = std::int64_t{1} << 28;
// bf16 rows from this m*n*k (2^24) take cluster rows before the one launch: the wgmma
// sweep has caught up with the single launch there.
constexpr std::int64_t kClustersBeforeOneLaunchWork = std::int64_t{1} << 24;

// Group rows: its L2 exchanges pay up to this many column tiles with fp32 output ...
constexpr std::int64_t kGroupRowsMaxTilesN = 16;
// ... and up to this many with bf16 output (the sweeps' staged 16-bit stores are cheaper),
// or where the sweeps rescale in their own launch or run on the swapped core.
constexpr std::int64_t kGroupRowsMaxTilesNFast = 8;
// tf32 rows past the recompute range take group rows only above this m: up to it the
// swapped core's sweep, in few waves, is quicker than group rows with its B^T.
constexpr std::int64_t kGroupRowsTf32MinM = 2048;

// Split k: every range keeps at least the pipeline's depth of k tiles ...
constexpr std::int64_t kSplitMinKTiles = 4;
// ... and there are at most this many ranges (the slabs of partial scores stay in L2).
constexpr std::int64_t kMaxKSplits = 8;
// tf32 rows take split k (two ranges suffice) from this m*n*k (2^27): there it saves the
// B^T or the mma.sync loop the other schemes pay.
constexpr std::int64_t kSplitBeforeOneLaunchWork = std::int64_t{1} << 27;
// bf16 rows and all columns take split k only with this many ranges: with two, cluster
// rows or the sweeps keep up.
constexpr std::int64_t kSplitMinRanges = 4;
// Columns read the slabs twice (statistics, then output): split k pays only from this k.
constexpr std::int64_t kSplitColsMinK = 2048;

}  // namespace flopline::kernels::tuning
