// matmul_softmax(): softmax(A x B) over rows or columns. plan_matmul_softmax
// (matmul_softmax_plan.cc, plain C++) picks the launch sequence from the problem and the
// device's numbers; this file asks the CUDA runtime for those numbers and runs the plan.
// The schemes, in short (docs/KERNELS.md has the details and the shape -> plan table):
//  - one launch (softmax_one_launch.cu): small problems, every 64x64 tile on a resident
//    CTA of one cooperative launch, the scores in registers; any sm_80+ device.
//  - split k (Hopper): problems of few tiles cut k into ranges on CTAs of their own; one
//    pass adds the partial scores and makes the softmax.
//  - cluster rows / group rows (Hopper, rows over at most 16 column tiles): one sweep, a
//    row's statistics shared in distributed shared memory or through L2.
//  - sweeps (Hopper): the softmax in the matmul's epilogue. Recompute for small k (a
//    statistics sweep, then a normalizing sweep: the scores never touch memory), rescale
//    otherwise (one sweep, then one pass per row over the output, or the rescale inside
//    the sweep's launch). Rows on the transposing core (tf32 past the recompute range on
//    the swapped core, which needs no B^T), columns on the swapped core, where a column's
//    statistics over a 256-row tile stay in a quad of lanes.
//  - unfused (any device, shape or type): the matmul into scratch, then the standalone
//    softmax.
#include <cuda_bf16.h>

#include <optional>
#include <string>
#include <type_traits>

#include "device_facts.h"
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

using detail::Scratch;

// Clusters of the cluster_rows kernel for p that the device keeps resident (0: none).
template <class OutT>
int cluster_rows_capacity_for(const MatmulProblem& p) {
  using E = sm90::ClusterRowsEpilogue<OutT>;
  return p.in == DType::tf32 ? detail::sm90_cluster_capacity<sm90::Tf32Operands, E>(p)
                             : detail::sm90_cluster_capacity<sm90::Bf16Operands, E>(p);
}
int cluster_rows_capacity(const MatmulProblem& p) {
  return p.out == DType::bf16 ? cluster_rows_capacity_for<__nv_bfloat16>(p)
                              : cluster_rows_capacity_for<float>(p);
}

// The device's numbers the plan reads for this request; the occupancy queries only where
// the plan asks (the cluster query needs the sm90 kernels to run on this device).
SoftmaxPlanDevice plan_device(const MatmulProblem& p, const SoftmaxPlanRequest& request) {
  const detail::DeviceFacts facts = detail::current_device_facts();
  SoftmaxPlanDevice d;
  d.arch = facts.arch;
  d.sms = facts.sms;
  const SoftmaxPlanQueries asks = softmax_plan_queries(p, request, facts.arch);
  if (asks.one_launch_ctas) d.one_launch_ctas = detail::one_launch_capacity(p);
  if (asks.cluster_rows_clusters) d.cluster_rows_clusters = cluster_rows_capacity(p);
  return d;
}

void one_launch(const MatmulProblem& p, bool rows, bool stats_in_output, cudaStream_t stream) {
  if (stats_in_output) {
    detail::launch_matmul_softmax_one_launch(p, rows, static_cast<float2*>(p.c), true, stream);
  } else {
    const auto bytes = static_cast<std::size_t>(shapes::one_launch_stats_bytes(p.m, p.n, rows));
    Scratch partial(bytes, stream, "tile statistics");
    detail::launch_matmul_softmax_one_launch(p, rows, partial.as<float2>(), false, stream);
  }
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
  Scratch partial(static_cast<std::size_t>(p.m) * tiles_n * sizeof(float2), stream,
                  "row block statistics");
  Scratch arrived(blocks64 * sizeof(unsigned), stream, "row block arrivals");
  clear_counts(arrived, blocks64, stream, "group rows: clearing the arrivals");
  const sm90::GroupRowsEpilogue<OutT> e{static_cast<OutT*>(p.c), static_cast<int>(p.m),
                                        static_cast<int>(p.n),   partial.as<float2>(),
                                        arrived.as<unsigned>(),  tiles_n};
  if (p.in == DType::tf32) {
    detail::launch_sm90_tf32(p, stream, e);  // B transposed into scratch first
  } else {
    detail::launch_sm90_core<sm90::Bf16Operands>(p, p.b, stream, e);
  }
}

