// Storage types of the kernels (float, __nv_bfloat16, __half) as seen by fp32 math: the
// conversions, and the packs that move several elements in one memory access.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "flopline/kernels/types.h"

namespace flopline::kernels::detail {

template <class T>
constexpr DType dtype_of() {
  static_assert(
      std::is_same_v<T, float> || std::is_same_v<T, __nv_bfloat16> || std::is_same_v<T, __half>,
      "flopline kernels: T must be float, __nv_bfloat16 or __half");
  if constexpr (std::is_same_v<T, float>)
    return DType::f32;
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return DType::bf16;
  else
    return DType::f16;
}

template <class T>
__device__ __forceinline__ float to_float(T v) {
  if constexpr (std::is_same_v<T, float>)
    return v;
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __bfloat162float(v);
  else
    return __half2float(v);
}

template <class T>
__device__ __forceinline__ T from_float(float v) {
  if constexpr (std::is_same_v<T, float>)
    return v;
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __float2bfloat16_rn(v);
  else
    return __float2half_rn(v);
}

// W consecutive elements moved as one access: with W * sizeof(T) == 16 the compiler emits
// a single 128-bit load or store (LDG.E.128 / STG.E.128). The address must be aligned to
// W * sizeof(T).
template <class T, int W>
struct alignas(sizeof(T) * W) Pack {
  T v[W];
};

// A pack to fp32 values and back. 16-bit types convert two at a time (one cvt of a
// bf16x2 / half2 pair instead of two), which also keeps register use down.
template <class T, int W>
__device__ __forceinline__ void unpack(const Pack<T, W>& p, float* f) {
  if constexpr (!std::is_same_v<T, float> && W % 2 == 0) {
#pragma unroll
    for (int e = 0; e < W; e += 2) {
      float2 two;
      if constexpr (std::is_same_v<T, __nv_bfloat16>)
        two = __bfloat1622float2(__halves2bfloat162(p.v[e], p.v[e + 1]));
      else
        two = __half22float2(__halves2half2(p.v[e], p.v[e + 1]));
      f[e] = two.x;
      f[e + 1] = two.y;
    }
  } else {
#pragma unroll
    for (int e = 0; e < W; ++e) f[e] = to_float(p.v[e]);
  }
}

template <class T, int W>
__device__ __forceinline__ Pack<T, W> pack(const float* f) {
  Pack<T, W> p;
  if constexpr (!std::is_same_v<T, float> && W % 2 == 0) {
#pragma unroll
    for (int e = 0; e < W; e += 2) {
      if constexpr (std::is_same_v<T, __nv_bfloat16>) {
        const __nv_bfloat162 two = __floats2bfloat162_rn(f[e], f[e + 1]);
        p.v[e] = two.x;
        p.v[e + 1] = two.y;
      } else {
        const __half2 two = __floats2half2_rn(f[e], f[e + 1]);
        p.v[e] = two.x;
        p.v[e + 1] = two.y;
      }
    }
  } else {
#pragma unroll
    for (int e = 0; e < W; ++e) p.v[e] = from_float<T>(f[e]);
  }
  return p;
}

}  // namespace flopline::kernels::detail
