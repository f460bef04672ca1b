// TMA tensor maps (CUtensorMap) for row-major 2-D matrices, made through the driver
// entry point the CUDA runtime hands out, so the library does not link libcuda.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "flopline/kernels/types.h"

namespace flopline::kernels::detail {

// rows x cols elements of type t (tf32: fp32 storage), row stride `cols` (its bytes a
// multiple of 16), boxes of box_rows x box_cols, 128-byte swizzle (box_cols elements
// span at most 128 bytes), zero fill outside the matrix. Throws CudaError.
CUtensorMap make_tensor_map_2d(const void* base, std::int64_t rows, std::int64_t cols, DType t,
                               int box_rows, int box_cols);

}  // namespace flopline::kernels::detail
