// plain_cuda: an ordinary CUDA program that includes nothing of flopline: a few kernels,
// pinned host copies, a memset, two streams joined by an event, and a cuBLAS SGEMM. It is
// profiled only from outside:
//
//   flopline run -o plain.json.gz -- plain_cuda
//
// The one NVTX range (the NVTX 3 header ships with the CUDA toolkit) carries its FLOPs and
// bytes in the message suffix flopline reads (docs/NVTX.md); any tool shows it as a plain
// range, flopline as an operator with TFLOP/s.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(call)                                                                \
  do {                                                                             \
    const cudaError_t e_ = (call);                                                 \
    if (e_ != cudaSuccess) {                                                       \
      std::fprintf(stderr, "plain_cuda: %s: %s\n", #call, cudaGetErrorString(e_)); \
      std::exit(1);                                                                \
    }                                                                              \
  } while (0)

namespace {

__global__ void plain_init(float* v, int n, float scale) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = scale * static_cast<float>(i % 1024) / 1024.0f;
}

__global__ void plain_saxpy(float a, const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

__global__ void plain_scale(float* v, float s, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] *= s;
}

__global__ void plain_sum(const float* v, int n, float* total) {
  float s = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += v[i];
  for (int o = 16; o > 0; o /= 2) s += __shfl_down_sync(0xffffffffu, s, o);
  if (threadIdx.x % 32 == 0) atomicAdd(total, s);
}

void usage(FILE* to) {
  std::fputs(
      "Usage: plain_cuda [--iters N] [--n ELEMENTS] [--gemm SIZE]\n\n"
      "A CUDA program that knows nothing of flopline: N saxpy launches on one stream and N\n"
      "scale launches on another, host<->device copies, a memset, a sum, and N cuBLAS SGEMMs\n"
      "of SIZE^3 inside one NVTX range. Profile it with `flopline run -- plain_cuda`.\n\n"
      "  --iters N        launches per stream and SGEMMs (default 10)\n"
      "  --n ELEMENTS     vector length (default 1048576)\n"
      "  --gemm SIZE      SGEMM side (default 1024)\n"
      "  --help           this text\n",
      to);
}

int positive_arg(const char* flag, const char* text) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (*text == '\0' || *end != '\0' || v < 1 || v > (1L << 30)) {
    std::fprintf(stderr, "plain_cuda: %s wants a positive integer, got '%s'\n", flag, text);
    std::exit(2);
  }
  return static_cast<int>(v);
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 10, n = 1 << 20, gemm = 1024;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      usage(stdout);
      return 0;
    }
    if ((a == "--iters" || a == "--n" || a == "--gemm") && i + 1 < argc) {
      const int v = positive_arg(a.c_str(), argv[++i]);
      (a == "--iters" ? iters : a == "--n" ? n : gemm) = v;
      continue;
    }
    std::fprintf(stderr, "plain_cuda: unknown or incomplete argument '%s'\n", a.c_str());
    usage(stderr);
    return 2;
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "plain_cuda: no CUDA device\n");
    return 3;
  }

  cudaStream_t s1, s2;
  CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  cudaEvent_t s2_done;
  CHECK(cudaEventCreateWithFlags(&s2_done, cudaEventDisableTiming));

  float *x, *y, *total, *host;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMalloc(&y, n * sizeof(float)));
  CHECK(cudaMalloc(&total, sizeof(float)));
  CHECK(cudaMallocHost(&host, n * sizeof(float)));
  for (int i = 0; i < n; ++i) host[i] = 1.0f;

  const int threads = 256, blocks = (n + threads - 1) / threads;
  CHECK(cudaMemcpyAsync(y, host, n * sizeof(float), cudaMemcpyHostToDevice, s1));  // y = 1
  plain_init<<<blocks, threads, 0, s2>>>(x, n, 1.0f);
  CHECK(cudaEventRecord(s2_done, s2));
  CHECK(cudaStreamWaitEvent(s1, s2_done, 0));
  for (int it = 0; it < iters; ++it) {
    plain_saxpy<<<blocks, threads, 0, s1>>>(0.5f, x, y, n);  // y += 0.5 x
  }
  // x is scaled on the second stream once the saxpys on the first no longer read it.
  CHECK(cudaEventRecord(s2_done, s1));
  CHECK(cudaStreamWaitEvent(s2, s2_done, 0));
  for (int it = 0; it < iters; ++it) plain_scale<<<blocks, threads, 0, s2>>>(x, 1.0f, n);
  CHECK(cudaMemsetAsync(total, 0, sizeof(float), s1));
  plain_sum<<<256, threads, 0, s1>>>(y, n, total);
  CHECK(cudaGetLastError());
  float sum = 0;
  CHECK(cudaMemcpyAsync(&sum, total, sizeof(float), cudaMemcpyDeviceToHost, s1));
  CHECK(cudaMemcpyAsync(host, y, n * sizeof(float), cudaMemcpyDeviceToHost, s1));
  CHECK(cudaDeviceSynchronize());

  // y[i] = 1 + iters * 0.5 * (i % 1024) / 1024, exactly representable for these values.
  double expect = 0;
  for (int i = 0; i < n; ++i) expect += 1.0 + iters * 0.5 * (i % 1024) / 1024.0;
  const double rel = std::fabs(sum - expect) / expect;
  std::printf("plain_cuda: sum of y = %.6e (expected %.6e, relative error %.1e)\n", sum, expect,
              rel);

  // cuBLAS: C = A x B (column-major, as cuBLAS is), SIZE^3, iters times.
  cublasHandle_t handle;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "plain_cuda: cublasCreate failed\n");
    return 1;
  }
  cublasSetStream(handle, s1);
  float *a, *b, *c;
  const size_t mat = static_cast<size_t>(gemm) * gemm;
  CHECK(cudaMalloc(&a, mat * sizeof(float)));
  CHECK(cudaMalloc(&b, mat * sizeof(float)));
  CHECK(cudaMalloc(&c, mat * sizeof(float)));
  plain_init<<<static_cast<int>((mat + threads - 1) / threads), threads, 0, s1>>>(
      a, static_cast<int>(mat), 1.0f);
  plain_init<<<static_cast<int>((mat + threads - 1) / threads), threads, 0, s1>>>(
      b, static_cast<int>(mat), 0.5f);
  const double flops = 2.0 * gemm * gemm * gemm * iters, bytes = 3.0 * mat * sizeof(float) * iters;
  char range[160];
  std::snprintf(range, sizeof range, "cublas sgemm %d [flops=%.17g bytes=%.17g precision=fp32]",
                gemm, flops, bytes);
  const float one = 1.0f, zero = 0.0f;
  nvtxRangePushA(range);
  for (int it = 0; it < iters; ++it) {
    if (cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, gemm, gemm, gemm, &one, a, gemm, b, gemm,
                    &zero, c, gemm) != CUBLAS_STATUS_SUCCESS) {
      std::fprintf(stderr, "plain_cuda: cublasSgemm failed\n");
      return 1;
    }
  }
  CHECK(cudaStreamSynchronize(s1));
  nvtxRangePop();
  std::printf("plain_cuda: %d SGEMMs of %d^3 done\n", iters, gemm);

  cublasDestroy(handle);
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(c));
  CHECK(cudaFree(x));
  CHECK(cudaFree(y));
  CHECK(cudaFree(total));
  CHECK(cudaFreeHost(host));
  CHECK(cudaStreamDestroy(s1));
  CHECK(cudaStreamDestroy(s2));
  return rel < 1e-4 ? 0 : 1;
}
