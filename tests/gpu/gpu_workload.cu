// The CUDA program the GPU tests record. It knows nothing of flopline (except in
// `session` mode, which uses the C++ API): gpu_capture_tests runs it under
// `flopline run` and checks the trace against what each mode did.
//
//   launches N          N empty kernels on the default stream, then a sync
//   memcpy              copies of known sizes (pageable and pinned, both directions,
//                       device to device) and a memset
//   nvtx                nested NVTX ranges around kernels on two threads
//   threads T N         T threads, each on its own stream, N kernels each
//   crash N             N kernels, a sync, then abort()
//   fork                a child forked before CUDA starts launches 10 kernels, the
//                       parent 20; then a child forked after CUDA started exits at once
//   reset N             N kernels, cudaDeviceReset, then _exit(0) (no atexit)
//   cublas              3 SGEMMs through cuBLAS (loaded with dlopen) in one NVTX range,
//                       then 5 kernels launched with the driver's cuLaunchKernel
//   session PATH        flopline::Session + flopline::Range around 30 kernels, written
//                       to PATH
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#ifdef FLOPLINE_WORKLOAD_SESSION
#include "flopline/session.h"
#endif

#define CHECK(call)                                                                               \
  do {                                                                                            \
    const cudaError_t e_ = (call);                                                                \
    if (e_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(3);                                                                               \
    }                                                                                             \
  } while (0)

__global__ void flopline_empty_kernel(int x) {
  if (x == -12345) printf("never\n");  // keeps the kernel from being empty of arguments
}

__global__ void flopline_child_kernel(int x) {
  if (x == -12345) printf("never\n");
}

__global__ void flopline_scale_kernel(float* p, int n, float s) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] *= s;
}

static void launch_empty(int n, cudaStream_t stream = nullptr) {
  for (int i = 0; i < n; ++i) {
    flopline_empty_kernel<<<1, 32, 0, stream>>>(i);
    CHECK(cudaGetLastError());
  }
}

static int mode_launches(int n) {
  launch_empty(n);
  CHECK(cudaDeviceSynchronize());
  return 0;
}

static int mode_memcpy() {
  const size_t h2d = 64u << 20, d2h = 16u << 20, d2d = 32u << 20, set = 8u << 20;
  std::vector<char> pageable(h2d, 1);
  char* pinned = nullptr;
  CHECK(cudaMallocHost(&pinned, d2h));
  char *a = nullptr, *b = nullptr;
  CHECK(cudaMalloc(&a, h2d));
  CHECK(cudaMalloc(&b, h2d));
  CHECK(cudaMemcpy(a, pageable.data(), h2d, cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(pinned, a, d2h, cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(b, a, d2d, cudaMemcpyDeviceToDevice));
  CHECK(cudaMemset(b, 0, set));
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFreeHost(pinned));
  return 0;
}

// Thread t: outer [flops=1e9] > middle > inner, kernels at each level.
static void nvtx_ranges(int t) {
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const std::string outer = "outer" + std::to_string(t) + " [flops=1e9 bytes=2e6]";
  nvtxRangePushA(outer.c_str());
  launch_empty(2, s);
  nvtxRangePushA(("middle" + std::to_string(t)).c_str());
  launch_empty(3, s);
  nvtxRangePushA(("inner" + std::to_string(t)).c_str());
  launch_empty(4, s);
  nvtxRangePop();
  nvtxRangePop();
  CHECK(cudaStreamSynchronize(s));
  nvtxRangePop();
  CHECK(cudaStreamDestroy(s));
}

static int mode_nvtx() {
  CHECK(cudaFree(nullptr));  // CUDA (and the capture) started before the first range
  std::thread other(nvtx_ranges, 1);
  nvtx_ranges(0);
  other.join();
  launch_empty(1);  // outside any range
  CHECK(cudaDeviceSynchronize());
  return 0;
}

static int mode_threads(int threads, int per_thread) {
  CHECK(cudaFree(nullptr));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([per_thread] {
      cudaStream_t s;
      CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      launch_empty(per_thread, s);
      CHECK(cudaStreamSynchronize(s));
      CHECK(cudaStreamDestroy(s));
    });
  }
  for (auto& t : pool) t.join();
  return 0;
}

static int mode_crash(int n) {
  launch_empty(n);
  CHECK(cudaDeviceSynchronize());
  std::fflush(stdout);
  std::abort();
}

static int mode_fork() {
  // Before CUDA starts in this process: the child may use CUDA, and records on its own.
  const pid_t child = fork();
  if (child == 0) {
    for (int i = 0; i < 10; ++i) flopline_child_kernel<<<1, 32>>>(i);
    CHECK(cudaDeviceSynchronize());
    std::exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "first child failed: status %d\n", status);
    return 4;
  }
  launch_empty(20);
  CHECK(cudaDeviceSynchronize());
  // After CUDA started: the child cannot use CUDA and must write nothing of ours.
  const pid_t late = fork();
  if (late == 0) std::exit(0);
  waitpid(late, &status, 0);
  return 0;
}

