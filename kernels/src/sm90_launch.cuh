// Host side of the sm90 core: makes the tensor maps (and B^T for tf32), sizes the grid
// and launches gemm_kernel<Ops, Epilogue>. Shared by the matmul and the fused softmax.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>

#include "device_facts.h"
#include "flopline/kernels/checks.h"
#include "matmul_launch.h"
#include "scratch.h"
#include "sm90_gemm.cuh"
#include "tensor_map.h"
#include "transpose.cuh"

namespace flopline::kernels::detail {

// The opt-in beyond 48 KB of dynamic shared memory is a property of the kernel, not of
// the launch: done once per kernel.
template <auto Kernel>
void reserve_shared_memory(int bytes) {
  static const cudaError_t attr = cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  if (attr != cudaSuccess) {
    throw CudaError(std::string("sm90 matmul: cannot reserve shared memory: ") + cudaGetErrorString(attr));
  }
}

template <class Ops, class Epilogue>
void launch_sm90_core(const MatmulProblem& p, const void* b_operand, cudaStream_t stream, const Epilogue& epilogue) {
  using T = sm90::Tile<Ops>;
  const int sms = current_device_facts().sms;
  const long tiles_m = (p.m + sm90::kBlockM - 1) / sm90::kBlockM;
  const long tiles_n = (p.n + sm90::kBlockN - 1) / sm90::kBlockN;
  const long k_tiles = (p.k + T::kBlockK - 1) / T::kBlockK;
  // Small k: keep B's column tile resident, stream only A and ping-pong the consumers
  // over 64-row tiles (see TileWalk).
  const bool resident = k_tiles <= T::kMaxResidentKTiles && tiles_n <= sms && tiles_m > 1;
  const CUtensorMap map_a =
      make_tensor_map_2d(p.a, p.m, p.k, p.in, resident ? T::kResidentRows : sm90::kBlockM, T::kBlockK);
  const CUtensorMap map_b = Ops::kBNMajor
                                ? make_tensor_map_2d(b_operand, p.k, p.n, p.in, T::kBlockK, 128 / Ops::kElemBytes)
                                : make_tensor_map_2d(b_operand, p.n, p.k, p.in, sm90::kBlockN, T::kBlockK);
  // Persistent CTAs, one per SM (the shared memory allows one). B-resident: per column
  // tile, as many CTAs as give each at least two 64-row tiles (one per consumer).
  long grid = tiles_m * tiles_n < sms ? tiles_m * tiles_n : sms;
  if (resident) grid = std::min<long>(sms / tiles_n, tiles_m) * tiles_n;
  const int smem_bytes = T::kSmemBytes;
  auto launch = [&](auto* kernel) {
    kernel<<<static_cast<unsigned>(grid), sm90::kThreads, static_cast<std::size_t>(smem_bytes), stream>>>(
        map_a, map_b, static_cast<int>(p.m), static_cast<int>(p.n), static_cast<int>(p.k), epilogue);
  };
  if (resident) {
    reserve_shared_memory<sm90::gemm_kernel<Ops, Epilogue, true>>(smem_bytes);
    launch(&sm90::gemm_kernel<Ops, Epilogue, true>);
  } else {
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

}  // namespace flopline::kernels::detail
