// Elementwise kernels for your own __device__ functor of one or two inputs, with the same
// vector accesses, alignment handling, checks and flopline range as the built-in ops
// (which are instances of the same templates). Include it from a .cu file:
//
//   struct Silu {
//     __device__ float operator()(float x) const { return x / (1.0f + __expf(-x)); }
//   };
//   flopline::kernels::elementwise_unary(Silu{}, d_x, d_out, n, {"silu", 4});
//
//   struct Hypot {
//     __device__ float operator()(float x, float y) const { return hypotf(x, y); }
//   };
//   flopline::kernels::elementwise_binary(Hypot{}, d_x, d_y, d_out, n, {"hypot", 3});
//
// T is float, __nv_bfloat16 or __half; the functor sees and returns float (math in
// fp32), and the result is rounded once to T. The functor is copied to the device by
// value: keep it a small struct of plain data. The info names the operator in traces
// and gives its FLOPs per element for the range's TFLOP/s.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

#include "flopline/kernels/elementwise.h"
#include "flopline/kernels/elementwise_plan.h"
#include "flopline/kernels/storage.cuh"

namespace flopline::kernels {

struct ElementwiseFunctorInfo {
  const char* name = "custom";   // operator name in traces
  double flops_per_element = 1;  // what the functor computes per element
};

namespace detail {

constexpr int kElementwiseThreads = 256;
// At least 4 resident blocks per SM (at most 64 registers a thread): half occupancy with
// 64 to 128 bytes of loads in flight per thread covers DRAM latency.
constexpr int kElementwiseMinBlocks = 4;

// Units (vectors or scalars) each thread loads before it computes and stores any: with
// the occupancy above, enough bytes in flight per SM to cover DRAM latency.
template <int W>
__host__ __device__ constexpr int elementwise_unroll() {
  return W == 1 ? 8 : 4;
}

template <int kInputs, class T, class F>
__device__ __forceinline__ void elementwise_one(const F& f, const T* x, const T* y, T* out,
                                                std::int64_t i) {
  if constexpr (kInputs == 1)
    out[i] = from_float<T>(f(to_float(x[i])));
  else
    out[i] = from_float<T>(f(to_float(x[i]), to_float(y[i])));
}

// One kernel serves the vector path (W = 16 / sizeof(T)) and the scalar path (W = 1, no
// head or tail). The first threads of the grid take the head and tail elements; the body
// is split in tiles of kElementwiseThreads * unroll units, grid-stride over tiles when
// the grid was capped. Each thread issues all its loads before its first store, so out
// may be x or y itself.
template <int kInputs, int W, class T, class F>
__global__ void __launch_bounds__(kElementwiseThreads, kElementwiseMinBlocks)
    elementwise_kernel(F f, const T* x, const T* y, T* out, ElementwisePlan plan) {
  constexpr int kUnroll = elementwise_unroll<W>();
  constexpr std::int64_t kTile = static_cast<std::int64_t>(kElementwiseThreads) * kUnroll;
  const std::int64_t thread =
      static_cast<std::int64_t>(blockIdx.x) * kElementwiseThreads + threadIdx.x;
  if (thread < plan.head) elementwise_one<kInputs>(f, x, y, out, thread);
  const std::int64_t body_end = plan.head + plan.vectors * W;
  if (thread < plan.tail) elementwise_one<kInputs>(f, x, y, out, body_end + thread);

  using P = Pack<T, W>;
  const P* xv = reinterpret_cast<const P*>(x + plan.head);
  const P* yv = reinterpret_cast<const P*>(kInputs == 2 ? y + plan.head : x + plan.head);
  P* ov = reinterpret_cast<P*>(out + plan.head);
  for (std::int64_t tile = blockIdx.x; tile * kTile < plan.vectors; tile += gridDim.x) {
    const std::int64_t first = tile * kTile + threadIdx.x;
    P a[kUnroll], b[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::int64_t i = first + static_cast<std::int64_t>(u) * kElementwiseThreads;
      if (i < plan.vectors) {
        a[u] = xv[i];
        if constexpr (kInputs == 2) b[u] = yv[i];
      }
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::int64_t i = first + static_cast<std::int64_t>(u) * kElementwiseThreads;
      if (i < plan.vectors) {
        float fa[W], fb[W], r[W];
        unpack(a[u], fa);
        if constexpr (kInputs == 2) unpack(b[u], fb);
#pragma unroll
        for (int e = 0; e < W; ++e) {
          if constexpr (kInputs == 1)
            r[e] = f(fa[e]);
          else
            r[e] = f(fa[e], fb[e]);
        }
        ov[i] = pack<T, W>(r);
      }
    }
  }
}

// Grid for the plan: one pass over the body (a tile per block; at n = 2^28 fp32 that is
// 65536 blocks, many waves, no tail effect) up to a cap, beyond which blocks loop.
inline unsigned elementwise_grid(const ElementwisePlan& plan, int unroll) {
  constexpr std::int64_t kMaxBlocks = std::int64_t{1} << 20;
  const std::int64_t tile = static_cast<std::int64_t>(kElementwiseThreads) * unroll;
  const std::int64_t blocks = (plan.vectors + tile - 1) / tile;
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min(blocks, kMaxBlocks)));
}

