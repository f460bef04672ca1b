// Host side of the sm90 core: makes the tensor maps (and B^T for tf32), sizes the grid
// and launches gemm_kernel<Ops, Epilogue>. Shared by the matmul and the fused softmax.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <string>

#include "device_facts.h"
#include "flopline/kernels/checks.h"
#include "matmul_launch.h"
#include "scratch.h"
#include "sm90_gemm.cuh"
#include "sm90_gemm_swapped.cuh"
#include "tensor_map.h"
#include "transpose.cuh"

namespace flopline::kernels::detail {

// The opt-in beyond 48 KB of dynamic shared memory is a property of the kernel, not of
// the launch: done once per kernel.
template <auto Kernel>
void reserve_shared_memory(int bytes) {
  static const cudaError_t attr = [bytes] {
    const cudaError_t e =
        cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
    // A failed call leaves its error as the last error, where the next launch's check
    // would find it and blame itself.
    if (e != cudaSuccess) (void)cudaGetLastError();
    return e;
  }();
  if (attr != cudaSuccess) {
    throw CudaError(std::string("sm90 matmul: cannot reserve shared memory: ") +
                    cudaGetErrorString(attr));
  }
}

// A launch of `grid` CTAs of the sm90 core with one attribute; the configuration points
// at `attr`, which must outlive it.
inline cudaLaunchConfig_t sm90_launch_config(long grid, int smem_bytes, cudaStream_t stream,
                                             cudaLaunchAttribute* attr) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(static_cast<unsigned>(grid));
  config.blockDim = dim3(sm90::kThreads);
  config.dynamicSmemBytes = static_cast<std::size_t>(smem_bytes);
  config.stream = stream;
  config.attrs = attr;
  config.numAttrs = 1;
  return config;
}
// Clusters of `cluster_size` CTAs along x.
inline cudaLaunchAttribute cluster_attribute(int cluster_size) {
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = static_cast<unsigned>(cluster_size);
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  return attr;
}
// Every CTA resident at once, or the launch fails (groups wait on each other).
inline cudaLaunchAttribute cooperative_attribute() {
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeCooperative;
  attr.val.cooperative = 1;
  return attr;
}

