#include "call_recorder.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "flopline/capture/capture_config.h"

namespace flopline::cupti {
namespace {

constexpr std::size_t kChunkRecords = 4096;  // 128 KB: handed over about every 4096 calls

// One per thread that makes recorded calls. The owner appends under `mu` (never
// contended but by drain_calls), so a flush from another thread can take the records.
struct ThreadCalls {
  std::mutex mu;
  CallChunk records;
  std::uint32_t thread_id = static_cast<std::uint32_t>(syscall(SYS_gettid));
  // Open recorded calls on this thread and when the outermost began; generation resets
  // them after a stop that cut calls in half.
  int depth = 0;
  std::uint64_t open_start = 0;
  std::uint64_t generation = 0;
};

struct Registry {
  std::mutex mu;
  std::vector<std::shared_ptr<ThreadCalls>> threads;
  CallSink sink;
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed: threads may record during exit
  return *r;
}

std::atomic<bool> g_recording{false};
std::atomic<std::uint64_t> g_generation{1};

void hand_over(CallChunk&& chunk) {
  if (chunk.empty()) return;
  CallSink sink;
  {
    std::lock_guard<std::mutex> lock(registry().mu);
    sink = registry().sink;
  }
  if (sink) sink(std::move(chunk));
}

// The calling thread's buffer, registered on first use; at thread exit what is left
// goes to the sink.
struct ThreadCallsHolder {
  std::shared_ptr<ThreadCalls> calls = std::make_shared<ThreadCalls>();
  ThreadCallsHolder() {
    calls->records.reserve(kChunkRecords);
    std::lock_guard<std::mutex> lock(registry().mu);
    registry().threads.push_back(calls);
  }
  ~ThreadCallsHolder() {
    CallChunk left;
    {
      std::lock_guard<std::mutex> lock(calls->mu);
      left.swap(calls->records);
    }
    hand_over(std::move(left));
    std::lock_guard<std::mutex> lock(registry().mu);
    auto& v = registry().threads;
    v.erase(std::remove(v.begin(), v.end(), calls), v.end());
  }
};

ThreadCalls& this_thread_calls() {
  thread_local ThreadCallsHolder holder;
  return *holder.calls;
}

// The recorded calls' ids in `domain`, looked up once: capture windows switch them on
// and off at every window's edge, on the program's thread, and naming every id of a
// domain each time was most of what a switch cost.
const std::vector<CUpti_CallbackId>& recorded_cbids(CUpti_CallbackDomain domain) {
  auto find = [](CUpti_CallbackDomain d, std::uint32_t n) {
    std::vector<CUpti_CallbackId> ids;
    for (std::uint32_t cbid = 1; cbid < n; ++cbid) {
      const char* name = nullptr;
      if (cuptiGetCallbackName(d, cbid, &name) != CUPTI_SUCCESS || name == nullptr) continue;
      if (capture::is_recorded_call(name)) ids.push_back(cbid);
    }
    return ids;
  };
  static const std::vector<CUpti_CallbackId> runtime =
      find(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE);
  static const std::vector<CUpti_CallbackId> driver =
      find(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE);
  return domain == CUPTI_CB_DOMAIN_RUNTIME_API ? runtime : driver;
}

int switch_domain(CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain, bool on) {
  int switched = 0;
  for (CUpti_CallbackId cbid : recorded_cbids(domain)) {
    if (cuptiEnableCallback(on ? 1 : 0, subscriber, domain, cbid) == CUPTI_SUCCESS) ++switched;
  }
  return switched;
}

}  // namespace

void set_call_sink(CallSink sink) {
  std::lock_guard<std::mutex> lock(registry().mu);
  registry().sink = std::move(sink);
}

int enable_call_callbacks(CUpti_SubscriberHandle subscriber, bool runtime, bool driver, bool on) {
  int n = 0;
  if (runtime) n += switch_domain(subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, on);
  if (driver) n += switch_domain(subscriber, CUPTI_CB_DOMAIN_DRIVER_API, on);
  return n;
}

void set_calls_recording(bool on) {
  if (on) g_generation.fetch_add(1, std::memory_order_relaxed);
  g_recording.store(on, std::memory_order_release);
}

void on_call_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                      const CUpti_CallbackData* data) {
  if (!g_recording.load(std::memory_order_acquire)) return;
  ThreadCalls& t = this_thread_calls();
  const std::uint64_t gen = g_generation.load(std::memory_order_relaxed);
  if (t.generation != gen) {
    t.generation = gen;
    t.depth = 0;
  }
  std::uint64_t now = 0;
  if (data->callbackSite == CUPTI_API_ENTER) {
    if (t.depth++ == 0) {
      cuptiGetTimestamp(&now);
      t.open_start = now;
    }
    return;
  }
  if (t.depth == 0) return;   // entered before recording started
  if (--t.depth > 0) return;  // a driver call inside a recorded runtime call: same id
  cuptiGetTimestamp(&now);
  CallRecord r;
  r.start = t.open_start;
  r.end = now;
  r.cbid = cbid;
  r.correlation_id = data->correlationId;
  r.thread_id = t.thread_id;
  r.return_value = data->functionReturnValue != nullptr
                       ? *static_cast<const std::int32_t*>(data->functionReturnValue)
                       : 0;
  r.driver = domain == CUPTI_CB_DOMAIN_DRIVER_API;
  CallChunk full;
  {
    std::lock_guard<std::mutex> lock(t.mu);
    t.records.push_back(r);
    if (t.records.size() >= kChunkRecords) {
      full.swap(t.records);
      t.records.reserve(kChunkRecords);
    }
  }
  hand_over(std::move(full));
}

void drain_calls() {
  std::vector<std::shared_ptr<ThreadCalls>> threads;
  {
    std::lock_guard<std::mutex> lock(registry().mu);
    threads = registry().threads;
  }
  for (const auto& t : threads) {
    CallChunk chunk;
    {
      std::lock_guard<std::mutex> lock(t->mu);
      chunk.swap(t->records);
    }
    hand_over(std::move(chunk));
  }
}

}  // namespace flopline::cupti
