// The online-softmax merge: the (max, sum of exp(x - max)) pair of the union of two sets
// of values, from each set's pair. Every kernel that merges such pairs calls this one;
// they differ in the exp they can afford (ExpShifted) and in what a pair of an empty set
// gives (EmptySide), so both are parameters and each call site keeps its own numerics.
#pragma once

#include <cmath>

namespace flopline::kernels::detail {

// What the merge does with sides that hold no value (max -inf).
enum class EmptySide {
  // Each side whose sum is 0 adds nothing, so two empty sides give (-inf, 0) and no
  // -inf - (-inf) is computed; a side with a NaN sum (a NaN value was seen) still makes
  // the sum NaN.
  skip_zero_sums,
  // Both maxima -inf (or one NaN, the other -inf): (-inf, 0).
  zero_when_all_empty,
  // Both maxima -inf: the first side as it is.
  first_when_all_empty,
};

// exp_shifted(x, mx) is exp(x - mx) for x <= mx.
template <EmptySide kEmpty, class ExpShifted>
__device__ __forceinline__ float2 merge_stats(float2 a, float2 b, ExpShifted exp_shifted) {
  const float mx = fmaxf(a.x, b.x);
  if constexpr (kEmpty == EmptySide::skip_zero_sums) {
    float sum = 0.0f;
    if (a.y != 0.0f) sum += a.y * exp_shifted(a.x, mx);
    if (b.y != 0.0f) sum += b.y * exp_shifted(b.x, mx);
    return make_float2(mx, sum);
  } else {
    if (mx == -INFINITY)
      return kEmpty == EmptySide::zero_when_all_empty ? make_float2(mx, 0.0f) : a;
    return make_float2(mx, a.y * exp_shifted(a.x, mx) + b.y * exp_shifted(b.x, mx));
  }
}

}  // namespace flopline::kernels::detail
