// launch_matmul_sm90: the Hopper core (sm90_gemm.cuh) with a plain store epilogue, one
// instantiation per supported (input, output) pair.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "matmul_launch.h"
#include "sm90_epilogue_store.cuh"
#include "sm90_launch.cuh"

namespace flopline::kernels::detail {

void launch_matmul_sm90(const MatmulProblem& p, cudaStream_t stream) {
  const int m = static_cast<int>(p.m), n = static_cast<int>(p.n);
  const bool out32 = p.out == DType::f32;
  switch (p.in) {
    case DType::tf32:
      launch_sm90_swapped<sm90::swapped::Tf32Swapped>(
          p, stream, sm90::swapped::SwappedStoreEpilogue<sm90::swapped::Tf32Swapped>{});
      return;
    case DType::bf16:
      if (out32) {
        launch_sm90_core<sm90::Bf16Operands>(
            p, p.b, stream, sm90::StoreEpilogue<float>{static_cast<float*>(p.c), m, n});
      } else {
        launch_sm90_core<sm90::Bf16Operands>(
            p, p.b, stream,
            sm90::StoreEpilogue<__nv_bfloat16>{static_cast<__nv_bfloat16*>(p.c), m, n});
      }
      return;
    case DType::f16:
      if (out32) {
        launch_sm90_core<sm90::F16Operands>(
            p, p.b, stream, sm90::StoreEpilogue<float>{static_cast<float*>(p.c), m, n});
      } else {
        launch_sm90_core<sm90::F16Operands>(
            p, p.b, stream, sm90::StoreEpilogue<__half>{static_cast<__half*>(p.c), m, n});
      }
      return;
    case DType::f32:
      return;  // not a tensor-core type: rejected by check_matmul_path
  }
}

}  // namespace flopline::kernels::detail
