// exp2 as one MUFU.EX2 (ex2.approx.ftz), for the fused softmax epilogues: __expf and
// exp2f compile (without -ftz) to several instructions around the MUFU, a denormal
// fix-up that made the epilogue, not the tensor cores, the bottleneck of small-k sweeps.
// About 2^-22 relative error; results below 2^-126 flush to zero.
#pragma once

namespace flopline::kernels::fast {

constexpr float kLog2e = 1.4426950408889634f;

__device__ __forceinline__ float exp2_ftz(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

}  // namespace flopline::kernels::fast
