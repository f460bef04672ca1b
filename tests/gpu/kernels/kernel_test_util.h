// Shared helpers of the kernel GPU tests: device buffers, random inputs stored in the
// kernel's dtype, NaN poisoning, a float64 reference matmul on the GPU, and error norms;
// the per-element error bounds are in error_bounds.h.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "error_bounds.h"
#include "flopline/kernels/matmul.h"
#include "flopline/kernels/types.h"

namespace flopline::kernels::testing {

#define FLOPLINE_CUDA_OK(call)                                                                    \
  do {                                                                                            \
    cudaError_t e_ = (call);                                                                      \
    if (e_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::abort();                                                                               \
    }                                                                                             \
  } while (0)

// Device memory of `bytes` bytes, freed on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) {
    o.ptr_ = nullptr;
    o.bytes_ = 0;
  }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// n values uniform in [lo, hi) from a fresh random seed each call (the seed is printed by
// the test on failure through last_seed()), rounded to dtype t (tf32: to its 10-bit
// mantissa, stored as fp32, so that tf32 multiplies them exactly; f32 gives full fp32
// values, which a tf32 matmul rounds); returns the rounded values as doubles (exactly
// what the device holds) and uploads them into `device`.
std::vector<double> random_device_values(DeviceBuffer& device, std::int64_t n, DType t,
                                         double lo = -1, double hi = 1);
std::uint64_t last_seed();

// Fills with all-ones bits: NaN in fp32, bf16 and fp16.
void poison_nan(const DeviceBuffer& buffer);

// Device values of type t converted to double.
std::vector<double> download(const DeviceBuffer& buffer, std::int64_t n, DType t);

// C = A x B in float64 on the GPU from double inputs (row-major), with each element's
// magnitude sum |a| |b| (error_bounds.h), for reference.
MatmulReference reference_matmul(const std::vector<double>& a, const std::vector<double>& b,
                                 std::int64_t m, std::int64_t n, std::int64_t k);

// ||out - ref||_2 / ||ref||_2 (inf when out has a NaN).
double relative_error(const std::vector<double>& out, const std::vector<double>& ref);

// 10*major+minor of the current device.
int device_arch();

// The problem C (m x n) = A (m x k) x B (k x n) on device buffers, types in -> out.
inline MatmulProblem problem(const DeviceBuffer& a, const DeviceBuffer& b, void* c, std::int64_t m,
                             std::int64_t n, std::int64_t k, DType in, DType out) {
  MatmulProblem p;
  p.a = a.get();
  p.b = b.get();
  p.c = c;
  p.m = m;
  p.n = n;
  p.k = k;
  p.in = in;
  p.out = out;
  return p;
}

}  // namespace flopline::kernels::testing
