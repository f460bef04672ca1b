#include "tensor_map.h"

#include <cuda_runtime_api.h>

#include <mutex>
#include <string>

#include "flopline/kernels/types.h"

namespace flopline::kernels::detail {
namespace {

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*,
                                 const cuuint64_t*, const cuuint64_t*, const cuuint32_t*,
                                 const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                                 CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

EncodeTiled encode_fn() {
  static std::once_flag once;
  static EncodeTiled fn = nullptr;
  std::call_once(once, [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault,
                                         &q) == cudaSuccess &&
        q == cudaDriverEntryPointSuccess) {
      fn = reinterpret_cast<EncodeTiled>(p);
    }
  });
  return fn;
}

}  // namespace

CUtensorMap make_tensor_map_2d(const void* base, std::int64_t rows, std::int64_t cols, DType t,
                               int box_rows, int box_cols) {
  const int elem_bytes = static_cast<int>(dtype_bytes(t));
  const EncodeTiled encode = encode_fn();
  if (!encode) throw CudaError("sm90 matmul: the driver has no cuTensorMapEncodeTiled");
  CUtensorMap map{};
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(cols) *
                                 static_cast<cuuint64_t>(elem_bytes)};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_cols), static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUtensorMapDataType type = t == DType::bf16  ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                   : t == DType::f16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                                     : CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  const CUresult r = encode(&map, type, 2, const_cast<void*>(base), dims, strides, box,
                            elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    throw CudaError("sm90 matmul: cuTensorMapEncodeTiled failed (" +
                    std::to_string(static_cast<int>(r)) + ") for a " + std::to_string(rows) + "x" +
                    std::to_string(cols) + " matrix");
  }
  return map;
}

}  // namespace flopline::kernels::detail
