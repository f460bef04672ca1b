// The only file in flopline that calls CUPTI. See cupti_source.h.
#include "cupti_source.h"

#include <cupti.h>
#include <dlfcn.h>
#include <unistd.h>

#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_set>
#include <utility>
#include <vector>

#include "capture_window_control.h"
#include "counter_profiler.h"
#include "cupti_records.h"
#include "device_info.h"
#include "flopline/capture/capture_config.h"
#include "flopline/capture/kernel_counts.h"
#include "flopline/capture/segmented_batch.h"
#include "flopline/capture/self_timing.h"
#include "gpu_metrics_sampler.h"
#include "nccl_call_recorder.h"
#include "process_info.h"

namespace flopline::cupti {
namespace {

using capture::RecordBatch;

// CUPTI wants activity buffers aligned to 8 bytes.
constexpr std::size_t kBufferAlign = 8;

struct KindEntry {
  std::uint32_t bit;
  CUpti_ActivityKind kind;
  bool required;  // start() fails when CUPTI refuses it
};

constexpr KindEntry kKinds[] = {
    {capture::kKindKernel, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, true},
    {capture::kKindMemcpy, CUPTI_ACTIVITY_KIND_MEMCPY, false},
    {capture::kKindMemcpy, CUPTI_ACTIVITY_KIND_MEMCPY2, false},
    {capture::kKindMemset, CUPTI_ACTIVITY_KIND_MEMSET, false},
    {capture::kKindRuntime, CUPTI_ACTIVITY_KIND_RUNTIME, false},
    {capture::kKindDriver, CUPTI_ACTIVITY_KIND_DRIVER, false},
    {capture::kKindSync, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, false},
    {capture::kKindNvtx, CUPTI_ACTIVITY_KIND_MARKER, false},
    {capture::kKindNvtx, CUPTI_ACTIVITY_KIND_MARKER_DATA, false},
    {capture::kKindName, CUPTI_ACTIVITY_KIND_NAME, false},
    {capture::kKindOverhead, CUPTI_ACTIVITY_KIND_OVERHEAD, false},
};

std::string cupti_error(CUptiResult r) {
  const char* s = nullptr;
  if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || s == nullptr) {
    return "CUPTI error " + std::to_string(static_cast<int>(r));
  }
  return s;
}

std::string api_name(capture::ApiDomain domain, std::uint32_t cbid) {
  const char* name = nullptr;
  const CUpti_CallbackDomain d = domain == capture::ApiDomain::kRuntime
                                     ? CUPTI_CB_DOMAIN_RUNTIME_API
                                     : CUPTI_CB_DOMAIN_DRIVER_API;
  if (cuptiGetCallbackName(d, cbid, &name) == CUPTI_SUCCESS && name != nullptr) {
    // CUPTI names carry the version the call appeared in ("cudaLaunchKernel_v7000");
    // Kineto and the CUDA docs use the plain name.
    return std::string(capture::api_base_name(name));
  }
  return (domain == capture::ApiDomain::kRuntime ? "cuda_runtime_" : "cuda_driver_") +
         std::to_string(cbid);
}

struct CompletedBuffer {
  std::uint8_t* data = nullptr;
  std::size_t valid = 0;
};

}  // namespace

struct CuptiSource::Impl {
  mutable std::mutex mu;
  std::condition_variable work_cv;  // the decoder waits for buffers
  std::condition_variable idle_cv;  // flush() waits for the decoder to finish
  std::deque<CompletedBuffer> queue;
  std::deque<CallChunk> call_queue;  // calls recorded through callbacks (call_recorder.h)
  // Domains whose recorded calls have callbacks on (kKindCalls without the activity kind).
  bool call_callbacks_runtime = false, call_callbacks_driver = false;
  std::vector<std::uint8_t*> pool;
  bool decoding = false;
  std::thread* decoder = nullptr;  // a pointer: a forked child must never join or destroy it
  bool ever_started = false;
  bool running = false;
  // Start, stop and capture windows' switches, one at a time (never under `mu`: CUPTI
  // asks for buffers, which takes `mu`, while kinds are enabled).
  std::mutex recording_mu;
  bool paused = false;  // outside a capture window
  bool callbacks_registered = false;
  // Set in a child forked from a process that was capturing: CUPTI's state there belongs
  // to the parent, so this process neither starts nor writes.
  bool dead_after_fork = false;
  std::uint32_t enabled_kinds = 0;
  CUpti_SubscriberHandle subscriber = nullptr;
  SourceOptions options;
  // Decoded records; snapshot() copies them without holding `mu` (segmented_batch.h).
  capture::SegmentedBatch batch;
  std::uint64_t batch_bytes = 0;
  std::uint64_t allocated_bytes = 0;
  SourceStats stats;
  std::function<void()> reset_hook;
  // Decoder-thread state.
  std::unordered_set<std::uint32_t> named_threads;
  std::unordered_set<std::uint32_t> known_devices;

