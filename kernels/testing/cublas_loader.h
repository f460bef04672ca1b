// cuBLAS, loaded at run time (dlopen) for the comparisons in tests, benchmarks and
// samples: binaries start on machines without cuBLAS (or without a GPU) and say why
// cuBLAS is unavailable instead of failing to load.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "flopline/kernels/types.h"

namespace flopline::kernels::testing {

class Cublas {
 public:
  Cublas();  // loads libcublas and creates a handle; ok() says whether it worked
  ~Cublas();
  Cublas(const Cublas&) = delete;
  Cublas& operator=(const Cublas&) = delete;

  bool ok() const { return handle_ != nullptr; }
  const std::string& error() const { return error_; }

  // C = A x B, row-major, same conventions as flopline::kernels::matmul (tf32: fp32
  // storage with tensor-op math allowed). Returns false with error() set on failure.
  bool matmul(const void* a, const void* b, void* c, long m, long n, long k, DType in, DType out,
              cudaStream_t stream);

 private:
  void* lib_ = nullptr;
  void* handle_ = nullptr;
  std::string error_;
  struct Fns;
  Fns* fns_ = nullptr;
};

}  // namespace flopline::kernels::testing