// Clusters of `cluster_size` CTAs of Kernel that the device keeps resident at once (0: it
// cannot launch such clusters). Sizes above 8 need the kernel's non-portable opt-in.
// The occupancy query costs more host time than the launch: asked once per kernel and
// cluster size (smem_bytes follows from the cluster size), on the first device used.
template <auto Kernel>
int resident_clusters(int cluster_size, int smem_bytes) {
  static std::atomic<int> known[17] = {-1, -1, -1, -1, -1, -1, -1, -1, -1,
                                       -1, -1, -1, -1, -1, -1, -1, -1};
  if (cluster_size < 1 || cluster_size > 16) return 0;
  const int cached = known[cluster_size].load(std::memory_order_relaxed);
  if (cached >= 0) return cached;
  if (cluster_size > 8) {
    static const cudaError_t allow =
        cudaFuncSetAttribute(Kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    if (allow != cudaSuccess) return 0;
  }
  cudaLaunchAttribute attr = cluster_attribute(cluster_size);
  const cudaLaunchConfig_t config = sm90_launch_config(cluster_size, smem_bytes, nullptr, &attr);
  int clusters = 0;
  if (cudaOccupancyMaxActiveClusters(&clusters, Kernel, &config) != cudaSuccess) {
    (void)cudaGetLastError();  // a refusal here is an answer (0), not a sticky error
    clusters = 0;
  }
  known[cluster_size].store(clusters, std::memory_order_relaxed);
  return clusters;
}

// Shared memory of one CTA: the pipeline's, plus a clustered epilogue's own; a staged
// epilogue on a streaming run: one stage less, then its staging memory.
template <class Ops, class Epilogue>
int sm90_smem_bytes(long tiles_n, bool resident) {
  if constexpr (sm90::IsClustered<Epilogue>::value) {
    return sm90::Tile<Ops>::kSmemBytes +
           static_cast<int>(Epilogue::smem_bytes(static_cast<int>(tiles_n)));
  } else if constexpr (sm90::kStagesOutput<Epilogue>) {
    if (!resident) {
      return sm90::kStagingOffset<Ops, Epilogue> + Epilogue::kStagingBytes +
             sm90::RescaleSmemBytes<Epilogue>::value + 1024;  // + alignment slack
    }
    return sm90::Tile<Ops>::kSmemBytes;
  } else {
    return sm90::Tile<Ops>::kSmemBytes;
  }
}

// Whether B-resident (small k: B's column tile kept in shared memory, 64-row tiles
// ping-ponged between the consumers) runs this problem.
template <class Ops>
bool sm90_b_resident(const MatmulProblem& p) {
  return shapes::core_b_resident(p.m, p.n, p.k, sm90::Tile<Ops>::kBlockK,
                                 current_device_facts().sms);
}

// How many clusters of one row of tiles (tiles_n CTAs) a clustered epilogue gets on this
// device for this problem; 0 when it cannot run (more than kMaxClusterSize tiles along n,
// or the device refuses such clusters).
template <class Ops, class Epilogue>
int sm90_cluster_capacity(const MatmulProblem& p) {
  const long tiles_n = (p.n + sm90::kBlockN - 1) / sm90::kBlockN;
  if (tiles_n > Epilogue::kMaxClusterSize) return 0;
  const int cs = static_cast<int>(tiles_n);
  // The shared-memory opt-in is sized for the largest cluster, once per kernel.
  constexpr int most = sm90::Tile<Ops>::kSmemBytes +
                       static_cast<int>(Epilogue::smem_bytes(Epilogue::kMaxClusterSize));
  static_assert(most <= sm90::kMaxSmemPerCta,
                "the largest cluster's shared memory exceeds sm_90's opt-in");
  const int bytes = sm90_smem_bytes<Ops, Epilogue>(tiles_n, false);
  if (sm90_b_resident<Ops>(p)) {
    reserve_shared_memory<sm90::gemm_kernel<Ops, Epilogue, true>>(most);
    return resident_clusters<sm90::gemm_kernel<Ops, Epilogue, true>>(cs, bytes);
  }
  reserve_shared_memory<sm90::gemm_kernel<Ops, Epilogue, false>>(most);
  return resident_clusters<sm90::gemm_kernel<Ops, Epilogue, false>>(cs, bytes);
}

template <class Ops, class Epilogue>
void launch_sm90_core(const MatmulProblem& p, const void* b_operand, cudaStream_t stream,
                      const Epilogue& epilogue) {
  using T = sm90::Tile<Ops>;
  const int sms = current_device_facts().sms;
  const long tiles_m = (p.m + sm90::kBlockM - 1) / sm90::kBlockM;
  const long tiles_n = (p.n + sm90::kBlockN - 1) / sm90::kBlockN;
  // Small k: keep B's column tile resident, stream only A and ping-pong the consumers
  // over 64-row tiles (see TileWalk).
  const bool resident = sm90_b_resident<Ops>(p);
  const CUtensorMap map_a = make_tensor_map_2d(
      p.a, p.m, p.k, p.in, resident ? T::kResidentRows : sm90::kBlockM, T::kBlockK);
  const CUtensorMap map_b =
      Ops::kBNMajor
          ? make_tensor_map_2d(b_operand, p.k, p.n, p.in, T::kBlockK, 128 / Ops::kElemBytes)
          : make_tensor_map_2d(b_operand, p.n, p.k, p.in, sm90::kBlockN, T::kBlockK);
  // A staged epilogue's output map (otherwise unused: A's stands in).
  CUtensorMap map_c = map_a;
  if constexpr (sm90::kStagesOutput<Epilogue>) {
    map_c = make_tensor_map_2d(p.c, p.m, p.n, p.out, 64, Epilogue::kBoxCols);
  }
  // Persistent CTAs, one per SM (the shared memory allows one). B-resident: per column
  // tile, as many CTAs as give each at least two 64-row tiles (one per consumer).
  long grid = tiles_m * tiles_n < sms ? tiles_m * tiles_n : sms;
  constexpr bool grouped = sm90::IsGrouped<Epilogue>::value;
  // An epilogue that rescales in the launch needs the streaming schedule (the kernel
  // would leave its output unscaled on a B-resident run) and all CTAs resident.
  constexpr bool rescales = sm90::RescalesInLaunch<Epilogue>::value;
  if (rescales && resident)
    throw KernelError("sm90 matmul: the in-launch rescale needs k past the B-resident range");
  if (resident || grouped) grid = std::min<long>(sms / tiles_n, tiles_m) * tiles_n;
  if (grouped && grid == 0) {
    throw KernelError("sm90 matmul: " + std::to_string(tiles_n) +
                      " column tiles, more than the device's " + std::to_string(sms) + " SMs");
  }
  const int smem_bytes = sm90_smem_bytes<Ops, Epilogue>(tiles_n, resident);
  constexpr bool clustered = sm90::IsClustered<Epilogue>::value;
  if constexpr (clustered) {
    // One cluster per row of tiles, as many as stay resident (the CTAs of a cluster wait
    // on each other, and a cluster that waits for a free GPC would serialize the walk).
    const int clusters = sm90_cluster_capacity<Ops, Epilogue>(p);
    if (clusters == 0)
      throw KernelError("sm90 matmul: the device runs no cluster of " + std::to_string(tiles_n) +
                        " CTAs");
    grid = std::min<long>(clusters, tiles_m) * tiles_n;
  }
  auto launch = [&](auto* kernel) {
    if constexpr (clustered || grouped || rescales) {
      // Clusters of a row of tiles; groups and in-launch rescales on a cooperative
      // launch, which fails instead of running a grid whose CTAs could wait on CTAs that
      // never become resident.
      cudaLaunchAttribute attr =
          clustered ? cluster_attribute(static_cast<int>(tiles_n)) : cooperative_attribute();
      const cudaLaunchConfig_t config = sm90_launch_config(grid, smem_bytes, stream, &attr);
      const cudaError_t e =
          cudaLaunchKernelEx(&config, kernel, map_a, map_b, map_c, static_cast<int>(p.m),
                             static_cast<int>(p.n), static_cast<int>(p.k), epilogue);
      if (e != cudaSuccess) {
        (void)cudaGetLastError();  // not left for the next launch's check
        throw CudaError(std::string("sm90 matmul: ") + (clustered ? "cluster" : "cooperative") +
                        " launch: " + cudaGetErrorString(e));
      }
    } else {
      kernel<<<static_cast<unsigned>(grid), sm90::kThreads, static_cast<std::size_t>(smem_bytes),
               stream>>>(map_a, map_b, map_c, static_cast<int>(p.m), static_cast<int>(p.n),
                         static_cast<int>(p.k), epilogue);
    }
  };
  if (resident) {
    if constexpr (!clustered)
      reserve_shared_memory<sm90::gemm_kernel<Ops, Epilogue, true>>(smem_bytes);
    launch(&sm90::gemm_kernel<Ops, Epilogue, true>);
  } else {
    if constexpr (!clustered)
      reserve_shared_memory<sm90::gemm_kernel<Ops, Epilogue, false>>(smem_bytes);
    launch(&sm90::gemm_kernel<Ops, Epilogue, false>);
  }
  throw_if_launch_failed("sm90 matmul");
}

// tf32: B is transposed into a stream-ordered scratch buffer first (wgmma has no tf32
// transpose), freed on the stream after the launch.
template <class Epilogue>
void launch_sm90_tf32(const MatmulProblem& p, cudaStream_t stream, const Epilogue& epilogue) {
  Scratch bt(static_cast<std::size_t>(p.n) * static_cast<std::size_t>(p.k) * 4, stream, "tf32 B^T");
  transpose_to_tf32(static_cast<const float*>(p.b), bt.as<float>(), p.k, p.n, stream);
  launch_sm90_core<sm90::Tf32Operands>(p, bt.as<float>(), stream, epilogue);
}

// The swapped core (sm90_gemm_swapped.cuh): C^T = B^T A^T with B read as it is (tf32:
// no transpose of B; Ops: Tf32Swapped or Bf16Swapped); C (p.out: fp32, or bf16 with the
// bf16 operands) is stored by TMA from the staged output. An epilogue that splits k
// (sw::SplitsK) stores into p.c as k_splits slabs of the padded height, one per split.
template <class Ops, class Epilogue>
void launch_sm90_swapped(const MatmulProblem& p, cudaStream_t stream, const Epilogue& epilogue) {
  namespace sw = sm90::swapped;
  const long tiles_m = (p.m + sw::kBlockM - 1) / sw::kBlockM;
  long k_splits = 1;
  if constexpr (sw::SplitsK<Epilogue>::value) k_splits = epilogue.k_splits;
  const std::int64_t c_rows = k_splits > 1 ? k_splits * tiles_m * sw::kBlockM : p.m;
  const CUtensorMap map_a =
      make_tensor_map_2d(p.a, p.m, p.k, Ops::kType, sw::kBlockM, Ops::kBlockK);
  const CUtensorMap map_b = make_tensor_map_2d(p.b, p.k, p.n, Ops::kType, Ops::kBlockK, Ops::kBoxN);
  const CUtensorMap map_c = make_tensor_map_2d(p.c, c_rows, p.n, p.out, sw::kOutRows,
                                               128 / static_cast<int>(dtype_bytes(p.out)));
  const long items = tiles_m * ((p.n + sw::kBlockN - 1) / sw::kBlockN) * k_splits;
  const long grid = std::min<long>(items, current_device_facts().sms);
  constexpr auto kernel = &sw::gemm_swapped_kernel<Ops, Epilogue>;
  reserve_shared_memory<kernel>(sw::kSmemBytes);
  kernel<<<static_cast<unsigned>(grid), sm90::kThreads, sw::kSmemBytes, stream>>>(
      map_a, map_b, map_c, static_cast<int>(p.m), static_cast<int>(p.n), static_cast<int>(p.k),
      epilogue);
  throw_if_launch_failed("sm90 matmul (swapped)");
}

}  // namespace flopline::kernels::detail
