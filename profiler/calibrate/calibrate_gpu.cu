#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>

#include "calibrate_gpu.h"

namespace flopline::calibrate {
namespace {

// cuBLAS is opened at run time, so this program loads (and says why it cannot measure)
// on machines without it.
struct Cublas {
  cublasStatus_t (*create)(cublasHandle_t*) = nullptr;
  cublasStatus_t (*destroy)(cublasHandle_t) = nullptr;
  cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                            const void*, const void*, cudaDataType, int, const void*, cudaDataType,
                            int, const void*, void*, cudaDataType, int, cublasComputeType_t,
                            cublasGemmAlgo_t) = nullptr;
  bool ok() const { return create && destroy && gemm_ex; }
};

template <class F>
void load(void* lib, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(lib, name));
}

Cublas open_cublas(std::string* error) {
  Cublas c;
  void* lib = dlopen("libcublas.so.13", RTLD_NOW);
  if (lib == nullptr) lib = dlopen("libcublas.so", RTLD_NOW);
  if (lib == nullptr) {
    *error = std::string("cuBLAS not found: ") + dlerror();
    return c;
  }
  load(lib, "cublasCreate_v2", c.create);
  load(lib, "cublasDestroy_v2", c.destroy);
  load(lib, "cublasGemmEx", c.gemm_ex);
  if (!c.ok()) *error = "cuBLAS lacks cublasGemmEx";
  return c;
}

// Random-looking values in [-1, 1): zeros would run faster than real data.
__global__ void fill_kernel(unsigned char* p, size_t bytes, int element, unsigned seed) {
  const size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x;
  const size_t n = bytes / element;
  if (i >= n) return;
  unsigned h = static_cast<unsigned>(i) * 2654435761u ^ seed;
  h ^= h >> 15;
  h *= 2246822519u;
  h ^= h >> 13;
  const float v = static_cast<float>(h & 0xffff) / 32768.0f - 1.0f;
  if (element == 4) {
    reinterpret_cast<float*>(p)[i] = v;
  } else {
    // The upper half of the float's bits: the bf16 value of v, and read as fp16 a finite
    // value of similar size, which is all a timing needs.
    const unsigned bits = __float_as_uint(v);
    reinterpret_cast<unsigned short*>(p)[i] = static_cast<unsigned short>(bits >> 16);
  }
}

bool fill(void* p, size_t bytes, int element, unsigned seed) {
  const size_t n = bytes / element;
  fill_kernel<<<static_cast<unsigned>((n + 255) / 256), 256>>>(static_cast<unsigned char*>(p),
                                                               bytes, element, seed);
  return cudaGetLastError() == cudaSuccess;
}

// Best time of one call of `work`, in ms, over `reps` timed calls after two warm-ups.
template <class Work>
double best_ms(int reps, Work work) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  work();
  work();
  float best = 1e30f;
  for (int r = 0; r < reps; ++r) {
    cudaEventRecord(a);
    work();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    best = std::min(best, ms);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return best;
}

std::string uuid_text(const cudaUUID_t& u) {
  const auto* b = reinterpret_cast<const unsigned char*>(u.bytes);
  char s[64];
  std::snprintf(s, sizeof s,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                b[14], b[15]);
  return s;
}

}  // namespace

GpuResult measure(int ordinal, int size, std::size_t copy_bytes, int repetitions) {
  GpuResult r;
  if (cudaSetDevice(ordinal) != cudaSuccess) {
    r.error = "no CUDA device " + std::to_string(ordinal);
    return r;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, ordinal);
  r.device = {ordinal, prop.name, uuid_text(prop.uuid)};
  const Cublas cublas = open_cublas(&r.error);
  if (!cublas.ok()) return r;
  cublasHandle_t handle = nullptr;
  if (cublas.create(&handle) != CUBLAS_STATUS_SUCCESS) {
    r.error = "cublasCreate failed";
    return r;
  }
  const size_t n = static_cast<size_t>(size);
  void *a = nullptr, *b = nullptr, *c = nullptr;
  if (cudaMalloc(&a, n * n * 4) != cudaSuccess || cudaMalloc(&b, n * n * 4) != cudaSuccess ||
      cudaMalloc(&c, n * n * 4) != cudaSuccess) {
    r.error = "not enough device memory for " + std::to_string(size) + "^2 matrices";
    return r;
  }
  struct Case {
    const char* precision;
    cudaDataType type;
    int element;
    cublasComputeType_t compute;
  };
  const Case cases[] = {
      {"fp32", CUDA_R_32F, 4, CUBLAS_COMPUTE_32F_PEDANTIC},
      {"tf32", CUDA_R_32F, 4, CUBLAS_COMPUTE_32F_FAST_TF32},
      {"bf16", CUDA_R_16BF, 2, CUBLAS_COMPUTE_32F},
      {"fp16", CUDA_R_16F, 2, CUBLAS_COMPUTE_32F},
  };
  const float one = 1.0f, zero = 0.0f;
  for (const Case& k : cases) {
    if (!fill(a, n * n * k.element, k.element, 1) || !fill(b, n * n * k.element, k.element, 2)) {
      r.error = "fill kernel failed";
      return r;
    }
    cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
    const double ms = best_ms(repetitions, [&] {
      status =
          cublas.gemm_ex(handle, CUBLAS_OP_N, CUBLAS_OP_N, size, size, size, &one, a, k.type, size,
                         b, k.type, size, &zero, c, k.type, size, k.compute, CUBLAS_GEMM_DEFAULT);
    });
    if (status != CUBLAS_STATUS_SUCCESS || cudaDeviceSynchronize() != cudaSuccess) {
      continue;  // a precision this GPU or cuBLAS does not do
    }
    r.matmul.push_back({k.precision, 2.0 * n * n * n / (ms * 1e-3), ms});
  }
  cublas.destroy(handle);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);

  void *src = nullptr, *dst = nullptr;
  if (cudaMalloc(&src, copy_bytes) != cudaSuccess || cudaMalloc(&dst, copy_bytes) != cudaSuccess) {
    r.error = "not enough device memory for the copy";
    return r;
  }
  fill(src, copy_bytes, 4, 3);
  r.copy_ms = best_ms(repetitions,
                      [&] { cudaMemcpyAsync(dst, src, copy_bytes, cudaMemcpyDeviceToDevice); });
  r.copy_bytes_per_s = 2.0 * static_cast<double>(copy_bytes) / (r.copy_ms * 1e-3);
  cudaFree(src);
  cudaFree(dst);
  r.ok = cudaDeviceSynchronize() == cudaSuccess && !r.matmul.empty();
  if (!r.ok && r.error.empty()) r.error = "no matrix product ran";
  return r;
}

}  // namespace flopline::calibrate