  void request(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records);
  void complete(CUcontext ctx, std::uint32_t stream, std::uint8_t* buffer, std::size_t valid);
  void decode_loop();
  void queue_calls(CallChunk&& chunk);
  bool idle() const { return queue.empty() && call_queue.empty() && !decoding; }
  void note_new_threads_and_devices(RecordBatch& local);
  // The activity kinds, query filters, NCCL and call callbacks; the bits enabled, or
  // nothing with `error` set when the kernel kind is refused.
  std::optional<std::uint32_t> enable_recording(std::string* error);
  void disable_recording(std::uint32_t enabled);
  std::uint64_t memory() const { return allocated_bytes + batch_bytes; }
};

namespace {

CuptiSource::Impl* g_impl = nullptr;  // CUPTI's callbacks are plain functions

void CUPTIAPI on_buffer_requested(std::uint8_t** buffer, std::size_t* size,
                                  std::size_t* max_records) {
  const capture::SelfTimer timer(capture::SelfPart::kBufferRequest);
  g_impl->request(buffer, size, max_records);
}

void CUPTIAPI on_buffer_completed(CUcontext ctx, std::uint32_t stream, std::uint8_t* buffer,
                                  std::size_t size, std::size_t valid) {
  (void)size;
  const capture::SelfTimer timer(capture::SelfPart::kBufferComplete);
  g_impl->complete(ctx, stream, buffer, valid);
}

}  // namespace

void CUPTIAPI on_api_callback(void* user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                              const void* data) {
  (void)user;
  const capture::SelfTimer timer(capture::SelfPart::kCallback);
  if (domain == CUPTI_CB_DOMAIN_RESOURCE && cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
    GpuMetricsSampler::instance().on_context_destroying(
        static_cast<const CUpti_ResourceData*>(data)->context);
    return;
  }
  if (domain == CUPTI_CB_DOMAIN_NVTX) {
    on_nccl_call_callback(cbid, static_cast<const CUpti_NvtxData*>(data));
    CaptureWindowControl::instance().on_nvtx_callback(cbid,
                                                      static_cast<const CUpti_NvtxData*>(data));
    return;
  }
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  // cudaProfilerStart/Stop and cuProfilerStart/Stop; at once for any other call.
  CaptureWindowControl::instance().on_api_callback(domain, cbid, cb);
  on_call_callback(domain, cbid, cb);  // returns at once unless kKindCalls is recording
  // A measured launch's recorded call spans its replay; its kernel says it was replayed.
  CounterProfiler::instance().on_callback(domain, cbid, cb);    // at once unless counting
  GpuMetricsSampler::instance().on_callback(domain, cbid, cb);  // at once unless sampling
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API ||
      cbid != CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020) {
    return;
  }
  // After the reset: CUPTI has then completed the records of the destroyed context, so
  // the trace written now holds everything that ran on it.
  if (cb->callbackSite != CUPTI_API_EXIT) return;
  std::function<void()> hook;
  {
    std::lock_guard<std::mutex> lock(g_impl->mu);
    hook = g_impl->reset_hook;
  }
  if (hook) hook();
}

void CuptiSource::Impl::request(std::uint8_t** buffer, std::size_t* size,
                                std::size_t* max_records) {
  *max_records = 0;  // as many as fit
  std::lock_guard<std::mutex> lock(mu);
  if (!pool.empty()) {
    *buffer = pool.back();
    pool.pop_back();
    *size = options.buffer_bytes;
    return;
  }
  if (memory() + options.buffer_bytes > options.max_memory_bytes) {
    // Over the cap: CUPTI drops what it cannot store and counts it.
    *buffer = nullptr;
    *size = 0;
    ++stats.buffers_refused;
    return;
  }
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(kBufferAlign, options.buffer_bytes));
  *size = *buffer != nullptr ? options.buffer_bytes : 0;
  if (*buffer != nullptr) allocated_bytes += options.buffer_bytes;
  stats.peak_memory_bytes = std::max(stats.peak_memory_bytes, memory());
}