// Rows in one sweep: a cluster of CTAs holds a whole row of tiles (softmax_cluster_rows.cuh).
template <class OutT>
void cluster_rows(const MatmulProblem& p, cudaStream_t stream) {
  const sm90::ClusterRowsEpilogue<OutT> e{static_cast<OutT*>(p.c), static_cast<int>(p.m),
                                          static_cast<int>(p.n)};
  if (p.in == DType::tf32) {
    detail::launch_sm90_tf32(p, stream, e);  // B transposed into scratch first
  } else {
    detail::launch_sm90_core<sm90::Bf16Operands>(p, p.b, stream, e);
  }
}

// One sweep of the matmul with the softmax epilogue; b_operand is B, or for tf32 the
// B^T that wgmma reads (made once by swept_rows for both sweeps of the recompute scheme).
template <class Epilogue>
void run_sweep(const MatmulProblem& p, const void* b_operand, cudaStream_t stream,
               const Epilogue& epilogue) {
  if (p.in == DType::tf32) {
    detail::launch_sm90_core<sm90::Tf32Operands>(p, b_operand, stream, epilogue);
  } else {
    detail::launch_sm90_core<sm90::Bf16Operands>(p, b_operand, stream, epilogue);
  }
}

// Columns on the swapped core, which keeps column statistics per 256-row tile in-thread
// (softmax_swapped.cuh) instead of per 16 rows across lanes, and for tf32 needs no
// transpose of B. OutT: float, or __nv_bfloat16 with Bf16Swapped.
template <class Ops, class OutT>
void swapped_cols(const MatmulProblem& p, SoftmaxPlan plan, cudaStream_t stream) {
  namespace sw = sm90::swapped;
  const int blocks = static_cast<int>((p.m + sw::kBlockM - 1) / sw::kBlockM);
  const std::size_t count = static_cast<std::size_t>(blocks) * static_cast<std::size_t>(p.n);
  Scratch partial(count * sizeof(float2), stream, "column block statistics");
  Scratch final_stats(static_cast<std::size_t>(p.n) * sizeof(float2), stream, "column statistics");
  const int m = static_cast<int>(p.m), n = static_cast<int>(p.n);
  using sm90::SoftmaxPass;
  if (plan == SoftmaxPlan::swapped_cols_recompute) {
    detail::launch_sm90_swapped<Ops>(p, stream,
                                     sw::SwappedColsEpilogue<Ops, OutT, SoftmaxPass::stats>{
                                         m, n, partial.as<float2>(), nullptr});
    detail::combine_softmax_stats(partial.as<float2>(), final_stats.as<float2>(), nullptr, p.m, p.n,
                                  false, blocks, stream);
    detail::launch_sm90_swapped<Ops>(p, stream,
                                     sw::SwappedColsEpilogue<Ops, OutT, SoftmaxPass::normalize>{
                                         m, n, nullptr, final_stats.as<float2>()});
    return;
  }
  Scratch scales(count * sizeof(float), stream, "column block factors");
  detail::launch_sm90_swapped<Ops>(p, stream,
                                   sw::SwappedColsEpilogue<Ops, OutT, SoftmaxPass::stats_store_exp>{
                                       m, n, partial.as<float2>(), nullptr});
  detail::combine_softmax_stats(partial.as<float2>(), final_stats.as<float2>(), scales.as<float>(),
                                p.m, p.n, false, blocks, stream);
  detail::rescale_softmax_cols(p.c, p.out, scales.as<float>(), p.m, p.n, 8,
                               stream);  // 256-row blocks
}

