// Four adjacent output values at a time, for the passes that rescale the fused softmax's
// output in place (softmax_finish.cu, softmax_rescale_in_launch.cuh): one 16-byte access
// for fp32, one 8-byte access for bf16. On the fused path n is a multiple of 4, so a
// quad that starts at a multiple of 4 is aligned and wholly inside its row.
#pragma once

#include <cuda_bf16.h>

namespace flopline::kernels::detail {

struct Quad {
  float v[4];
};

// Loads go through L2 only (.cg): the in-launch rescale reads values that another
// proxy (TMA) or another SM wrote during the same launch, which a stale L1 line must not
// hide; the separate rescale pass loses nothing by it (every value is read once).
__device__ __forceinline__ Quad load4(const float* p) {
  const float4 x = __ldcg(reinterpret_cast<const float4*>(p));
  return Quad{{x.x, x.y, x.z, x.w}};
}
__device__ __forceinline__ void store4(float* p, const Quad& q) {
  *reinterpret_cast<float4*>(p) = make_float4(q.v[0], q.v[1], q.v[2], q.v[3]);
}
__device__ __forceinline__ Quad load4(const __nv_bfloat16* p) {
  const uint2 raw = __ldcg(reinterpret_cast<const uint2*>(p));
  const float2 a = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&raw.x));
  const float2 b = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&raw.y));
  return Quad{{a.x, a.y, b.x, b.y}};
}
__device__ __forceinline__ void store4(__nv_bfloat16* p, const Quad& q) {
  const __nv_bfloat162 a = __floats2bfloat162_rn(q.v[0], q.v[1]),
                       b = __floats2bfloat162_rn(q.v[2], q.v[3]);
  uint2 raw;
  raw.x = *reinterpret_cast<const unsigned*>(&a);
  raw.y = *reinterpret_cast<const unsigned*>(&b);
  *reinterpret_cast<uint2*>(p) = raw;
}
__device__ __forceinline__ void scale4(Quad& q, float s) {
#pragma unroll
  for (int e = 0; e < 4; ++e) q.v[e] *= s;
}

}  // namespace flopline::kernels::detail
