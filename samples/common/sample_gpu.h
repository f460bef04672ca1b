// GPU helpers shared by the samples: a device check with a clear message, error checks
// that name the failing call, owned device buffers, reproducible random inputs and an
// fp64 checksum (both on the GPU, so a 46000^2 matrix does not cross PCIe).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "flopline/kernels/types.h"

namespace flopline::samples {

// Exits 3 with "PROGRAM: no CUDA device (REASON)" when there is none; prints nothing
// otherwise and returns the device's name.
std::string require_device(const char* program);

// Exits 1 with "PROGRAM: WHAT: CUDA error" when e is not cudaSuccess.
void check_cuda(cudaError_t e, const char* what);

// Device memory that frees itself. Allocation failure exits with the size asked for.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return ptr_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// n normal values of mean 0 and standard deviation `stddev` (Box-Muller over a counter
// hash of (seed, index)), stored as t (tf32 is fp32 storage). The same seed gives the
// same values on every GPU.
void fill_normal(void* data, std::int64_t n, kernels::DType t, std::uint64_t seed,
                 cudaStream_t stream = nullptr, float stddev = 1.0f);

// Fills with NaN so that an element a kernel forgets to write shows up.
void fill_nan(void* data, std::int64_t n, kernels::DType t, cudaStream_t stream = nullptr);

// Sum of n elements of type t, accumulated in fp64 (synchronizes).
double checksum(const void* data, std::int64_t n, kernels::DType t);

// max |a - b| over n elements of types ta and tb (synchronizes).
double max_abs_diff(const void* a, kernels::DType ta, const void* b, kernels::DType tb,
                    std::int64_t n);

// max |a - ref| and max |ref| over n elements, ref in fp64 (synchronizes).
struct RefDiff {
  double max_abs_diff = 0;
  double max_abs_ref = 0;
};
RefDiff diff_to_reference(const void* a, kernels::DType t, const double* ref, std::int64_t n);

// C = A x B in fp64 from inputs of type t (row-major, m x k times k x n), written as
// fp64: the reference the --validate checks compare against.
void reference_matmul(const void* a, const void* b, double* c, std::int64_t m, std::int64_t n,
                      std::int64_t k, kernels::DType t);

// Softmax of an fp64 m x n matrix over rows (dim -1) or columns (dim 0), in place.
void reference_softmax(double* c, std::int64_t m, std::int64_t n, bool over_columns);

}  // namespace flopline::samples