// The rescale scheme's sweep with the rescale inside the same launch
// (softmax_rescale_in_launch.cuh): bf16 operands (B as it is), k past the B-resident
// range. `stats` carries the output, the shape and the statistics buffer.
void rescale_in_launch(const MatmulProblem& p, cudaStream_t stream,
                       const sm90::SoftmaxEpilogue<float>& stats) {
  const std::size_t tiles_m = static_cast<std::size_t>((p.m + sm90::kBlockM - 1) / sm90::kBlockM);
  Scratch written(tiles_m * sizeof(unsigned), stream, "row block counts");
  clear_counts(written, tiles_m, stream, "rows rescaled in launch: clearing the counts");
  sm90::RescaleInLaunchEpilogue<float> e{stats, written.as<unsigned>()};
  e.pass = sm90::SoftmaxPass::stats_store_exp;
  e.final_stats = nullptr;
  detail::launch_sm90_core<sm90::Bf16Operands>(p, p.b, stream, e);
}

// Rows on the transposing core (softmax_epilogue.cuh): the rows_* plans.
template <class OutT>
void swept_rows(const MatmulProblem& p, SoftmaxPlan plan, cudaStream_t stream) {
  const int tiles_n = static_cast<int>((p.n + sm90::kBlockN - 1) / sm90::kBlockN);
  Scratch partial(static_cast<std::size_t>(p.m) * tiles_n * sizeof(float2), stream,
                  "block statistics");
  sm90::SoftmaxEpilogue<OutT> e{static_cast<OutT*>(p.c),
                                static_cast<int>(p.m),
                                static_cast<int>(p.n),
                                sm90::SoftmaxPass::stats,
                                partial.as<float2>(),
                                nullptr,
                                tiles_n};
  // tf32 wgmma reads B K-major: transpose (and round) it once, for every sweep.
  std::optional<Scratch> bt;
  const void* b_operand = p.b;
  if (p.in == DType::tf32) {
    bt.emplace(static_cast<std::size_t>(p.n) * static_cast<std::size_t>(p.k) * 4, stream,
               "tf32 B^T");
    detail::transpose_to_tf32(static_cast<const float*>(p.b), bt->as<float>(), p.k, p.n, stream);
    b_operand = bt->as<float>();
  }
  if (plan == SoftmaxPlan::rows_recompute || plan == SoftmaxPlan::rows_recompute_combine) {
    run_sweep(p, b_operand, stream, e);
    // With few partials per row the second sweep combines them itself (final_stats null).
    std::optional<Scratch> final_stats;
    if (plan == SoftmaxPlan::rows_recompute_combine) {
      final_stats.emplace(static_cast<std::size_t>(p.m) * sizeof(float2), stream, "statistics");
      detail::combine_softmax_stats(partial.as<float2>(), final_stats->as<float2>(), nullptr, p.m,
                                    p.n, true, tiles_n, stream);
      e.final_stats = final_stats->as<float2>();
    }
    e.pass = sm90::SoftmaxPass::normalize;
    run_sweep(p, b_operand, stream, e);
  } else if (plan == SoftmaxPlan::rows_rescale_in_launch) {  // fp32 output only
    if constexpr (std::is_same_v<OutT, float>) rescale_in_launch(p, stream, e);
  } else if (plan == SoftmaxPlan::rows_scores_then_pass) {  // fp32 output only
    // The sweep stores the scores and their block maxima, and the pass does the exps
    // while it streams the rows (softmax_finish.cuh).
    e.pass = sm90::SoftmaxPass::store_scores;
    run_sweep(p, b_operand, stream, e);
    detail::softmax_rows_after_max(p.c, partial.as<float2>(), p.m, p.n, tiles_n, stream);
  } else {
    e.pass = sm90::SoftmaxPass::stats_store_exp;
    run_sweep(p, b_operand, stream, e);
    detail::combine_rescale_rows(p.c, p.out, partial.as<float2>(), p.m, p.n, tiles_n, 8,
                                 stream);  // 256 columns
  }
}

