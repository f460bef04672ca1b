// How an elementwise launch splits n elements between 16-byte vector accesses and scalar
// ones. Plain C++ (no CUDA) so the unit tests check the split on the CPU; the kernels in
// elementwise_functor.cuh follow it.
//
//   [0, head)                          scalar: up to the first 16-byte boundary
//   [head, head + vectors * width)     one 16-byte load per input and store per vector
//   [head + vectors * width, n)        scalar tail (fewer than `width` elements)
//
// Vectors need every pointer at the same offset from a 16-byte boundary (then one head
// aligns them all). When they differ (x + 1 with out + 3, say) no single head aligns
// them, and the whole range runs scalar: width 1, vectors = n.
#pragma once

#include <cstddef>
#include <cstdint>

namespace flopline::kernels::detail {

constexpr int kVectorBytes = 16;

struct ElementwisePlan {
  std::int64_t head = 0;     // scalar elements before the vector body
  std::int64_t vectors = 0;  // units of `width` elements in the body
  std::int64_t tail = 0;     // scalar elements after the body
  int width = 1;             // elements per unit: 16 / element bytes, or 1 for the scalar path
};

// pointers: the count non-null pointers of one call (x, y, out), each aligned to its
// element (check_elementwise makes sure). n >= 0.
inline ElementwisePlan plan_elementwise(const void* const* pointers, int count, std::int64_t n,
                                        std::size_t element_bytes) {
  ElementwisePlan plan;
  const auto misalignment = [](const void* p) {
    return static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(p) % kVectorBytes);
  };
  const std::int64_t first = misalignment(pointers[0]);
  for (int i = 1; i < count; ++i) {
    if (misalignment(pointers[i]) != first) {
      plan.vectors = n;  // scalar path
      return plan;
    }
  }
  const std::int64_t es = static_cast<std::int64_t>(element_bytes);
  plan.width = kVectorBytes / static_cast<int>(es);
  plan.head = ((kVectorBytes - first) % kVectorBytes) / es;
  if (plan.head > n) plan.head = n;
  plan.vectors = (n - plan.head) / plan.width;
  plan.tail = n - plan.head - plan.vectors * plan.width;
  return plan;
}

}  // namespace flopline::kernels::detail
