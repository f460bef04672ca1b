// An experiment, not part of flopline: what recording launch sites through CUPTI
// *callbacks* costs, against CUPTI's runtime/driver *activity* records (what flopline
// and torch.profiler use today). Loaded into any CUDA program with
//   CUDA_INJECTION64_PATH=libcupti_launch_probe.so FLOPLINE_PROBE_MODE=MODE PROGRAM
// MODE: kernel        kernel activity records only (no launch sites)
//       kernel+launch kernel records + callbacks on the launch APIs (runtime and driver),
//                     each writing {api, correlation id, thread, enter/exit time} to a
//                     per-thread buffer: everything attribution needs from a launch
//       all           the activity kinds of flopline's default (the "floor")
// At exit it prints the records it saw to stderr, so a run shows it was recording.
#include <cupti.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace {

std::atomic<unsigned long long> g_activity_records{0};
// Correlation ids seen on each side, to check that a launch callback's id is the one its
// kernel record carries (what attribution joins on).
std::mutex g_ids_mu;
std::vector<std::uint32_t> g_kernel_ids, g_launch_ids, g_nested_ids;
std::atomic<unsigned long long> g_launch_records{0};
constexpr size_t kBufferBytes = 8u << 20;

void CUPTIAPI request_buffer(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, kBufferBytes));
  *size = kBufferBytes;
  *max_records = 0;
}

void CUPTIAPI complete_buffer(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* r = nullptr;
  unsigned long long n = 0;
  std::vector<std::uint32_t> ids;
  while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) {
    ++n;
    if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      ids.push_back(reinterpret_cast<const CUpti_ActivityKernel10*>(r)->correlationId);
    }
  }
  {
    std::lock_guard<std::mutex> lock(g_ids_mu);
    g_kernel_ids.insert(g_kernel_ids.end(), ids.begin(), ids.end());
  }
  g_activity_records += n;
  std::free(buffer);
}

struct LaunchRecord {
  std::uint64_t enter_ns, exit_ns;
  std::uint32_t correlation, cbid;
  std::uint32_t tid, domain;
  bool nested;  // a driver launch inside a runtime launch on this thread
};

// One growing buffer per thread; counted at thread exit (a real recorder would hand
// full chunks to a decoder thread).
struct ThreadLaunches {
  std::vector<LaunchRecord> records;
  std::uint64_t pending_enter = 0;
  int depth = 0;  // launch calls open on this thread
  std::uint32_t tid = static_cast<std::uint32_t>(syscall(SYS_gettid));
  ThreadLaunches() { records.reserve(1 << 16); }
  ~ThreadLaunches() { keep(); }
  void keep() {
    g_launch_records += records.size();
    std::lock_guard<std::mutex> lock(g_ids_mu);
    for (const LaunchRecord& r : records)
      (r.nested ? g_nested_ids : g_launch_ids).push_back(r.correlation);
    records.clear();
  }
};
thread_local ThreadLaunches t_launches;

void CUPTIAPI on_launch(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                        const void* data) {
  const auto* info = static_cast<const CUpti_CallbackData*>(data);
  std::uint64_t now = 0;
  cuptiGetTimestamp(&now);
  ThreadLaunches& t = t_launches;
  if (info->callbackSite == CUPTI_API_ENTER) {
    if (t.depth++ == 0) t.pending_enter = now;
    return;
  }
  --t.depth;
  t.records.push_back({t.pending_enter, now, info->correlationId, cbid, t.tid,
                       static_cast<std::uint32_t>(domain), t.depth > 0});
}

bool is_launch_api(const char* name) {
  return std::strstr(name, "Launch") != nullptr && std::strstr(name, "HostFunc") == nullptr;
}

void enable_launch_callbacks() {
  CUpti_SubscriberHandle sub = nullptr;
  if (cuptiSubscribe(&sub, on_launch, nullptr) != CUPTI_SUCCESS) {
    std::fprintf(stderr, "probe: cuptiSubscribe failed\n");
    return;
  }
  int enabled = 0;
  for (uint32_t cbid = 1; cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE; ++cbid) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name) == CUPTI_SUCCESS && name &&
        is_launch_api(name)) {
      enabled += cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API, cbid) == CUPTI_SUCCESS;
    }
  }
  for (uint32_t cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; ++cbid) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &name) == CUPTI_SUCCESS && name &&
        is_launch_api(name)) {
      enabled += cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, cbid) == CUPTI_SUCCESS;
    }
  }
  std::fprintf(stderr, "probe: %d launch callbacks enabled\n", enabled);
}

void report() {
  cuptiActivityFlushAll(1);
  t_launches.keep();
  std::lock_guard<std::mutex> lock(g_ids_mu);
  std::sort(g_launch_ids.begin(), g_launch_ids.end());
  std::sort(g_nested_ids.begin(), g_nested_ids.end());
  std::size_t outer = 0, nested = 0, zero = 0;
  for (std::uint32_t id : g_kernel_ids) {
    zero += id == 0;
    outer += std::binary_search(g_launch_ids.begin(), g_launch_ids.end(), id);
    nested += std::binary_search(g_nested_ids.begin(), g_nested_ids.end(), id);
  }
  std::fprintf(stderr,
               "probe: %llu activity records, %zu outer + %zu nested launch records; %zu kernels: "
               "%zu match an outer "
               "call's id, %zu a nested call's, %zu have id 0\n",
               g_activity_records.load(), g_launch_ids.size(), g_nested_ids.size(),
               g_kernel_ids.size(), outer, nested, zero);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection() {
  static bool done = false;
  if (done) return 1;
  done = true;
  const char* m = std::getenv("FLOPLINE_PROBE_MODE");
  const std::string mode = m ? m : "kernel";
  cuptiActivityRegisterCallbacks(request_buffer, complete_buffer);
  if (mode == "all") {
    for (CUpti_ActivityKind k :
         {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
          CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME,
          CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
          CUPTI_ACTIVITY_KIND_MARKER, CUPTI_ACTIVITY_KIND_MARKER_DATA, CUPTI_ACTIVITY_KIND_NAME,
          CUPTI_ACTIVITY_KIND_OVERHEAD}) {
      cuptiActivityEnable(k);
    }
  } else {
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (mode == "kernel+launch") enable_launch_callbacks();
  }
  std::atexit(report);
  std::fprintf(stderr, "probe: mode %s\n", mode.c_str());
  return 1;
}
