// How matmul_softmax computes softmax(A x B): the schemes a caller can ask for by name,
// the launch sequences (plans) they run, and the pure function that picks one for a
// problem on a device. Plain C++ (no CUDA): the choice is tested without a GPU, and
// docs/KERNELS.md has the table of shapes and plans.
#pragma once

#include <cstdint>
#include <string>

#include "flopline/kernels/checks.h"

namespace flopline::kernels {

// What a caller asks for (MatmulSoftmaxOptions::scheme); a scheme that cannot take the
// problem is a KernelError.
enum class SoftmaxScheme {
  automatic,     // the plan picks (below)
  one_launch,    // sm_80+, one resident CTA per 64x64 tile: one cooperative launch, the
                 // scores stay in registers
  sweeps,        // Hopper (sm90 path): wgmma sweeps with the softmax in their epilogue
  cluster_rows,  // Hopper, rows over at most 16 column tiles of 256: one sweep, the CTAs
                 // of a cluster share a row's statistics, only the output is written
  group_rows,    // Hopper, rows over at most one column tile of 256 per SM: as cluster
                 // rows, but groups of a cooperative launch share them through L2
  split_k,       // Hopper, problems of few tiles: k cut into ranges on CTAs of their own,
                 // then one pass adds the partial scores and writes the softmax
  unfused,       // the matmul into scratch memory, then the standalone softmax
};
const char* softmax_scheme_name(SoftmaxScheme s);

// The launch sequences behind the schemes. "Core": the sm90 core (sm90_gemm.cuh, 128x256
// tiles, B read transposed by wgmma; tf32 needs B^T made first, one more launch);
// "swapped": the swapped core (C^T = B^T A^T, 256x128 tiles, B as it is). A pass "beside"
// the sweep starts on the SMs its last wave leaves idle and waits for each row block.
enum class SoftmaxPlan {
  one_launch,                // one cooperative mma.sync launch, tile statistics in the output
  one_launch_scratch_stats,  // the same, statistics in scratch (output too small or misaligned)
  split_k_rows,              // swapped core over (k range, tile) items into scratch slabs; a
                             // pass per row adds them and writes the softmax
  split_k_cols,              // the same sweep; the column softmax adds the slabs as it reads
  cluster_rows,              // one core sweep in clusters of a row of tiles (tf32: after B^T)
  group_rows,      // one cooperative core sweep, groups exchange through L2 (tf32: after B^T)
  rows_recompute,  // core: statistics sweep, then a normalizing sweep that combines
                   // the row's statistics itself (tf32: after B^T)
  rows_recompute_combine,           // core: statistics sweep, combine kernel, normalizing sweep
  rows_scores_then_pass,            // core: sweep stores scores and block maxima; a pass per row
  rows_exps_then_pass,              // core: sweep stores exp(s - block max) and block statistics; a
                                    // pass per row combines and rescales
  rows_rescale_in_launch,           // core, bf16 -> fp32: one cooperative launch whose producer
                                    // warps rescale each row block once it is in memory
  swapped_rows_scores_then_pass,    // tf32: swapped sweep stores scores and tile maxima; a pass per
                                    // row after it
  swapped_rows_scores_beside_pass,  // the same, the pass beside the sweep
  swapped_rows_exps_then_pass,      // tf32, n > 16384: swapped sweep stores exps and tile
                                    // statistics; a combine-and-rescale pass after it
  swapped_rows_exps_beside_pass,    // the same, the pass beside the sweep
  swapped_cols_recompute,           // swapped statistics sweep, combine kernel, normalizing sweep
  swapped_cols_rescale,  // swapped sweep stores exps and statistics, combine, rescale pass
  unfused,               // matmul into fp32 scratch, then the standalone softmax
};
const char* softmax_plan_name(SoftmaxPlan p);
// The scheme a plan belongs to (automatic never).
SoftmaxScheme softmax_plan_scheme(SoftmaxPlan p);

// What the plan needs to know about the device for one problem. matmul_softmax asks the
// CUDA runtime (only for what softmax_plan_queries names); tests give it by hand.
struct SoftmaxPlanDevice {
  int arch = 0;  // 10*major+minor
  int sms = 1;   // multiprocessors
  // CTAs of the problem's one-launch kernel the device keeps resident at once (0: none,
  // or no cooperative launch).
  std::int64_t one_launch_ctas = 0;
  // Clusters of one row of column tiles (tiles_n CTAs) of the problem's cluster-rows
  // kernel the device keeps resident at once (0: it runs no such cluster).
  int cluster_rows_clusters = 0;
};

// What matmul_softmax was asked for.
struct SoftmaxPlanRequest {
  SoftmaxDim dim = SoftmaxDim::rows;
  MatmulPath path = MatmulPath::automatic;
  SoftmaxScheme scheme = SoftmaxScheme::automatic;
};

// Which of SoftmaxPlanDevice's occupancy answers the plan reads for this request (the
// launcher asks the runtime for those only: the cluster query needs an sm_90 device).
struct SoftmaxPlanQueries {
  bool one_launch_ctas = false;
  bool cluster_rows_clusters = false;
};
SoftmaxPlanQueries softmax_plan_queries(const MatmulProblem& p, const SoftmaxPlanRequest& request,
                                        int arch);

struct MatmulSoftmaxPlan {
  SoftmaxPlan plan = SoftmaxPlan::unfused;
  int k_splits = 1;     // the split_k plans: how many k ranges
  std::string reason;   // one line: why this plan
  std::string refusal;  // not empty: the requested scheme cannot take the problem, and
                        // this is the KernelError's message (plan and reason unset)
};

// The plan for a problem that check_matmul_path accepted (the pointers matter only for
// their alignment). A pure function: the same inputs give the same plan on any machine.
MatmulSoftmaxPlan plan_matmul_softmax(const MatmulProblem& p, const SoftmaxPlanRequest& request,
                                      const SoftmaxPlanDevice& device);

}  // namespace flopline::kernels