static int mode_reset(int n) {
  launch_empty(n);
  CHECK(cudaDeviceSynchronize());
  CHECK(cudaDeviceReset());
  std::fflush(stdout);
  _exit(0);  // no atexit: only the reset can have written the trace
}

// cuBLAS through dlopen, so the test binary loads where cuBLAS is missing.
static int mode_cublas() {
  void* lib = dlopen("libcublas.so.13", RTLD_NOW);
  if (lib == nullptr) lib = dlopen("libcublas.so", RTLD_NOW);
  if (lib == nullptr) {
    std::fprintf(stderr, "no cuBLAS: %s\n", dlerror());
    return 77;
  }
  using Create = int (*)(void**);
  using Sgemm = int (*)(void*, int, int, int, int, int, const float*, const float*, int,
                        const float*, int, const float*, float*, int);
  const auto create = reinterpret_cast<Create>(dlsym(lib, "cublasCreate_v2"));
  const auto sgemm = reinterpret_cast<Sgemm>(dlsym(lib, "cublasSgemm_v2"));
  if (create == nullptr || sgemm == nullptr) return 5;
  const int n = 1024;
  float *a = nullptr, *b = nullptr, *c = nullptr;
  CHECK(cudaMalloc(&a, n * n * sizeof(float)));
  CHECK(cudaMalloc(&b, n * n * sizeof(float)));
  CHECK(cudaMalloc(&c, n * n * sizeof(float)));
  CHECK(cudaMemset(a, 0, n * n * sizeof(float)));
  CHECK(cudaMemset(b, 0, n * n * sizeof(float)));
  void* handle = nullptr;
  if (create(&handle) != 0) return 6;
  const float one = 1, zero = 0;
  nvtxRangePushA("sgemm 1024 x3 [flops=6.442450944e9]");
  for (int i = 0; i < 3; ++i) {
    if (sgemm(handle, 0, 0, n, n, n, &one, a, n, b, n, &zero, c, n) != 0) return 7;
  }
  nvtxRangePop();
  CHECK(cudaDeviceSynchronize());
  // The driver API directly, as Triton and CUTLASS launch.
  using Launch = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                              unsigned, unsigned, CUstream, void**, void**);
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  const auto launch = driver ? reinterpret_cast<Launch>(dlsym(driver, "cuLaunchKernel")) : nullptr;
  if (launch == nullptr) return 10;
  cudaFunction_t f = nullptr;
  CHECK(cudaGetFuncBySymbol(&f, reinterpret_cast<const void*>(flopline_empty_kernel)));
  for (int i = 0; i < 5; ++i) {
    int x = i;
    void* params[] = {&x};
    if (launch(reinterpret_cast<CUfunction>(f), 1, 1, 1, 32, 1, 1, 0, nullptr, params, nullptr) !=
        CUDA_SUCCESS) {
      return 11;
    }
  }
  CHECK(cudaDeviceSynchronize());
  return 0;
}

static int mode_session(const char* path) {
#ifdef FLOPLINE_WORKLOAD_SESSION
  flopline::Session session;
  if (!session.start()) {
    std::fprintf(stderr, "session: %s\n", session.error().c_str());
    return 8;
  }
  const int n = 1 << 20;
  float* p = nullptr;
  CHECK(cudaMalloc(&p, n * sizeof(float)));
  {
    flopline::Range r("scale 1M", 30.0 * n, 30.0 * 8 * n);
    for (int i = 0; i < 30; ++i) flopline_scale_kernel<<<(n + 255) / 256, 256>>>(p, n, 1.0f);
    CHECK(cudaDeviceSynchronize());
  }
  session.stop();
  const flopline::SessionWriteResult w = session.write(path);
  CHECK(cudaFree(p));
  if (!w.ok) {
    std::fprintf(stderr, "session write: %s\n", w.error.c_str());
    return 9;
  }
  std::printf("session wrote %s: %llu kernels\n", w.path.c_str(),
              static_cast<unsigned long long>(w.kernels));
  return 0;
#else
  (void)path;
  return 77;
#endif
}

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: gpu_workload MODE [ARGS]\n");
    return 2;
  }
  const std::string mode = argv[1];
  auto arg = [&](int i, int def) { return argc > i ? std::atoi(argv[i]) : def; };
  if (mode == "launches") return mode_launches(arg(2, 1000));
  if (mode == "memcpy") return mode_memcpy();
  if (mode == "nvtx") return mode_nvtx();
  if (mode == "threads") return mode_threads(arg(2, 8), arg(3, 5000));
  if (mode == "crash") return mode_crash(arg(2, 100));
  if (mode == "fork") return mode_fork();
  if (mode == "reset") return mode_reset(arg(2, 50));
  if (mode == "cublas") return mode_cublas();
  if (mode == "session" && argc > 2) return mode_session(argv[2]);
  std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
  return 2;
}