void CuptiSource::Impl::complete(CUcontext ctx, std::uint32_t stream, std::uint8_t* buffer,
                                 std::size_t valid) {
  if (buffer == nullptr) return;
  std::size_t dropped = 0;
  cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped);
  std::lock_guard<std::mutex> lock(mu);
  stats.cupti_dropped += dropped;
  ++stats.buffers_completed;
  if (valid == 0) {
    pool.push_back(buffer);
    return;
  }
  // Only queue: decoding happens on the decoder thread, never on the thread CUPTI
  // called us on (which may be the program's own launching thread).
  queue.push_back({buffer, valid});
  work_cv.notify_one();
}

void CuptiSource::Impl::queue_calls(CallChunk&& chunk) {
  // On the calling thread: only queue (decoding is the decoder thread's job).
  std::lock_guard<std::mutex> lock(mu);
  if (memory() > options.max_memory_bytes) {
    stats.cap_dropped_records += chunk.size();
    return;
  }
  call_queue.push_back(std::move(chunk));
  work_cv.notify_one();
}

void CuptiSource::Impl::note_new_threads_and_devices(RecordBatch& local) {
  for (const capture::ApiRecord& a : local.api_calls) {
    if (named_threads.insert(a.thread_id).second) {
      std::string name = thread_name(a.thread_id);
      if (!name.empty()) local.thread_names.push_back({a.thread_id, std::move(name)});
    }
  }
  auto device = [&](std::uint32_t ordinal) {
    if (!known_devices.insert(ordinal).second) return;
    if (auto info = query_device(ordinal)) local.devices.push_back(std::move(*info));
  };
  for (const auto& k : local.kernels) device(k.device);
  for (const auto& m : local.memcpys) device(m.device);
  for (const auto& m : local.memsets) device(m.device);
}

void CuptiSource::Impl::decode_loop() {
  ApiNames names(api_name);
  const std::uint32_t pid = static_cast<std::uint32_t>(getpid());
  for (;;) {
    std::unique_lock<std::mutex> lock(mu);
    work_cv.wait(lock, [&] { return !queue.empty() || !call_queue.empty(); });
    if (!call_queue.empty()) {
      CallChunk calls = std::move(call_queue.front());
      call_queue.pop_front();
      decoding = true;
      lock.unlock();
      const capture::SelfTimer timer(capture::SelfPart::kDecode);
      RecordBatch local;
      std::uint64_t bytes = 0;
      for (const CallRecord& c : calls) bytes += append_call(c, pid, local, names);
      note_new_threads_and_devices(local);
      lock.lock();
      batch.append(std::move(local));
      batch_bytes += bytes;
      stats.records += calls.size();
      stats.peak_memory_bytes = std::max(stats.peak_memory_bytes, memory());
      decoding = false;
      if (idle()) idle_cv.notify_all();
      continue;
    }
    const CompletedBuffer buf = queue.front();
    queue.pop_front();
    decoding = true;
    const bool over_cap = batch_bytes + allocated_bytes > options.max_memory_bytes;
    lock.unlock();
    const capture::SelfTimer timer(capture::SelfPart::kDecode);

    RecordBatch local;
    std::uint64_t bytes = 0, kept = 0, thrown = 0;
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buf.data, buf.valid, &record) == CUPTI_SUCCESS) {
      if (over_cap) {
        ++thrown;
        continue;
      }
      const std::size_t b = append_activity(record, local, names);
      bytes += b;
      kept += b > 0 ? 1 : 0;
    }
    note_new_threads_and_devices(local);

    lock.lock();
    stats.unfinished_records += local.unfinished_records;
    batch.append(std::move(local));
    batch_bytes += bytes;
    stats.records += kept;
    stats.cap_dropped_records += thrown;
    stats.peak_memory_bytes = std::max(stats.peak_memory_bytes, memory());
    pool.push_back(buf.data);
    decoding = false;
    if (idle()) idle_cv.notify_all();
  }
}

CuptiSource::CuptiSource() : impl_(new Impl) {
  g_impl = impl_;
}

CuptiSource& CuptiSource::instance() {
  static CuptiSource* source = new CuptiSource;  // never destroyed: see the header
  return *source;
}

