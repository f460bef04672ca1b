// Stream-ordered scratch memory for the kernels (B^T of the tf32 matmul, softmax
// statistics, unfused scores), from a memory pool of the library's own that keeps up to
// 1 GiB between calls. The default pool gives memory back at every synchronization, and
// mapping it again costs tens of microseconds per call, more than some kernels take;
// a pool of our own also leaves the program's default pool settings alone.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace flopline::kernels::detail {

// Throws CudaError naming `what` when the allocation fails.
void* scratch_alloc(std::size_t bytes, cudaStream_t stream, const char* what);
void scratch_free(void* p, cudaStream_t stream);

// Scratch freed on the stream when it goes out of scope.
class Scratch {
 public:
  Scratch(std::size_t bytes, cudaStream_t stream, const char* what)
      : ptr_(scratch_alloc(bytes, stream, what)), stream_(stream) {}
  ~Scratch() { scratch_free(ptr_, stream_); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }

 private:
  void* ptr_;
  cudaStream_t stream_;
};

}  // namespace flopline::kernels::detail
