// The devices and the shape -> plan table of the matmul_softmax plan tests: the unit
// tests run the plan on these devices' numbers without a GPU; the GPU test
// (tests/gpu/kernels/test_softmax_plan.cu) checks on a real H100/H200 or A100 that the
// device's own numbers give the same plans, so the numbers below stay honest.
#pragma once

#include <cstdint>
#include <vector>

#include "flopline/kernels/softmax_plan.h"

namespace flopline::kernels::plan_cases {

// A device as the plan sees it. Clusters of s CTAs (one CTA per SM, the cluster-rows
// kernels' shared memory allows no more) fit within a GPC: sum over the GPCs of
// floor(SMs / s). The GPC sizes are one layout that gives the cluster counts
// cudaOccupancyMaxActiveClusters reports on the real devices (docs/KERNELS.md, "The
// plan"; the readings are in docs/results/).
struct DeviceModel {
  const char* name;
  int arch;
  int sms;
  int one_launch_ctas_per_sm;  // the one-launch kernel: 256 threads, 113-121 registers
  std::vector<int> gpc_sms;
  int max_cluster;  // 16 with the non-portable opt-in
};

inline const DeviceModel kH100{"H100", 90, 132, 2, {18, 18, 18, 18, 18, 16, 16, 10}, 16};
inline const DeviceModel kH200{"H200", 90, 132, 2, {18, 18, 18, 18, 18, 16, 16, 10},
                               16};  // H100's SMs, more memory
inline const DeviceModel kA100{"A100", 80, 108, 2, {14, 14, 14, 14, 14, 14, 12, 12}, 16};

inline int resident_clusters(const DeviceModel& d, std::int64_t size) {
  if (size < 1 || size > d.max_cluster) return 0;
  int clusters = 0;
  for (int g : d.gpc_sms) clusters += g / static_cast<int>(size);
  return clusters;
}

// What matmul_softmax would ask the runtime for this problem on the device.
inline SoftmaxPlanDevice device_numbers(const DeviceModel& d, const MatmulProblem& p) {
  SoftmaxPlanDevice n;
  n.arch = d.arch;
  n.sms = d.sms;
  const bool one_launch_types = p.in == DType::tf32 || p.in == DType::bf16;
  n.one_launch_ctas =
      one_launch_types ? static_cast<std::int64_t>(d.one_launch_ctas_per_sm) * d.sms : 0;
  n.cluster_rows_clusters = resident_clusters(d, (p.n + 255) / 256);
  return n;
}

struct Case {
  std::int64_t m, n, k;
  DType in, out;
  SoftmaxDim dim;
  SoftmaxScheme scheme;
  SoftmaxPlan hopper;   // H100 and H200
  int hopper_k_splits;  // split_k plans; 1 otherwise
  SoftmaxPlan a100;     // the sm_80 device; kRefused: the scheme asked for cannot run there
};

// The scheme asked for refuses the problem (KernelError), as the sweeps do on an A100.
constexpr SoftmaxPlan kRefused = static_cast<SoftmaxPlan>(-1);

// Problems on 256-byte aligned buffers (the GPU test's fake pointers too).
inline MatmulProblem problem(const Case& c) {
  MatmulProblem p;
  p.a = reinterpret_cast<const void*>(std::uintptr_t{0x10000000});
  p.b = reinterpret_cast<const void*>(std::uintptr_t{0x20000000});
  p.c = reinterpret_cast<void*>(std::uintptr_t{0x30000000});
  p.m = c.m;
  p.n = c.n;
  p.k = c.k;
  p.in = c.in;
  p.out = c.out;
  return p;
}

namespace t {
constexpr DType tf32 = DType::tf32, bf16 = DType::bf16, f32 = DType::f32, f16 = DType::f16;
constexpr SoftmaxDim rows = SoftmaxDim::rows, cols = SoftmaxDim::cols;
constexpr SoftmaxScheme automatic = SoftmaxScheme::automatic, sweeps = SoftmaxScheme::sweeps;
using P = SoftmaxPlan;
}  // namespace t

// Each line: the problem, the scheme asked for, the plan on an H100/H200 (and its k
// ranges), the plan on an A100. docs/KERNELS.md's table is this one.
inline const std::vector<Case>& cases() {
  using namespace t;
  static const std::vector<Case> table = {
      // Anchors of the benchmarks.
      {4096, 4096, 4096, tf32, f32, rows, automatic, P::swapped_rows_scores_beside_pass, 1,
       P::unfused},
      {4096, 4096, 4096, bf16, f32, rows, automatic, P::rows_rescale_in_launch, 1, P::unfused},
      {4096, 4096, 4096, bf16, bf16, rows, automatic, P::rows_exps_then_pass, 1, P::unfused},
      {8192, 8192, 1024, tf32, f32, rows, automatic, P::swapped_rows_scores_then_pass, 1,
       P::unfused},
      {8192, 8192, 1024, bf16, f32, rows, automatic, P::rows_scores_then_pass, 1, P::unfused},
      {8192, 8192, 1024, bf16, bf16, rows, automatic, P::rows_exps_then_pass, 1, P::unfused},
      {8192, 8192, 512, bf16, f32, rows, automatic, P::rows_recompute_combine, 1, P::unfused},
      {16384, 2048, 128, tf32, f32, rows, automatic, P::cluster_rows, 1, P::unfused},
      {16384, 1024, 64, bf16, bf16, rows, automatic, P::cluster_rows, 1, P::unfused},
      {16384, 2048, 128, tf32, f32, cols, automatic, P::swapped_cols_recompute, 1, P::unfused},
      {4096, 4096, 4096, tf32, f32, cols, automatic, P::swapped_cols_rescale, 1, P::unfused},
      {4096, 4096, 4096, bf16, bf16, cols, automatic, P::swapped_cols_rescale, 1, P::unfused},
      // Row tiles against resident clusters (15 of 8 columns tiles): group rows past them.
      {2048, 2048, 2048, bf16, f32, rows, automatic, P::group_rows, 1, P::unfused},
      {1920, 2048, 2048, bf16, f32, rows, automatic, P::cluster_rows, 1, P::unfused},
      {4096, 2048, 512, tf32, f32, rows, automatic, P::group_rows, 1, P::unfused},
      {2048, 2048, 2048, tf32, f32, rows, automatic, P::swapped_rows_scores_then_pass, 1,
       P::unfused},
      {8192, 2048, 2048, bf16, bf16, rows, automatic, P::group_rows, 1, P::unfused},
      {4096, 4096, 1024, bf16, bf16, rows, automatic, P::rows_exps_then_pass, 1, P::unfused},
      // Few tiles: split k; small problems: the one launch (A100: up to 216 CTAs).
      {1024, 1024, 1024, tf32, f32, rows, automatic, P::split_k_rows, 4, P::unfused},
      {1024, 1024, 1024, bf16, bf16, rows, automatic, P::split_k_rows, 4, P::unfused},
      {1024, 1024, 4096, tf32, f32, cols, automatic, P::split_k_cols, 4, P::unfused},
      {1024, 1024, 1024, tf32, f32, cols, automatic, P::swapped_cols_rescale, 1, P::unfused},
      {2048, 1024, 1024, bf16, bf16, rows, automatic, P::cluster_rows, 1, P::unfused},
      {512, 512, 512, tf32, f32, rows, automatic, P::split_k_rows, 4, P::one_launch},
      {1024, 896, 256, tf32, f32, rows, automatic, P::split_k_rows, 2, P::unfused},
      {1024, 832, 256, tf32, f32, rows, automatic, P::split_k_rows, 2, P::one_launch},
      {256, 256, 256, tf32, f32, rows, automatic, P::one_launch, 1, P::one_launch},
      {256, 256, 256, bf16, bf16, rows, automatic, P::cluster_rows, 1, P::one_launch},
      {128, 128, 128, bf16, bf16, rows, automatic, P::one_launch, 1, P::one_launch},
      {128, 128, 128, bf16, f32, cols, automatic, P::one_launch, 1, P::one_launch},
      {1, 1, 1, tf32, f32, rows, automatic, P::one_launch_scratch_stats, 1,
       P::one_launch_scratch_stats},
      {1, 8, 8, bf16, bf16, cols, automatic, P::one_launch_scratch_stats, 1,
       P::one_launch_scratch_stats},
      // Rows wider than the row pass's registers.
      {300, 16392, 400, tf32, f32, rows, automatic, P::swapped_rows_exps_then_pass, 1, P::unfused},
      {300, 16392, 4096, tf32, f32, rows, automatic, P::swapped_rows_exps_beside_pass, 1,
       P::unfused},
      {1024, 20480, 1024, bf16, f32, rows, automatic, P::rows_exps_then_pass, 1, P::unfused},
      // The sweeps by name where the automatic choice takes another scheme.
      {2048, 2248, 200, bf16, bf16, rows, sweeps, P::rows_recompute, 1, kRefused},
      {2120, 2248, 392, bf16, bf16, rows, sweeps, P::rows_exps_then_pass, 1, kRefused},
      {2120, 2248, 768, bf16, f32, rows, sweeps, P::rows_recompute, 1, kRefused},
      {2120, 2248, 776, bf16, f32, rows, sweeps, P::rows_scores_then_pass, 1, kRefused},
      {4500, 1000, 2048, bf16, f32, rows, sweeps, P::rows_rescale_in_launch, 1, kRefused},
      {4500, 1000, 360, tf32, f32, rows, sweeps, P::swapped_rows_scores_then_pass, 1, kRefused},
      {4500, 1000, 96, tf32, f32, cols, sweeps, P::swapped_cols_recompute, 1, kRefused},
      // Types and shapes no fused scheme takes.
      {4096, 4096, 4096, f16, f16, rows, automatic, P::unfused, 1, P::unfused},
      {4096, 4096, 4096, f32, f32, rows, automatic, P::unfused, 1, P::unfused},
      {4097, 4097, 4097, bf16, bf16, rows, automatic, P::unfused, 1, P::unfused},
  };
  return table;
}

}  // namespace flopline::kernels::plan_cases