// tf32 rows past the recompute range on the swapped core, which needs no B^T: with
// n <= 16384 one sweep writes the raw scores and each row's max per 128-column tile
// (softmax_swapped_rows.cuh), then softmax_rows_after_max; wider rows write exp(s - tile
// max) and (max, sum) per tile, then the combine and the rescale. The *_beside_pass plans
// have the sweep count each 256-row block's tile halves as they land, and the pass start
// on whole row blocks while the sweep's last tiles run.
template <class Ops>
void swapped_rows(const MatmulProblem& p, SoftmaxPlan plan, cudaStream_t stream) {
  namespace sw = sm90::swapped;
  const int tiles_n = static_cast<int>((p.n + sw::kBlockN - 1) / sw::kBlockN);
  const std::size_t tiles_m = static_cast<std::size_t>((p.m + sw::kBlockM - 1) / sw::kBlockM);
  Scratch partial(static_cast<std::size_t>(p.m) * tiles_n * sizeof(float2), stream,
                  "block statistics");
  std::optional<Scratch> written;
  unsigned* counts = nullptr;
  if (plan == SoftmaxPlan::swapped_rows_scores_beside_pass ||
      plan == SoftmaxPlan::swapped_rows_exps_beside_pass) {
    written.emplace(tiles_m * sizeof(unsigned), stream, "row block counts");
    clear_counts(*written, tiles_m, stream, "tf32 rows: clearing the counts");
    counts = written->as<unsigned>();
  }
  const detail::WrittenRows rows{counts, 8, 2u * static_cast<unsigned>(tiles_n)};
  if (plan == SoftmaxPlan::swapped_rows_scores_then_pass ||
      plan == SoftmaxPlan::swapped_rows_scores_beside_pass) {
    // The sweep stores the raw scores and the tile maxima; the pass does the exps.
    detail::launch_sm90_swapped<Ops>(
        p, stream,
        sw::SwappedRowsEpilogue<Ops, true>{static_cast<int>(p.m), static_cast<int>(p.n),
                                           partial.as<float2>(), counts});
    detail::softmax_rows_after_max(p.c, partial.as<float2>(), p.m, p.n, tiles_n, stream, rows);
  } else {
    detail::launch_sm90_swapped<Ops>(
        p, stream,
        sw::SwappedRowsEpilogue<Ops>{static_cast<int>(p.m), static_cast<int>(p.n),
                                     partial.as<float2>(), counts});
    detail::combine_rescale_rows(p.c, p.out, partial.as<float2>(), p.m, p.n, tiles_n, 7, stream,
                                 rows);  // 128 columns
  }
}

// Split k on the swapped core (tf32 needs no B^T there): k_splits slabs of partial
// scores, then the row pass (one block per row) or the column pass (the standalone
// column softmax's kernels reading the slabs' sums).
template <class Ops>
void split_k(const MatmulProblem& p, bool rows, int k_splits, cudaStream_t stream) {
  namespace sw = sm90::swapped;
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
    detail::softmax_rows_of_split_sums(p.c, p.out, partial.as<float>(), k_splits, slab_rows, p.m,
                                       p.n, stream);
  } else {
    detail::softmax_cols_of_split_sums(p.c, p.out, partial.as<float>(), k_splits, slab_rows, p.m,
                                       p.n, stream);
  }
}

