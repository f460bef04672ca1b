// The functors of the built-in elementwise ops and the dtype dispatch that turns one of
// them into an ElementwiseLauncher. Math in fp32 whatever the storage type.
#pragma once

#include "flopline/kernels/elementwise_functor.cuh"

namespace flopline::kernels::detail {

struct AddOp {
  __device__ float operator()(float x, float y) const { return x + y; }
};

struct MulOp {
  __device__ float operator()(float x, float y) const { return x * y; }
};

struct AxpyOp {
  float a;
  __device__ float operator()(float x, float y) const { return fmaf(a, x, y); }
};

struct ReluOp {
  // Written as a compare and not fmaxf so that NaN propagates, as torch.relu does.
  __device__ float operator()(float x) const { return x < 0.0f ? 0.0f : x; }
};

// gelu(x) = x * Phi(x), Phi(x) = (1 + erf(x / sqrt2)) / 2 = erfc(-x / sqrt2) / 2: the exact
// (erf) form, PyTorch's default. Not through erff: its coefficient selects cost ~30
// instructions an element, which made bf16 gelu compute-bound instead of bound by memory,
// and 1 + erf(x) cancels for negative x (relative error 4e-4 at x = -4).
// Instead, with z = |x| / sqrt2 and t = 1 / (1 + z / 2):
//   erfc(z) / 2 = t * 2^(-z^2 log2(e) + Q(t)),
// Q the degree-9 Chebyshev fit of log2(erfc(z) / (2t)) + z^2 log2(e) over t in (0, 1]
// (kernels/tools/fit_gelu.py; fit error 2.6e-7). One reciprocal, one exp2, ten FFMAs, no
// branch, no cancellation: Phi(x) = x < 0 ? h : 1 - h with h = erfc(z) / 2. Relative error
// of gelu in fp32 about 1e-6 on [-5, 5], 3e-6 on [-8, 8] (from rounding x^2 log2(e) / 2).
//
// The reciprocal and exp2 are the bare MUFU instructions (.approx.ftz, about 1 and 2 ulp):
// __fdividef and __expf add range fixups (3 FMUL and 2 FSETP an element) that kept the
// 16-bit gelu issue-bound. Flushing results below 2^-126 to zero only matters for
// x < -13, where gelu(x) < 1e-37 anyway.
__device__ __forceinline__ float rcp_approx(float v) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
  return r;
}
__device__ __forceinline__ float exp2_approx(float v) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(v));
  return r;
}

struct GeluOp {
  __device__ float operator()(float x) const {
    const float t =
        rcp_approx(fmaf(fabsf(x), 0.35355339059327373f, 1.0f));  // 1 / (1 + |x| / (2 sqrt2))
    float q = 2.626355588e-01f;
    q = fmaf(q, t, -1.258955836e+00f);
    q = fmaf(q, t, 2.284647226e+00f);
    q = fmaf(q, t, -1.777056217e+00f);
    q = fmaf(q, t, 4.847548604e-01f);
    q = fmaf(q, t, -2.973965108e-01f);
    q = fmaf(q, t, 1.452133060e-01f);
    q = fmaf(q, t, 5.391565561e-01f);
    q = fmaf(q, t, 1.442749500e+00f);
    q = fmaf(q, t, -2.825748444e+00f);
    const float h =
        t * exp2_approx(fmaf(x * -0.72134752044448170f, x, q));  // erfc(|x| / sqrt2) / 2
    return x * (x < 0.0f ? h : 1.0f - h);
  }
};

// The launcher for functor F at the problem's dtype (check_elementwise already refused tf32).
template <int kInputs, class F>
ElementwiseLauncher builtin_launcher(DType t) {
  switch (t) {
    case DType::bf16:
      return &launch_erased<kInputs, __nv_bfloat16, F>;
    case DType::f16:
      return &launch_erased<kInputs, __half, F>;
    default:
      return &launch_erased<kInputs, float, F>;
  }
}

inline ElementwiseProblem elementwise_problem(const void* x, const void* y, void* out,
                                              std::int64_t n, DType t) {
  ElementwiseProblem p;
  p.x = x;
  p.y = y;
  p.out = out;
  p.n = n;
  p.t = t;
  return p;
}

}  // namespace flopline::kernels::detail