bool CuptiSource::start(const SourceOptions& options, std::string* error) {
  Impl& s = *impl_;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.running) return true;
    if (s.dead_after_fork) {
      if (error)
        *error = "this process was forked from a capturing process; CUDA cannot start here";
      return false;
    }
    s.options = options;
    if (s.options.buffer_bytes < (64u << 10)) s.options.buffer_bytes = 64u << 10;
  }
  // OS thread ids (gettid), so API records and NVTX ranges land on the threads that
  // /proc and other tools name.
  cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
  if (!s.callbacks_registered) {
    const CUptiResult r = cuptiActivityRegisterCallbacks(on_buffer_requested, on_buffer_completed);
    if (r != CUPTI_SUCCESS) {
      if (error) *error = "cuptiActivityRegisterCallbacks: " + cupti_error(r);
      return false;
    }
    s.callbacks_registered = true;
  }
  if (s.decoder == nullptr) s.decoder = new std::thread([&s] { s.decode_loop(); });
  if (s.subscriber == nullptr) {
    // Only for the cudaDeviceReset hook; a program that already holds CUPTI's one
    // subscriber slot still gets its activity records, just no write on reset.
    if (cuptiSubscribe(&s.subscriber, on_api_callback, nullptr) == CUPTI_SUCCESS) {
      cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                          CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020);
    } else {
      s.subscriber = nullptr;
    }
  }
  if (options.windows.needs_callbacks() && s.subscriber == nullptr) {
    if (error) *error = "capture ranges need CUPTI's callbacks, and another tool holds them";
    return false;
  }
  std::unique_lock<std::mutex> recording(s.recording_mu);
  const std::optional<std::uint32_t> enabled = s.enable_recording(error);
  if (!enabled) return false;
  if (options.counters && s.subscriber != nullptr) {
    std::string why;
    if (CounterProfiler::instance().start(*options.counters, options.counters_exclude, &why)) {
      CounterProfiler::enable_callbacks(s.subscriber);
    }
  }
  if (options.gpu_metrics_interval_ns && s.subscriber != nullptr) {
    GpuMetricsSampler::instance().start(*options.gpu_metrics_interval_ns);
    CounterProfiler::enable_callbacks(s.subscriber);  // the launch callbacks it starts on
    cuptiEnableCallback(1, s.subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                        CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);  // where it stops
  }
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.enabled_kinds = *enabled;
    s.paused = false;
    s.running = true;
    s.ever_started = true;
  }
  recording.unlock();  // the window control's first decision switches recording
  // With windows, recording is on until the control's first decision, made before any
  // of the program's work can run (this is CUDA's or NVTX's initialization). Without,
  // the control only forgets an earlier capture's windows.
  std::uint64_t now = 0;
  cuptiGetTimestamp(&now);
  CaptureWindowControl::instance().start(
      options.windows, options.window_origin_ns.value_or(static_cast<std::int64_t>(now)),
      s.subscriber, [this](bool on) { set_recording(on); });
  return true;
}

std::optional<std::uint32_t> CuptiSource::Impl::enable_recording(std::string* error) {
  std::uint32_t enabled = 0;
  for (const KindEntry& k : kKinds) {
    if ((options.kinds & k.bit) == 0) continue;
    const CUptiResult r = cuptiActivityEnable(k.kind);
    if (r == CUPTI_SUCCESS) {
      enabled |= k.bit;
    } else if (k.required) {
      if (error) *error = "cuptiActivityEnable(CONCURRENT_KERNEL): " + cupti_error(r);
      for (const KindEntry& e : kKinds) {
        if (enabled & e.bit) cuptiActivityDisable(e.kind);
      }
      return std::nullopt;
    }
  }
  if ((options.kinds & capture::kKindQueries) == 0) {
    // After enabling RUNTIME and DRIVER: enabling a kind resets the per-call choices.
    if (enabled & capture::kKindRuntime) {
      for (std::uint32_t cbid = 1; cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE; ++cbid) {
        if (capture::is_query_api(api_name(capture::ApiDomain::kRuntime, cbid))) {
          cuptiActivityEnableRuntimeApi(cbid, 0);
        }
      }
    }
    if (enabled & capture::kKindDriver) {
      for (std::uint32_t cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; ++cbid) {
        if (capture::is_query_api(api_name(capture::ApiDomain::kDriver, cbid))) {
          cuptiActivityEnableDriverApi(cbid, 0);
        }
      }
    }
  }
  // NCCL's calls with their sizes, beside the NVTX ranges that name them.
  if ((enabled & capture::kKindNvtx) != 0 && subscriber != nullptr &&
      enable_nccl_call_callbacks(subscriber, true)) {
    set_nccl_calls_recording(true);
  }
  // Calls through callbacks, for the domains whose activity records are not on.
  bool calls_runtime = false, calls_driver = false;
  if ((options.kinds & capture::kKindCalls) != 0 && subscriber != nullptr) {
    set_call_sink([this](CallChunk&& chunk) { queue_calls(std::move(chunk)); });
    calls_runtime = (enabled & capture::kKindRuntime) == 0;
    calls_driver = (enabled & capture::kKindDriver) == 0;
    if (enable_call_callbacks(subscriber, calls_runtime, calls_driver, true) > 0) {
      enabled |= capture::kKindCalls;
      set_calls_recording(true);
    }
  }
  std::lock_guard<std::mutex> lock(mu);
  call_callbacks_runtime = calls_runtime;
  call_callbacks_driver = calls_driver;
  return enabled;
}

