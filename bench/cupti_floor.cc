// The floor of what recording costs: an injection library that asks CUPTI for what
// flopline's default capture asks for (the same activity kinds, callbacks on the same
// launch, copy, allocation and sync functions) and throws every record away. The
// capture-overhead benchmark (bench_train_overhead.py) puts flopline's added time per
// step beside this library's.
//   CUDA_INJECTION64_PATH=libflopline_floor.so NVTX_INJECTION64_PATH=libflopline_floor.so PROGRAM
#include <cupti.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "flopline/capture/capture_config.h"

#define FLOOR_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr std::size_t kBufferBytes = 8u << 20;
std::mutex g_pool_mu;
std::vector<std::uint8_t*> g_pool;

void CUPTIAPI request(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *max_records = 0;
  std::lock_guard<std::mutex> lock(g_pool_mu);
  if (!g_pool.empty()) {
    *buffer = g_pool.back();
    g_pool.pop_back();
  } else {
    *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  }
  *size = *buffer != nullptr ? kBufferBytes : 0;
}

void CUPTIAPI complete(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t, std::size_t) {
  if (buffer == nullptr) return;
  std::lock_guard<std::mutex> lock(g_pool_mu);
  g_pool.push_back(buffer);  // the records are discarded unread
}

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

void flush_at_exit() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

bool start() {
  static std::once_flag once;
  static bool ok = false;
  std::call_once(once, [] {
    cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
    if (cuptiActivityRegisterCallbacks(request, complete) != CUPTI_SUCCESS) return;
    for (CUpti_ActivityKind k : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                 CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
                                 CUPTI_ACTIVITY_KIND_MARKER, CUPTI_ACTIVITY_KIND_MARKER_DATA,
                                 CUPTI_ACTIVITY_KIND_NAME, CUPTI_ACTIVITY_KIND_OVERHEAD}) {
      cuptiActivityEnable(k);
    }
    CUpti_SubscriberHandle sub = nullptr;
    if (cuptiSubscribe(&sub, on_callback, nullptr) == CUPTI_SUCCESS) {
      struct Domain {
        CUpti_CallbackDomain domain;
        std::uint32_t size;
      };
      for (const Domain d : {Domain{CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE},
                             Domain{CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE}}) {
        for (std::uint32_t cbid = 1; cbid < d.size; ++cbid) {
          const char* name = nullptr;
          if (cuptiGetCallbackName(d.domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr)
            continue;
          if (flopline::capture::is_recorded_call(name))
            cuptiEnableCallback(1, sub, d.domain, cbid);
        }
      }
    }
    std::atexit(flush_at_exit);
    ok = true;
  });
  return ok;
}

}  // namespace

FLOOR_EXPORT int InitializeInjection(void) {
  return start() ? 1 : 0;
}

// NVTX hands its calls to CUPTI through this library, as it does for flopline's.
FLOOR_EXPORT int InitializeInjectionNvtx2(void* get_export_table) {
  start();
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cuptiActivityEnable), &info) == 0 ||
      info.dli_fname == nullptr)
    return 0;
  void* lib = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (lib == nullptr) return 0;
  using Entry = int (*)(void*);
  const auto entry = reinterpret_cast<Entry>(dlsym(lib, "InitializeInjectionNvtx2"));
  return entry != nullptr ? entry(get_export_table) : 0;
}
