// Per-launch cost of recording: 100,000 empty-kernel launches and 20,000 adds of 4M
// floats, each in five passes timed on the host from the first launch to the final
// synchronize; the median pass is reported.
//
//   bench_capture_overhead none          no profiler
//   bench_capture_overhead cupti         a minimal CUPTI client in this program, with
//                                        the activity kinds flopline enables by default:
//                                        the floor
//   bench_capture_overhead cupti-kernel  the same with kernel records only
//   bench_capture_overhead cupti-sub     the floor plus a CUPTI subscriber with the one
//                                        runtime callback flopline enables
//                                        (cudaDeviceReset): what that costs per launch
//   flopline run -- bench_capture_overhead flopline    the same under flopline
//   flopline run -- bench_capture_overhead exit N      N launches, then prints the
//                                        exit time so a script can time exit -> trace
//
// This file calls CUPTI directly (the `cupti` mode): it is a measuring tool, not part
// of flopline, whose only CUPTI caller stays profiler/src/cupti/cupti_source.cc.
// scripts/gpu_check.sh runs every mode and prints the table; docs/PERFORMANCE.md
// records the figures.
#include <cuda_runtime.h>
#include <cupti.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "flopline/capture/api_names.h"

#define CHECK(call)                                                                    \
  do {                                                                                 \
    const cudaError_t e_ = (call);                                                     \
    if (e_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(3);                                                                    \
    }                                                                                  \
  } while (0)

__global__ void bench_empty_kernel() {}

__global__ void bench_add_kernel(const float* __restrict__ a, const float* __restrict__ b,
                                 float* __restrict__ c, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

__global__ void bench_fill_kernel(float* p, int n, float v) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v + static_cast<float>(i % 7);
}

namespace {

// --- the floor: the least a CUPTI client can do -----------------------------------
std::atomic<unsigned long long> g_records{0};
constexpr size_t kBufferBytes = 8u << 20;

void CUPTIAPI floor_request(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = kBufferBytes;
  *max_records = 0;
}

void CUPTIAPI floor_complete(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* r = nullptr;
  unsigned long long n = 0;
  while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) ++n;
  g_records += n;
  std::free(buffer);
}

// The activity kinds of flopline's default before calls went through callbacks (runtime,
// driver and sync activity records), with the same query calls left out.
void leave_out_queries() {
  for (uint32_t cbid = 1; cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE; ++cbid) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name) == CUPTI_SUCCESS && name &&
        flopline::capture::is_query_api(name)) {
      cuptiActivityEnableRuntimeApi(cbid, 0);
    }
  }
  for (uint32_t cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; ++cbid) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &name) == CUPTI_SUCCESS && name &&
        flopline::capture::is_query_api(name)) {
      cuptiActivityEnableDriverApi(cbid, 0);
    }
  }
}

void CUPTIAPI ignore_callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

void subscribe_like_flopline() {
  CUpti_SubscriberHandle subscriber = nullptr;
  if (cuptiSubscribe(&subscriber, ignore_callback, nullptr) == CUPTI_SUCCESS) {
    cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                        CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020);
  }
}

void start_floor(bool kernels_only) {
  cuptiActivityRegisterCallbacks(floor_request, floor_complete);
  if (kernels_only) {
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    return;
  }
  for (CUpti_ActivityKind k :
       {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
        CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME,
        CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, CUPTI_ACTIVITY_KIND_MARKER,
        CUPTI_ACTIVITY_KIND_MARKER_DATA, CUPTI_ACTIVITY_KIND_NAME, CUPTI_ACTIVITY_KIND_OVERHEAD}) {
    cuptiActivityEnable(k);
  }
  leave_out_queries();
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// `launches` launches in `passes` equal passes; the median pass, in microseconds per
// launch. The machines are VMs whose host threads wander: single passes of the same
// configuration differ by up to 10%, the median of five much less.
template <class Launch>
double us_per_launch(int launches, int passes, Launch launch) {
  std::vector<double> us;
  const int per_pass = launches / passes;
  for (int r = 0; r < passes; ++r) {
    CHECK(cudaDeviceSynchronize());
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < per_pass; ++i) launch();
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaGetLastError());
    us.push_back(seconds_since(t0) * 1e6 / per_pass);
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "none";
  const bool floor = mode == "cupti" || mode == "cupti-kernel" || mode == "cupti-sub";
  if (floor) start_floor(mode == "cupti-kernel");
  if (mode == "cupti-sub") subscribe_like_flopline();
  CHECK(cudaFree(nullptr));

  if (mode == "exit") {
    const int n = argc > 2 ? std::atoi(argv[2]) : 1000000;
    for (int i = 0; i < n; ++i) bench_empty_kernel<<<1, 1>>>();
    CHECK(cudaDeviceSynchronize());
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    std::printf("launched=%d exit_at_ns=%lld\n", n,
                static_cast<long long>(ts.tv_sec) * 1000000000LL + ts.tv_nsec);
    std::fflush(stdout);
    return 0;
  }

  const int n = 4 << 20;
  float *a = nullptr, *b = nullptr, *c = nullptr;
  CHECK(cudaMalloc(&a, n * sizeof(float)));
  CHECK(cudaMalloc(&b, n * sizeof(float)));
  CHECK(cudaMalloc(&c, n * sizeof(float)));
  bench_fill_kernel<<<(n + 255) / 256, 256>>>(a, n, 1.0f);
  bench_fill_kernel<<<(n + 255) / 256, 256>>>(b, n, 2.0f);
  // Warm-up: module load and first-launch costs stay out of the numbers.
  for (int i = 0; i < 2000; ++i) bench_empty_kernel<<<1, 1>>>();
  for (int i = 0; i < 100; ++i) bench_add_kernel<<<(n + 255) / 256, 256>>>(a, b, c, n);
  CHECK(cudaDeviceSynchronize());

  const double empty_us = us_per_launch(100000, 5, [] { bench_empty_kernel<<<1, 1>>>(); });
  const double add_us =
      us_per_launch(20000, 5, [&] { bench_add_kernel<<<(n + 255) / 256, 256>>>(a, b, c, n); });
  float check = 0;
  CHECK(cudaMemcpy(&check, c + 5, sizeof check, cudaMemcpyDeviceToHost));
  if (check != 1.0f + 2.0f + 2 * static_cast<float>(5 % 7)) {
    std::fprintf(stderr, "add result wrong: %f\n", check);
    return 4;
  }
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(c));
  if (floor) cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  // add: 3 x 4 bytes per element.
  std::printf(
      "mode=%s empty_us_per_launch=%.3f add_us_per_launch=%.3f add_GBps=%.0f records=%llu\n",
      mode.c_str(), empty_us, add_us, 12.0 * n / (add_us * 1e-6) / 1e9,
      static_cast<unsigned long long>(g_records.load()));
  return 0;
}