void CuptiSource::Impl::disable_recording(std::uint32_t enabled) {
  set_nccl_calls_recording(false);
  for (const KindEntry& k : kKinds) {
    if (enabled & k.bit) cuptiActivityDisable(k.kind);
  }
  if (enabled & capture::kKindCalls) {
    set_calls_recording(false);
    enable_call_callbacks(subscriber, call_callbacks_runtime, call_callbacks_driver, false);
    // The reset hook's callback is one of the recorded calls: keep it.
    cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                        CUPTI_RUNTIME_TRACE_CBID_cudaDeviceReset_v3020);
    // So are the launches counters and GPU metrics follow: a launch whose exit they
    // never saw would leave them waiting for it. They keep to windows themselves
    // (capture_window_open()).
    if (options.counters || options.gpu_metrics_interval_ns) {
      CounterProfiler::enable_callbacks(subscriber);
    }
  }
}

void CuptiSource::set_recording(bool on) {
  Impl& s = *impl_;
  // Never waits: start() and stop() hold it while they switch everything themselves.
  std::unique_lock<std::mutex> recording(s.recording_mu, std::try_to_lock);
  if (!recording.owns_lock()) return;
  std::uint32_t enabled = 0;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (!s.running || s.paused == !on) return;
    enabled = s.enabled_kinds;
  }
  if (on) {
    std::string error;
    const std::optional<std::uint32_t> now_enabled = s.enable_recording(&error);
    std::lock_guard<std::mutex> lock(s.mu);
    s.enabled_kinds = now_enabled.value_or(0);
    s.paused = false;
  } else {
    s.disable_recording(enabled);
    std::lock_guard<std::mutex> lock(s.mu);
    s.enabled_kinds = 0;
    s.paused = true;
  }
}

bool CuptiSource::running() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->running;
}

void CuptiSource::flush() {
  Impl& s = *impl_;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (!s.ever_started || s.dead_after_fork) return;
  }
  // Forced: also buffers holding records not complete yet (an exit, a crash); such
  // records are left out by the converter.
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  drain_calls();  // every thread's recorded calls to the decoder (not under s.mu: it queues)
  std::unique_lock<std::mutex> lock(s.mu);
  s.idle_cv.wait(lock, [&] { return s.idle(); });
}

void CuptiSource::flush_completed() {
  Impl& s = *impl_;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (!s.running || s.dead_after_fork) return;
  }
  cuptiActivityFlushAll(0);
  drain_calls();
  std::unique_lock<std::mutex> lock(s.mu);
  s.idle_cv.wait(lock, [&] { return s.idle(); });
}

void CuptiSource::stop() {
  Impl& s = *impl_;
  // The window open now ends here, and no window switches recording after this.
  CaptureWindowControl::instance().finish();
  std::uint32_t enabled = 0;
  std::unique_lock<std::mutex> recording(s.recording_mu);
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (!s.running) return;
    enabled = s.enabled_kinds;
  }
  GpuMetricsSampler::instance().stop();
  s.disable_recording(enabled);
  recording.unlock();
  flush();
  std::lock_guard<std::mutex> lock(s.mu);
  s.running = false;
  s.enabled_kinds = 0;
}

namespace {

// What a batch says about its process and run, the same for snapshot() and take().
void add_process(RecordBatch& b, std::uint64_t dropped, std::uint64_t unfinished) {
  b.dropped_records = dropped;
  b.unfinished_records = unfinished;
  b.process_id = static_cast<std::uint32_t>(getpid());
  b.process_name = process_name();
  const capture::GetEnv getenv = [](const char* name) { return std::getenv(name); };
  b.world_size = capture::job_world_size(getenv);
  b.rank = capture::numeric_rank(getenv);
  b.time_base = capture::run_time_base(getenv);
  b.capture_range = CaptureWindowControl::instance().description();
  b.capture_windows = CaptureWindowControl::instance().windows();
}

}  // namespace

