// plan_matmul_softmax(): which launch sequence runs softmax(A x B), from the problem's
// sizes, types and alignment, the request and the device's numbers. The order of the
// automatic choice: split k where it pays (problems of few tiles), the one launch for
// small problems (except bf16 rows that cluster rows takes first), cluster rows, group
// rows, the sweeps on the sm90 path, and unfused elsewhere. docs/KERNELS.md has the table.
#include <cstdint>
#include <limits>
#include <string>

#include "flopline/kernels/softmax_plan.h"
#include "matmul_softmax_tuning.h"
#include "tile_shapes.h"

namespace flopline::kernels {
namespace {

using std::to_string;
namespace t = tuning;

bool fused_types(const MatmulProblem& p) {
  return (p.in == DType::tf32 && p.out == DType::f32) ||
         (p.in == DType::bf16 && (p.out == DType::f32 || p.out == DType::bf16));
}

// m*n*k, saturated (the products of sizes below 2^31 can pass 2^63).
std::int64_t work(const MatmulProblem& p) {
  const std::int64_t mn = p.m * p.n;
  if (p.k != 0 && mn > std::numeric_limits<std::int64_t>::max() / p.k) {
    return std::numeric_limits<std::int64_t>::max();
  }
  return mn * p.k;
}

std::int64_t core_tiles_m(const MatmulProblem& p) {
  return (p.m + shapes::kCoreBlockM - 1) / shapes::kCoreBlockM;
}
std::int64_t core_tiles_n(const MatmulProblem& p) {
  return (p.n + shapes::kCoreBlockN - 1) / shapes::kCoreBlockN;
}

// What the fused sm90 schemes need, for their refusals.
constexpr const char* kFusedSm90Needs =
    "the sm90 path (an sm_90 device, 16-byte aligned rows, n a multiple of 4) and inputs tf32 -> "
    "fp32 or bf16 -> "
    "fp32/bf16";

bool fused_supported(const MatmulProblem& p, MatmulPath path, int arch) {
  if (path != MatmulPath::automatic && path != MatmulPath::sm90) return false;
  if (!fused_types(p)) return false;
  if (choose_matmul_path(p, arch) != MatmulPath::sm90) return false;
  return p.n % 4 == 0;  // the epilogue and rescale write 2 and 4 columns at once
}

// Why the fused sm90 schemes cannot take the problem (fused_supported is false).
std::string sm90_refusal(const MatmulProblem& p, MatmulPath path, int arch) {
  if (!fused_types(p))
    return std::string("inputs ") + dtype_name(p.in) + " with output " + dtype_name(p.out);
  if (path != MatmulPath::automatic && path != MatmulPath::sm90) {
    return std::string("the ") + matmul_path_name(path) + " path was asked for";
  }
  if (arch != 90) return "no sm_90 device (sm_" + to_string(arch) + ")";
  if (choose_matmul_path(p, arch) != MatmulPath::sm90)
    return "TMA cannot take the rows or pointers (16-byte aligned)";
  return "n = " + to_string(p.n) + " is not a multiple of 4";
}

// Why the one-launch scheme cannot take the problem, or "" when it can.
std::string one_launch_refusal(const MatmulProblem& p, const SoftmaxPlanDevice& d) {
  if (!fused_types(p))
    return std::string("inputs ") + dtype_name(p.in) + " with output " + dtype_name(p.out);
  if (d.arch < 80) return "it needs an sm_80 or newer device";
  constexpr std::int64_t kMaxElems = std::int64_t{1} << 31;  // the kernel indexes A and B with int
  if (p.m * p.k >= kMaxElems || p.k * p.n >= kMaxElems) return "A or B has 2^31 elements or more";
  const std::int64_t tiles = shapes::one_launch_tiles(p.m, p.n);
  if (tiles > d.one_launch_ctas) {
    return to_string(tiles) + " tiles of 64x64 but the device keeps " +
           to_string(d.one_launch_ctas) + " of its CTAs resident";
  }
  return "";
}

// Why a one-sweep row scheme (cluster or group rows) cannot take the problem for reasons
// they share, or "".
std::string one_sweep_rows_refusal(const MatmulProblem& p, const SoftmaxPlanRequest& r, int arch) {
  if (r.dim != SoftmaxDim::rows) return "it computes softmax over rows only";
  if (!fused_supported(p, r.path, arch)) return std::string("it needs ") + kFusedSm90Needs;
  return "";
}

std::string cluster_rows_refusal(const MatmulProblem& p, const SoftmaxPlanRequest& r,
                                 const SoftmaxPlanDevice& d) {
  if (std::string why = one_sweep_rows_refusal(p, r, d.arch); !why.empty()) return why;
  const std::int64_t tiles_n = core_tiles_n(p);
  if (tiles_n > shapes::kClusterRowsMaxSize) {
    return to_string(tiles_n) + " column tiles of 256, more than a cluster's " +
           to_string(shapes::kClusterRowsMaxSize) + " CTAs";
  }
  if (d.cluster_rows_clusters == 0)
    return "the device runs no cluster of " + to_string(tiles_n) + " CTAs";
  return "";
}

std::string group_rows_refusal(const MatmulProblem& p, const SoftmaxPlanRequest& r,
                               const SoftmaxPlanDevice& d) {
  if (std::string why = one_sweep_rows_refusal(p, r, d.arch); !why.empty()) return why;
  const std::int64_t tiles_n = core_tiles_n(p);
  if (tiles_n > d.sms) {
    return to_string(tiles_n) + " column tiles of 256, more than the device's " + to_string(d.sms) +
           " SMs";
  }
  return "";
}

bool b_resident(const MatmulProblem& p, int sms) {
  return shapes::core_b_resident(p.m, p.n, p.k, shapes::core_block_k(p.in), sms);
}

// Whether bf16 -> fp32 rows past the recompute range rescale in the sweep's launch.
bool rescales_in_launch(const MatmulProblem& p) {
  return p.in == DType::bf16 && p.out == DType::f32 && p.k >= t::kRescaleInLaunchMinK &&
         shapes::rescale_in_launch_fits(core_tiles_n(p));
}

// Cluster rows (which can run) beats the sweeps and group rows where the core runs
// B-resident, or where every 128-row tile gets a resident cluster at once: a last round
// of a few clusters on an idle GPU loses to group rows.
bool cluster_rows_pays(const MatmulProblem& p, const SoftmaxPlanDevice& d) {
  return b_resident(p, d.sms) || core_tiles_m(p) <= d.cluster_rows_clusters;
}

// Group rows (which can run) beats the sweeps over few enough column tiles; past them
// every row's exchange waits on too many CTAs.
bool group_rows_pays(const MatmulProblem& p) {
  const std::int64_t tiles_n = core_tiles_n(p);
  if (p.in == DType::tf32 && p.k > t::kRecomputeMaxK) {
    return tiles_n <= t::kGroupRowsMaxTilesNFast && p.m > t::kGroupRowsTf32MinM;
  }
  if (rescales_in_launch(p)) return tiles_n <= t::kGroupRowsMaxTilesNFast;
  return tiles_n <= (p.out == DType::bf16 ? t::kGroupRowsMaxTilesNFast : t::kGroupRowsMaxTilesN);
}

// Into how many k ranges split k cuts p's k (1: none, when the swapped core's tiles alone
// take more than half the SMs or k has fewer than 2 x kSplitMinKTiles k tiles).
int k_split_count(const MatmulProblem& p, int sms) {
  const std::int64_t tiles = ((p.m + shapes::kSwappedBlockM - 1) / shapes::kSwappedBlockM) *
                             ((p.n + shapes::kSwappedBlockN - 1) / shapes::kSwappedBlockN);
  const std::int64_t block_k = shapes::swapped_block_k(p.in);
  const std::int64_t k_tiles = (p.k + block_k - 1) / block_k;
  std::int64_t splits = sms / tiles;
  if (k_tiles / t::kSplitMinKTiles < splits) splits = k_tiles / t::kSplitMinKTiles;
  if (t::kMaxKSplits < splits) splits = t::kMaxKSplits;
  if (splits < 2) return 1;
  // Equal ranges of ceil(k_tiles / splits), none of them empty.
  const std::int64_t per_split =
      shapes::split_k_tiles(static_cast<int>(k_tiles), static_cast<int>(splits));
  return static_cast<int>((k_tiles + per_split - 1) / per_split);
}

std::string split_k_refusal(const MatmulProblem& p, const SoftmaxPlanRequest& r,
                            const SoftmaxPlanDevice& d) {
  if (!fused_supported(p, r.path, d.arch)) return std::string("it needs ") + kFusedSm90Needs;
  if (r.dim == SoftmaxDim::rows && p.n > shapes::kRowPassMaxCols) {
    return to_string(p.n) + " columns, more than the " + to_string(shapes::kRowPassMaxCols) +
           " a row pass holds in registers";
  }
  if (k_split_count(p, d.sms) < 2) {
    return "nothing to split: it needs at most half as many 256x128 tiles as the device has SMs "
           "and at least " +
           to_string(2 * t::kSplitMinKTiles) + " k tiles (" +
           to_string(shapes::swapped_block_k(p.in)) + " wide)";
  }
  return "";
}

// Where split k (which can run) beats the other schemes.
bool split_k_pays(const MatmulProblem& p, SoftmaxDim dim, int splits) {
  if (dim == SoftmaxDim::cols) return splits >= t::kSplitMinRanges && p.k >= t::kSplitColsMinK;
  if (p.in == DType::tf32) return splits >= 2 && work(p) >= t::kSplitBeforeOneLaunchWork;
  return splits >= t::kSplitMinRanges;
}

// The sweeps scheme's launch sequence: rows on the core (tf32 past the recompute range on
// the swapped core, which needs no B^T), columns on the swapped core; recompute for small
// k, otherwise one sweep that leaves its output for a pass (or rescales it itself).
MatmulSoftmaxPlan sweeps_plan(const MatmulProblem& p, SoftmaxDim dim) {
  MatmulSoftmaxPlan plan;
  const std::string k = "k = " + to_string(p.k);
  if (dim == SoftmaxDim::cols) {
    const bool recompute = p.k <= t::kRecomputeMaxK;
    plan.plan = recompute ? SoftmaxPlan::swapped_cols_recompute : SoftmaxPlan::swapped_cols_rescale;
    plan.reason = "columns on the swapped core, " + k + (recompute ? " <= " : " > ") +
                  to_string(t::kRecomputeMaxK) + (recompute ? ": recompute" : ": rescale");
    return plan;
  }
  if (p.in == DType::tf32 && p.k > t::kRecomputeMaxK) {
    const bool beside = p.k >= t::kOverlapPassMinK;
    const bool scores = p.n <= shapes::kRowPassMaxCols;
    if (scores) {
      plan.plan = beside ? SoftmaxPlan::swapped_rows_scores_beside_pass
                         : SoftmaxPlan::swapped_rows_scores_then_pass;
    } else {
      plan.plan = beside ? SoftmaxPlan::swapped_rows_exps_beside_pass
                         : SoftmaxPlan::swapped_rows_exps_then_pass;
    }
    plan.reason = "tf32 rows with " + k + " > " + to_string(t::kRecomputeMaxK) +
                  " on the swapped core (no B^T), " +
                  (scores ? "a row of n <= 16384 in the pass's registers"
                          : "rows too wide for the pass's registers") +
                  ", the pass " +
                  (beside ? "beside the sweep from k = " : "after the sweep below k = ") +
                  to_string(t::kOverlapPassMinK);
    return plan;
  }
  const bool bf16_to_fp32 = p.in == DType::bf16 && p.out == DType::f32;
  const std::int64_t recompute_max_k =
      bf16_to_fp32 ? t::kRecomputeMaxKBf16ToFp32Rows : t::kRecomputeMaxK;
  if (p.k <= recompute_max_k) {
    const bool combine = core_tiles_n(p) > t::kEpilogueCombineMaxTiles;
    plan.plan = combine ? SoftmaxPlan::rows_recompute_combine : SoftmaxPlan::rows_recompute;
    plan.reason = "rows with " + k + " <= " + to_string(recompute_max_k) + ": recompute, " +
                  to_string(core_tiles_n(p)) +
                  (combine ? " column tiles combined by a kernel between the sweeps"
                           : " column tiles combined in the second sweep");
  } else if (rescales_in_launch(p)) {
    plan.plan = SoftmaxPlan::rows_rescale_in_launch;
    plan.reason = "bf16 -> fp32 rows with " + k + " >= " + to_string(t::kRescaleInLaunchMinK) +
                  ": rescaled in the launch";
  } else if (p.out == DType::f32 && p.n <= shapes::kRowPassMaxCols) {
    plan.plan = SoftmaxPlan::rows_scores_then_pass;
    plan.reason =
        "rows with " + k + " past the recompute range, fp32 output: scores, then a pass per row";
  } else {
    plan.plan = SoftmaxPlan::rows_exps_then_pass;
    plan.reason = "rows with " + k + " past the recompute range" +
                  (p.out == DType::f32 ? ", n > 16384" : ", 16-bit output") +
                  ": exps, then a combine-and-rescale pass";
  }
  return plan;
}

MatmulSoftmaxPlan one_launch_plan(const MatmulProblem& p, SoftmaxDim dim) {
  // The tile statistics fit in the output buffer (written only after they are read)
  // unless it is tiny or not 8-byte aligned.
  const std::int64_t stats_bytes =
      shapes::one_launch_stats_bytes(p.m, p.n, dim == SoftmaxDim::rows);
  const std::int64_t out_bytes = p.m * p.n * static_cast<std::int64_t>(dtype_bytes(p.out));
  const bool in_out = stats_bytes <= out_bytes && reinterpret_cast<std::uintptr_t>(p.c) % 8 == 0;
  MatmulSoftmaxPlan plan;
  plan.plan = in_out ? SoftmaxPlan::one_launch : SoftmaxPlan::one_launch_scratch_stats;
  plan.reason = to_string(shapes::one_launch_tiles(p.m, p.n)) +
                " tiles of 64x64 in one cooperative launch" +
                (in_out ? "" : ", statistics in scratch (output too small or not 8-byte aligned)");
  return plan;
}

MatmulSoftmaxPlan split_k_plan(const MatmulProblem& p, SoftmaxDim dim, int sms) {
  MatmulSoftmaxPlan plan;
  plan.plan = dim == SoftmaxDim::rows ? SoftmaxPlan::split_k_rows : SoftmaxPlan::split_k_cols;
  plan.k_splits = k_split_count(p, sms);
  const std::int64_t tiles = ((p.m + shapes::kSwappedBlockM - 1) / shapes::kSwappedBlockM) *
                             ((p.n + shapes::kSwappedBlockN - 1) / shapes::kSwappedBlockN);
  plan.reason = to_string(tiles) + " tiles of 256x128 on " + to_string(sms) + " SMs: k cut into " +
                to_string(plan.k_splits) + " ranges";
  return plan;
}

MatmulSoftmaxPlan named(SoftmaxPlan which, std::string reason) {
  MatmulSoftmaxPlan plan;
  plan.plan = which;
  plan.reason = std::move(reason);
  return plan;
}

MatmulSoftmaxPlan refused(const std::string& message) {
  MatmulSoftmaxPlan plan;
  plan.refusal = "matmul_softmax: " + message;
  return plan;
}

MatmulSoftmaxPlan automatic_plan(const MatmulProblem& p, const SoftmaxPlanRequest& r,
                                 const SoftmaxPlanDevice& d) {
  // one_launch is an mma.sync kernel: it stands in for the automatic and sm80 paths.
  const bool small = work(p) <= t::kOneLaunchMaxWork &&
                     (r.path == MatmulPath::automatic || r.path == MatmulPath::sm80);
  const bool clusters = cluster_rows_refusal(p, r, d).empty() && cluster_rows_pays(p, d);
  const bool groups = !clusters && group_rows_refusal(p, r, d).empty() && group_rows_pays(p);
  const bool clusters_first =
      clusters && p.in == DType::bf16 && work(p) >= t::kClustersBeforeOneLaunchWork;
  if (split_k_refusal(p, r, d).empty() && split_k_pays(p, r.dim, k_split_count(p, d.sms))) {
    return split_k_plan(p, r.dim, d.sms);
  }
  if (small && !clusters_first && one_launch_refusal(p, d).empty())
    return one_launch_plan(p, r.dim);
  if (clusters) {
    return named(
        SoftmaxPlan::cluster_rows,
        to_string(core_tiles_n(p)) + " column tiles in a cluster, " +
            (b_resident(p, d.sms) ? "B-resident" : "every 128-row tile's cluster resident"));
  }
  if (groups) {
    return named(SoftmaxPlan::group_rows,
                 to_string(core_tiles_n(p)) +
                     " column tiles per group, more 128-row tiles than resident clusters");
  }
  if (fused_supported(p, r.path, d.arch)) return sweeps_plan(p, r.dim);
  std::string why = "not fused: " + sm90_refusal(p, r.path, d.arch);
  if (small) why += "; one launch: " + one_launch_refusal(p, d);
  return named(SoftmaxPlan::unfused, why);
}

}  // namespace

const char* softmax_scheme_name(SoftmaxScheme s) {
  switch (s) {
    case SoftmaxScheme::automatic:
      return "automatic";
    case SoftmaxScheme::one_launch:
      return "one_launch";
    case SoftmaxScheme::sweeps:
      return "sweeps";
    case SoftmaxScheme::cluster_rows:
      return "cluster_rows";
    case SoftmaxScheme::group_rows:
      return "group_rows";
    case SoftmaxScheme::split_k:
      return "split_k";
    case SoftmaxScheme::unfused:
      return "unfused";
  }
  return "?";
}

const char* softmax_plan_name(SoftmaxPlan p) {
  switch (p) {
    case SoftmaxPlan::one_launch:
      return "one_launch";
    case SoftmaxPlan::one_launch_scratch_stats:
      return "one_launch_scratch_stats";
    case SoftmaxPlan::split_k_rows:
      return "split_k_rows";
    case SoftmaxPlan::split_k_cols:
      return "split_k_cols";
    case SoftmaxPlan::cluster_rows:
      return "cluster_rows";
    case SoftmaxPlan::group_rows:
      return "group_rows";
    case SoftmaxPlan::rows_recompute:
      return "rows_recompute";
    case SoftmaxPlan::rows_recompute_combine:
      return "rows_recompute_combine";
    case SoftmaxPlan::rows_scores_then_pass:
      return "rows_scores_then_pass";
    case SoftmaxPlan::rows_exps_then_pass:
      return "rows_exps_then_pass";
    case SoftmaxPlan::rows_rescale_in_launch:
      return "rows_rescale_in_launch";
    case SoftmaxPlan::swapped_rows_scores_then_pass:
      return "swapped_rows_scores_then_pass";
    case SoftmaxPlan::swapped_rows_scores_beside_pass:
      return "swapped_rows_scores_beside_pass";
    case SoftmaxPlan::swapped_rows_exps_then_pass:
      return "swapped_rows_exps_then_pass";
    case SoftmaxPlan::swapped_rows_exps_beside_pass:
      return "swapped_rows_exps_beside_pass";
    case SoftmaxPlan::swapped_cols_recompute:
      return "swapped_cols_recompute";
    case SoftmaxPlan::swapped_cols_rescale:
      return "swapped_cols_rescale";
    case SoftmaxPlan::unfused:
      return "unfused";
  }
  return "?";
}

SoftmaxScheme softmax_plan_scheme(SoftmaxPlan p) {
  switch (p) {
    case SoftmaxPlan::one_launch:
    case SoftmaxPlan::one_launch_scratch_stats:
      return SoftmaxScheme::one_launch;
    case SoftmaxPlan::split_k_rows:
    case SoftmaxPlan::split_k_cols:
      return SoftmaxScheme::split_k;
    case SoftmaxPlan::cluster_rows:
      return SoftmaxScheme::cluster_rows;
    case SoftmaxPlan::group_rows:
      return SoftmaxScheme::group_rows;
    case SoftmaxPlan::unfused:
      return SoftmaxScheme::unfused;
    default:
      return SoftmaxScheme::sweeps;
  }
}

SoftmaxPlanQueries softmax_plan_queries(const MatmulProblem& p, const SoftmaxPlanRequest& r,
                                        int arch) {
  SoftmaxPlanQueries q;
  const bool automatic = r.scheme == SoftmaxScheme::automatic;
  const bool small = work(p) <= t::kOneLaunchMaxWork &&
                     (r.path == MatmulPath::automatic || r.path == MatmulPath::sm80);
  q.one_launch_ctas = fused_types(p) && arch >= 80 &&
                      (r.scheme == SoftmaxScheme::one_launch || (automatic && small));
  q.cluster_rows_clusters = (automatic || r.scheme == SoftmaxScheme::cluster_rows) &&
                            one_sweep_rows_refusal(p, r, arch).empty() &&
                            core_tiles_n(p) <= shapes::kClusterRowsMaxSize;
  return q;
}

MatmulSoftmaxPlan plan_matmul_softmax(const MatmulProblem& p, const SoftmaxPlanRequest& r,
                                      const SoftmaxPlanDevice& d) {
  std::string why;
  switch (r.scheme) {
    case SoftmaxScheme::automatic:
      return automatic_plan(p, r, d);
    case SoftmaxScheme::one_launch:
      why = one_launch_refusal(p, d);
      if (!why.empty()) return refused("the one-launch scheme cannot take this problem: " + why);
      return one_launch_plan(p, r.dim);
    case SoftmaxScheme::cluster_rows:
      why = cluster_rows_refusal(p, r, d);
      if (!why.empty()) return refused("the cluster_rows scheme cannot take this problem: " + why);
      return named(SoftmaxPlan::cluster_rows, "requested");
    case SoftmaxScheme::group_rows:
      why = group_rows_refusal(p, r, d);
      if (!why.empty()) return refused("the group_rows scheme cannot take this problem: " + why);
      return named(SoftmaxPlan::group_rows, "requested");
    case SoftmaxScheme::split_k:
      why = split_k_refusal(p, r, d);
      if (!why.empty()) return refused("the split_k scheme cannot take this problem: " + why);
      return split_k_plan(p, r.dim, d.sms);
    case SoftmaxScheme::sweeps:
      if (!fused_supported(p, r.path, d.arch))
        return refused(std::string("the sweeps scheme needs ") + kFusedSm90Needs);
      return sweeps_plan(p, r.dim);
    case SoftmaxScheme::unfused:
      return named(SoftmaxPlan::unfused, "requested");
  }
  return refused("unknown scheme");
}

}  // namespace flopline::kernels
