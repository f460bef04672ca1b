// Host side of the sm90 core: makes the tensor maps (and B^T for tf32), sizes the grid
// and launches gemm_kernel<Ops, Epilogue>. Shared by the matmul and the fused softmax.
#pragma once

#include <cuda_runtime_api.h>

#include "flopline/kernels/checks.h"
#include "matmul_launch.h"
#include "sm90_gemm.cuh"
#include "tensor_map.h"
#include "transpose.cuh"

namespace flopline::kernels::detail {

template <class Ops, class Epilogue>
void launch_sm90_core(const MatmulProblem& p, const void* b_operand, cudaStream_t stream, const Epilogue& epilogue) {
  using T = sm90::Tile<Ops>;
  const CUtensorMap map_a = make_tensor_map_2d(p.a, p.m, p.k, p.in, sm90::kBlockM, T::kBlockK);
  const CUtensorMap map_b = Ops::kBNMajor
                                ? make_tensor_map_2d(b_operand, p.k, p.n, p.in, T::kBlockK, 128 / Ops::kElemBytes)
                                : make_tensor_map_2d(b_operand, p.n, p.k, p.in, sm90::kBlockN, T::kBlockK);
  auto* kernel = &sm90::gemm_kernel<Ops, Epilogue>;
  // Once per instantiation: the opt-in beyond 48 KB of dynamic shared memory.
  static const cudaError_t attr =
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, T::kSmemBytes);
  if (attr != cudaSuccess) throw CudaError(std::string("sm90 matmul: cannot reserve shared memory: ") + cudaGetErrorString(attr));
  const long tiles = ((p.m + sm90::kBlockM - 1) / sm90::kBlockM) * ((p.n + sm90::kBlockN - 1) / sm90::kBlockN);
  kernel<<<static_cast<unsigned>(tiles), sm90::kThreads, T::kSmemBytes, stream>>>(
      map_a, map_b, static_cast<int>(p.m), static_cast<int>(p.n), static_cast<int>(p.k), epilogue);
  throw_if_launch_failed("sm90 matmul");
}

// tf32: B is transposed into a stream-ordered scratch buffer first (wgmma has no tf32
// transpose), freed on the stream after the launch.
template <class Epilogue>
void launch_sm90_tf32(const MatmulProblem& p, cudaStream_t stream, const Epilogue& epilogue) {
  void* bt = nullptr;
  const std::size_t bytes = static_cast<std::size_t>(p.n) * static_cast<std::size_t>(p.k) * 4;
  const cudaError_t e = cudaMallocAsync(&bt, bytes, stream);
  if (e != cudaSuccess) throw CudaError(std::string("sm90 tf32 matmul: scratch for B^T: ") + cudaGetErrorString(e));
  transpose_to_tf32(static_cast<const float*>(p.b), static_cast<float*>(bt), p.k, p.n, stream);
  launch_sm90_core<sm90::Tf32Operands>(p, bt, stream, epilogue);
  cudaFreeAsync(bt, stream);
}

}  // namespace flopline::kernels::detail