// Any device and shape: matmul into fp32 scratch, then the standalone softmax.
void unfused(const MatmulProblem& p, const MatmulSoftmaxOptions& o) {
  Scratch scores(static_cast<std::size_t>(p.m) * static_cast<std::size_t>(p.n) * 4, o.stream,
                 "scores");
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

// Launches the plan. The fused schemes are templates on the output type (bf16 or fp32).
void run_plan(const MatmulProblem& p, const MatmulSoftmaxOptions& o,
              const MatmulSoftmaxPlan& plan) {
  const bool rows = o.dim == SoftmaxDim::rows;
  auto by_output = [&](auto run) {
    if (p.out == DType::bf16) {
      run(__nv_bfloat16{});
    } else {
      run(float{});
    }
  };
  switch (plan.plan) {
    case SoftmaxPlan::one_launch:
    case SoftmaxPlan::one_launch_scratch_stats:
      one_launch(p, rows, plan.plan == SoftmaxPlan::one_launch, o.stream);
      return;
    case SoftmaxPlan::split_k_rows:
    case SoftmaxPlan::split_k_cols:
      if (p.in == DType::tf32) {
        split_k<sm90::swapped::Tf32Swapped>(p, rows, plan.k_splits, o.stream);
      } else {
        split_k<sm90::swapped::Bf16Swapped>(p, rows, plan.k_splits, o.stream);
      }
      return;
    case SoftmaxPlan::cluster_rows:
      by_output([&](auto out) { cluster_rows<decltype(out)>(p, o.stream); });
      return;
    case SoftmaxPlan::group_rows:
      by_output([&](auto out) { group_rows<decltype(out)>(p, o.stream); });
      return;
    case SoftmaxPlan::rows_recompute:
    case SoftmaxPlan::rows_recompute_combine:
    case SoftmaxPlan::rows_scores_then_pass:
    case SoftmaxPlan::rows_exps_then_pass:
    case SoftmaxPlan::rows_rescale_in_launch:
      by_output([&](auto out) { swept_rows<decltype(out)>(p, plan.plan, o.stream); });
      return;
    case SoftmaxPlan::swapped_rows_scores_then_pass:
    case SoftmaxPlan::swapped_rows_scores_beside_pass:
    case SoftmaxPlan::swapped_rows_exps_then_pass:
    case SoftmaxPlan::swapped_rows_exps_beside_pass:
      swapped_rows<sm90::swapped::Tf32Swapped>(p, plan.plan, o.stream);  // tf32 only
      return;
    case SoftmaxPlan::swapped_cols_recompute:
    case SoftmaxPlan::swapped_cols_rescale:
      if (p.in == DType::tf32) {  // fp32 output only
        swapped_cols<sm90::swapped::Tf32Swapped, float>(p, plan.plan, o.stream);
      } else {
        by_output([&](auto out) {
          swapped_cols<sm90::swapped::Bf16Swapped, decltype(out)>(p, plan.plan, o.stream);
        });
      }
      return;
    case SoftmaxPlan::unfused:
      unfused(p, o);
      return;
  }
}

}  // namespace

MatmulSoftmaxPlan matmul_softmax_plan(const MatmulProblem& p, const MatmulSoftmaxOptions& options) {
  check_matmul_path(p, options.path, current_arch());
  if (p.out != DType::f32 && p.out != DType::bf16 && p.out != DType::f16) {
    throw KernelError(std::string("matmul_softmax: unsupported output type ") + dtype_name(p.out));
  }
  const SoftmaxPlanRequest request{options.dim, options.path, options.scheme};
  MatmulSoftmaxPlan plan = plan_matmul_softmax(p, request, plan_device(p, request));
  if (!plan.refusal.empty()) throw KernelError(plan.refusal);
  return plan;
}

void matmul_softmax(const MatmulProblem& p, const MatmulSoftmaxOptions& options) {
  const MatmulSoftmaxPlan plan = matmul_softmax_plan(p, options);
  detail::OpRange range(matmul_softmax_cost(p.m, p.n, p.k, options.dim, p.in, p.out), options.range,
                        softmax_plan_name(plan.plan));
  run_plan(p, options, plan);
}

}  // namespace flopline::kernels
