// Pieces shared by the row and column softmax kernels: exp in fp32, running (max, sum)
// statistics, warp and block reductions, and the dispatch over the supported (input, output) types.
#pragma once

#include <cuda_runtime_api.h>

#include <cmath>

#include "flopline/kernels/storage.cuh"
#include "softmax_merge.cuh"

// In their own namespace: these short names (Stats, merge, MaxOp) must not meet another
// kernel file's helpers of the same name in detail.
namespace flopline::kernels::detail::softmax_parts {

constexpr float kLog2e = 1.4426950408889634f;

// exp(x - max) as exp2((x - max) * log2e): MUFU.EX2 (about 2 ulp) after a subtraction
// that is exact near the max and a product rounded once, about |x - max| * 2^-24
// relative: ~1e-6 for the terms that matter, the fp32 budget being 1e-5. The statistics
// (add_value, merge) use the same form, so the sum and the terms agree.
__device__ __forceinline__ float exp_shifted(float x, float max) {
  return exp2f((x - max) * kLog2e);
}

// Running softmax statistics: the largest value seen and the sum of exp(value - max).
struct Stats {
  float max;
  float sum;
};

__device__ __forceinline__ Stats empty_stats() {
  return {-INFINITY, 0.0f};
}

// Adds one value. -inf values add nothing (exp(-inf) = 0), and never compute
// -inf - (-inf); a NaN value makes the sum NaN, so its whole line comes out NaN, as in
// PyTorch.
__device__ __forceinline__ void add_value(Stats& s, float v) {
  if (v > s.max) {
    s.sum = s.sum * exp_shifted(s.max, v) + 1.0f;  // s.max = -inf: 0 * 0 + 1
    s.max = v;
  } else if (v == v && s.max != -INFINITY) {
    s.sum += exp_shifted(v, s.max);
  } else if (v != v) {
    s.sum = v;
  }
}

// Adds K values at once: one max over them, then K independent exps (no chain of
// dependent updates through the running max, as K add_value calls would make).
template <int K>
__device__ __forceinline__ void add_values(Stats& s, const float (&v)[K]) {
  float m = s.max;
#pragma unroll
  for (int i = 0; i < K; ++i) m = fmaxf(m, v[i]);
  if (m == -INFINITY) {  // nothing but -inf so far (a NaN among them shows in the write pass)
    return;
  }
  float sum = s.sum == 0.0f ? 0.0f : s.sum * exp_shifted(s.max, m);
#pragma unroll
  for (int i = 0; i < K; ++i) sum += exp_shifted(v[i], m);
  s.max = m;
  s.sum = sum;
}

// Statistics of the union of two sets of values.
struct ExpShifted {
  __device__ float operator()(float x, float max) const { return exp_shifted(x, max); }
};
__device__ __forceinline__ Stats merge(Stats a, Stats b) {
  const float2 r = merge_stats<EmptySide::skip_zero_sums>(make_float2(a.max, a.sum),
                                                          make_float2(b.max, b.sum), ExpShifted{});
  return {r.x, r.y};
}

struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct SumOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};

template <class Op>
__device__ __forceinline__ float warp_reduce(float v, Op op) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// Reduces v over the group of `group` threads the caller belongs to (32, or a multiple
// of 32 up to the block; scratch: a float per warp of the block); every thread of the
// group gets the same result. group is the same for the whole block, so the early
// return and the barriers are uniform.
template <class Op>
__device__ float group_reduce(float v, Op op, float* scratch, int group) {
  v = warp_reduce(v, op);
  if (group == 32) return v;
  const int warp = static_cast<int>(threadIdx.x) / 32;
  const int warps_per_group = group / 32;
  __syncthreads();  // readers of the previous reduction are done with scratch
  if (threadIdx.x % 32 == 0) scratch[warp] = v;
  __syncthreads();
  const int first = warp / warps_per_group * warps_per_group;
  float r = scratch[first];
  for (int w = 1; w < warps_per_group; ++w) r = op(r, scratch[first + w]);
  return r;
}

// Calls f(TIn{}, TOut{}) with the storage types of the problem's (input, output) pair,
// one of those check_softmax accepts: fp32->fp32, bf16->bf16|fp32, fp16->fp16|fp32.
template <class F>
void with_softmax_types(DType in, DType out, F&& f) {
  switch (in) {
    case DType::bf16:
      if (out == DType::bf16)
        f(__nv_bfloat16{}, __nv_bfloat16{});
      else
        f(__nv_bfloat16{}, float{});
      return;
    case DType::f16:
      if (out == DType::f16)
        f(__half{}, __half{});
      else
        f(__half{}, float{});
      return;
    default:
      // fp32 scores to a 16-bit output: the unfused matmul_softmax fallback.
      if (out == DType::bf16)
        f(float{}, __nv_bfloat16{});
      else if (out == DType::f16)
        f(float{}, __half{});
      else
        f(float{}, float{});
      return;
  }
}

}  // namespace flopline::kernels::detail::softmax_parts