SourceOptions source_options(const capture::CaptureEnv& config) {
  SourceOptions o;
  o.kinds = config.kinds;
  o.max_memory_bytes = config.max_memory_bytes;
  if (config.counters.on) o.counters = config.counters.per_signature;
  o.counters_exclude = config.counters_exclude;
  if (config.gpu_metrics.on) o.gpu_metrics_interval_ns = config.gpu_metrics.interval_ns;
  o.windows = config.windows;
  return o;
}

RecordBatch CuptiSource::snapshot() {
  capture::SegmentedBatch::Segments segments;
  std::uint64_t dropped = 0, unfinished = 0;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    segments = impl_->batch.seal();
    dropped = impl_->stats.dropped();
    unfinished = impl_->stats.unfinished_records;
  }
  RecordBatch b = capture::SegmentedBatch::flatten(segments);  // the copy, without `mu`
  add_process(b, dropped, unfinished);
  CounterProfiler::instance().snapshot(&b.counters, &b.counter_records, &b.inferred_launches);
  GpuMetricsSampler::instance().snapshot(&b.gpu_metrics, &b.gpu_metric_samples);
  b.nccl_calls = nccl_call_records();
  capture::place_replayed_kernels(b);
  return b;
}

RecordBatch CuptiSource::take(bool last) {
  capture::SegmentedBatch::Segments segments;
  std::uint64_t dropped = 0, unfinished = 0;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    segments = impl_->batch.take();
    impl_->batch_bytes = 0;  // the records are the taker's now
    dropped = impl_->stats.dropped();
    unfinished = impl_->stats.unfinished_records;
  }
  RecordBatch b = capture::SegmentedBatch::merge(std::move(segments));  // without `mu`
  add_process(b, dropped, unfinished);
  CounterProfiler::instance().take(&b.counters, &b.counter_records, &b.inferred_launches, last);
  GpuMetricsSampler::instance().take(&b.gpu_metrics, &b.gpu_metric_samples);
  b.nccl_calls = take_nccl_call_records();
  return b;
}

void CuptiSource::clear() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->batch.clear_records();  // devices and thread names stay: each is reported once
  clear_nccl_call_records();
  impl_->batch_bytes = 0;
  impl_->stats.records = 0;
  impl_->stats.cupti_dropped = 0;
  impl_->stats.cap_dropped_records = 0;
  impl_->stats.unfinished_records = 0;
}

SourceStats CuptiSource::stats() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  SourceStats s = impl_->stats;
  s.memory_bytes = impl_->memory();
  return s;
}

void CuptiSource::set_device_reset_hook(std::function<void()> hook) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->reset_hook = std::move(hook);
}

void CuptiSource::reset_after_fork() {
  // Runs in the child right after fork(): only this thread exists, and the old state's
  // mutex may have been held by a thread that is gone. Leave the old state untouched
  // (leaked, its pages shared with the parent) and start from a fresh one.
  const bool was_capturing = impl_->ever_started;
  set_calls_recording(false);  // the parent's threads and their buffers are not here
  set_nccl_calls_recording(false);
  CounterProfiler::instance().reset_after_fork();
  GpuMetricsSampler::instance().reset_after_fork();
  CaptureWindowControl::instance().reset_after_fork();
  impl_ = new Impl;
  g_impl = impl_;
  impl_->dead_after_fork = was_capturing;
}

std::string CuptiSource::cupti_library_path() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cuptiActivityEnable), &info) != 0 &&
      info.dli_fname != nullptr) {
    return info.dli_fname;
  }
  return {};
}

int CuptiSource::forward_nvtx_injection(void* get_export_table) {
  using Entry = int (*)(void*);
  const std::string path = cupti_library_path();
  if (path.empty()) return 0;
  // The handle of the libcupti already loaded (a dependency of this library), so dlsym
  // finds CUPTI's InitializeInjectionNvtx2, not flopline's own of the same name.
  void* lib = dlopen(path.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (lib == nullptr) return 0;
  const auto entry = reinterpret_cast<Entry>(dlsym(lib, "InitializeInjectionNvtx2"));
  return entry != nullptr ? entry(get_export_table) : 0;
}

}  // namespace flopline::cupti