template <int kInputs, class T, class F>
void launch_elementwise(const F& f, const T* x, const T* y, T* out, std::int64_t n,
                        cudaStream_t stream) {
  const void* pointers[3] = {x, out, y};
  const ElementwisePlan plan = plan_elementwise(pointers, kInputs + 1, n, sizeof(T));
  if (plan.width == 1) {
    elementwise_kernel<kInputs, 1>
        <<<elementwise_grid(plan, elementwise_unroll<1>()), kElementwiseThreads, 0, stream>>>(
            f, x, y, out, plan);
  } else {
    constexpr int W = kVectorBytes / sizeof(T);
    elementwise_kernel<kInputs, W>
        <<<elementwise_grid(plan, elementwise_unroll<W>()), kElementwiseThreads, 0, stream>>>(
            f, x, y, out, plan);
  }
}

// The ElementwiseLauncher for functor F on storage type T.
template <int kInputs, class T, class F>
void launch_erased(const ElementwiseProblem& p, cudaStream_t stream, const void* functor) {
  launch_elementwise<kInputs>(*static_cast<const F*>(functor), static_cast<const T*>(p.x),
                              static_cast<const T*>(p.y), static_cast<T*>(p.out), p.n, stream);
}

}  // namespace detail

// out[i] = f(x[i]) for i < n.
template <class T, class F>
void elementwise_unary(const F& f, const T* x, T* out, std::int64_t n,
                       const ElementwiseFunctorInfo& info = {},
                       const ElementwiseOptions& options = {}) {
  ElementwiseProblem p;
  p.x = x;
  p.out = out;
  p.n = n;
  p.t = detail::dtype_of<T>();
  const detail::CustomElementwiseCost cost{info.name, info.flops_per_element, 1};
  detail::run_elementwise(p, ElementwiseOp::custom, options, &detail::launch_erased<1, T, F>, &f,
                          &cost);
}

// out[i] = f(x[i], y[i]) for i < n.
template <class T, class F>
void elementwise_binary(const F& f, const T* x, const T* y, T* out, std::int64_t n,
                        const ElementwiseFunctorInfo& info = {},
                        const ElementwiseOptions& options = {}) {
  ElementwiseProblem p;
  p.x = x;
  p.y = y;
  p.out = out;
  p.n = n;
  p.t = detail::dtype_of<T>();
  const detail::CustomElementwiseCost cost{info.name, info.flops_per_element, 2};
  detail::run_elementwise(p, ElementwiseOp::custom, options, &detail::launch_erased<2, T, F>, &f,
                          &cost);
}

}  // namespace flopline::kernels
