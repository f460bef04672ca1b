// PM sampling of gpu_metrics_sampler.h.
#include "gpu_metrics_sampler.h"

#include <cupti_pmsampling.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "profiler_host.h"

namespace flopline::cupti {
namespace {

constexpr std::size_t kHardwareBufferBytes = 128u << 20;
// Samples per counter-data image: evaluating one sample costs more the larger the
// image, so images stay small and are emptied often.
constexpr std::uint32_t kSamplesPerDecode = 512;
// How often the background thread empties the hardware buffers: at the shortest
// interval the buffer holds far more than this many samples.
constexpr auto kDecodePeriod = std::chrono::milliseconds(20);
// One round of the background thread decodes for at most this long, so it sees a stop
// request soon even while the GPU fills the buffer faster than it can be decoded.
constexpr auto kDecodeRoundLimit = std::chrono::milliseconds(200);
// The final decode at exit never takes longer than this; what is left is counted.
constexpr auto kFinalDecodeLimit = std::chrono::seconds(5);
// Before sampling stops, the backlog is decoded for at most this long: after
// cuptiPmSamplingStop, a decode that filled one counter-data image was seen followed by
// one that found nothing, and those runs lacked the samples of their last milliseconds;
// the runs whose backlog fitted one image kept them (docs/COUNTERS.md, GPU metrics).
constexpr auto kDrainBeforeStop = std::chrono::milliseconds(500);
// Past its limit plus this, a decode is taken to be stuck inside CUPTI.
constexpr auto kStuckMargin = std::chrono::seconds(2);

// FLOPLINE_GPU_METRICS_DEBUG: each step of setting up, decoding and stopping on stderr,
// with the time since the sampler started, to find where a run waits.
bool debug_enabled() {
  static const bool on = std::getenv("FLOPLINE_GPU_METRICS_DEBUG") != nullptr;
  return on;
}
void debug(const char* format, ...) __attribute__((format(printf, 1, 2)));
void debug(const char* format, ...) {
  if (!debug_enabled()) return;
  static const auto t0 = std::chrono::steady_clock::now();
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  char line[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(line, sizeof line, format, args);
  va_end(args);
  std::fprintf(stderr, "flopline gpu metrics [%d, %.1f ms]: %s\n", static_cast<int>(getpid()), ms,
               line);
}

struct DeviceSampler {
  std::uint32_t device = 0;
  CUcontext context = nullptr;  // the context of the launch that started sampling
  CUpti_PmSampling_Object* object = nullptr;
  std::unique_ptr<ProfilerHost> host;
  std::vector<capture::GpuMetric> metrics;
  std::vector<std::uint8_t> config;
  std::vector<std::uint8_t> counter_data;
  bool running = false;
  bool finished = false;  // stopped and decoded for the last time (its context gone, or stop)
};

// Makes a context current on the calling thread for its lifetime, then puts back the one
// that was current. Stopping and decoding run on threads of flopline's own, which have no
// current context, and on a program's thread that is destroying a context, whose current
// context must stay its own. The driver's entry points are looked up rather than linked,
// so that flopline's libraries load where there is no driver.
class CurrentContext {
 public:
  explicit CurrentContext(CUcontext context) {
    const Driver& d = driver();
    if (d.get == nullptr || d.set == nullptr || context == nullptr) return;
    if (d.get(&previous_) != CUDA_SUCCESS || previous_ == context) return;
    switched_ = d.set(context) == CUDA_SUCCESS;
    debug("cuCtxSetCurrent: %s", switched_ ? "done" : "failed");
  }
  ~CurrentContext() {
    if (switched_) driver().set(previous_);
  }
  CurrentContext(const CurrentContext&) = delete;
  CurrentContext& operator=(const CurrentContext&) = delete;

 private:
  struct Driver {
    CUresult (*get)(CUcontext*) = nullptr;
    CUresult (*set)(CUcontext) = nullptr;
  };
  static const Driver& driver() {
    static const Driver d = [] {
      Driver out;
      void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
      if (lib == nullptr) return out;
      out.get = reinterpret_cast<CUresult (*)(CUcontext*)>(dlsym(lib, "cuCtxGetCurrent"));
      out.set = reinterpret_cast<CUresult (*)(CUcontext)>(dlsym(lib, "cuCtxSetCurrent"));
      return out;
    }();
    return d;
  }
  CUcontext previous_ = nullptr;
  bool switched_ = false;
};

std::string failure(const std::string& what, CUptiResult r) {
  std::string s = what + ": " + cupti_result_text(r);
  if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
    s += " (run as root, or load the NVIDIA module with NVreg_RestrictProfilingToAdminUsers=0)";
  }
  return s;
}

bool reset_data(DeviceSampler& d, CUptiResult* r) {
  auto p = cupti_params<CUpti_PmSampling_CounterDataImage_Initialize_Params>(
      CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  p.pPmSamplingObject = d.object;
  p.counterDataSize = d.counter_data.size();
  p.pCounterData = d.counter_data.data();
  *r = cuptiPmSamplingCounterDataImageInitialize(&p);
  return *r == CUPTI_SUCCESS;
}

void disable(DeviceSampler& d) {
  if (d.object == nullptr) return;
  auto p =
      cupti_params<CUpti_PmSampling_Disable_Params>(CUpti_PmSampling_Disable_Params_STRUCT_SIZE);
  p.pPmSamplingObject = d.object;
  cuptiPmSamplingDisable(&p);
  d.object = nullptr;
}

std::unique_ptr<DeviceSampler> set_up(std::uint32_t device, CUcontext context,
                                      std::int64_t interval_ns, std::vector<std::string>* missing,
                                      std::string* why) {
  debug("device %u: set up", device);
  const auto initialized = static_cast<CUptiResult>(initialize_profiler());
  debug("cuptiProfilerInitialize: %d", static_cast<int>(initialized));
  if (initialized != CUPTI_SUCCESS) {
    *why = failure("cuptiProfilerInitialize", initialized);
    return nullptr;
  }
  auto d = std::make_unique<DeviceSampler>();
  d->device = device;
  d->context = context;
  auto chip =
      cupti_params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  chip.deviceIndex = device;
  CUptiResult r = cuptiDeviceGetChipName(&chip);
  if (r != CUPTI_SUCCESS) {
    *why = failure("cuptiDeviceGetChipName", r);
    return nullptr;
  }
  auto en =
      cupti_params<CUpti_PmSampling_Enable_Params>(CUpti_PmSampling_Enable_Params_STRUCT_SIZE);
  en.deviceIndex = device;
  debug("chip %s: cuptiPmSamplingEnable", chip.pChipName);
  if ((r = cuptiPmSamplingEnable(&en)) != CUPTI_SUCCESS) {
    *why = failure("cuptiPmSamplingEnable", r);
    return nullptr;
  }
  d->object = en.pPmSamplingObject;
  std::vector<std::uint8_t> availability;
  auto ca = cupti_params<CUpti_PmSampling_GetCounterAvailability_Params>(
      CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE);
  ca.deviceIndex = device;
  if (cuptiPmSamplingGetCounterAvailability(&ca) == CUPTI_SUCCESS) {
    availability.resize(ca.counterAvailabilityImageSize);
    ca.pCounterAvailabilityImage = availability.data();
    if (cuptiPmSamplingGetCounterAvailability(&ca) != CUPTI_SUCCESS) availability.clear();
  }
  debug("enabled; counter availability %zu bytes", availability.size());
  d->host =
      ProfilerHost::create(CUPTI_PROFILER_TYPE_PM_SAMPLING, chip.pChipName, availability, why);
  if (!d->host) {
    disable(*d);
    return nullptr;
  }
  d->metrics = capture::plan_gpu_metrics(d->host->base_metrics(), missing);
  std::vector<std::string> names;
  for (const capture::GpuMetric& m : d->metrics) names.push_back(m.name);
  if (names.empty() || !d->host->configure(names, &d->config, why)) {
    if (names.empty())
      *why = std::string("chip ") + chip.pChipName + " lists none of the sampled metrics";
    disable(*d);
    return nullptr;
  }
  debug("%zu metrics configured, config %zu bytes", names.size(), d->config.size());
  auto sc = cupti_params<CUpti_PmSampling_SetConfig_Params>(
      CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE);
  sc.pPmSamplingObject = d->object;
  sc.configSize = d->config.size();
  sc.pConfig = d->config.data();
  sc.hardwareBufferSize = kHardwareBufferBytes;
  sc.samplingInterval = static_cast<std::uint64_t>(interval_ns);
  sc.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
  sc.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
  if ((r = cuptiPmSamplingSetConfig(&sc)) != CUPTI_SUCCESS) {
    *why = failure("cuptiPmSamplingSetConfig", r);
    disable(*d);
    return nullptr;
  }
  std::vector<const char*> c;
  for (const std::string& n : names) c.push_back(n.c_str());
  auto ds = cupti_params<CUpti_PmSampling_GetCounterDataSize_Params>(
      CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE);
  ds.pPmSamplingObject = d->object;
  ds.pMetricNames = c.data();
  ds.numMetrics = c.size();
  ds.maxSamples = kSamplesPerDecode;
  if ((r = cuptiPmSamplingGetCounterDataSize(&ds)) != CUPTI_SUCCESS) {
    *why = failure("cuptiPmSamplingGetCounterDataSize", r);
    disable(*d);
    return nullptr;
  }
  d->counter_data.assign(ds.counterDataSize, 0);
  debug("config set; counter data %zu bytes", d->counter_data.size());
  if (!reset_data(*d, &r)) {
    *why = failure("cuptiPmSamplingCounterDataImageInitialize", r);
    disable(*d);
    return nullptr;
  }
  auto st = cupti_params<CUpti_PmSampling_Start_Params>(CUpti_PmSampling_Start_Params_STRUCT_SIZE);
  st.pPmSamplingObject = d->object;
  if ((r = cuptiPmSamplingStart(&st)) != CUPTI_SUCCESS) {
    *why = failure("cuptiPmSamplingStart", r);
    disable(*d);
    return nullptr;
  }
  d->running = true;
  debug("device %u: sampling every %lld ns", device, static_cast<long long>(interval_ns));
  return d;
}

}  // namespace

struct GpuMetricsSampler::Impl {
  std::atomic<bool> enabled{false};
  std::mutex mu;         // devices, info, samples
  std::mutex decode_mu;  // one decode at a time (the thread, stop, snapshot)
  std::condition_variable wake;
  bool stopping = false;
  bool loop_exited = false;  // the decode thread has left its loop
  std::condition_variable exited;
  std::thread* thread = nullptr;  // a pointer: a forked child never joins it
  std::int64_t interval_ns = 100000;
  std::map<std::uint32_t, std::unique_ptr<DeviceSampler>> devices;
  std::map<std::uint32_t, bool> refused;  // devices that could not be sampled
  capture::GpuMetricsInfo info;
  std::vector<capture::GpuMetricSample> samples;

  // Decodes until the hardware buffers are empty or `deadline` passes; a final decode
  // that runs out of time marks the samples unfinished.
  void decode_all(std::chrono::steady_clock::time_point deadline, bool final);
  // decode_all for `ds`, decode_mu held; a final decode marks them finished.
  void decode_devices(const std::vector<DeviceSampler*>& ds,
                      std::chrono::steady_clock::time_point deadline, bool final);
  bool decode(DeviceSampler& d, std::vector<capture::GpuMetricSample>& out,
              std::chrono::steady_clock::time_point deadline);
  void loop();
  // Sets up sampling of `device` and records the outcome; mu held.
  void add_device(std::uint32_t device, CUcontext context);
  // Stops sampling `d` (on the calling thread).
  static void stop_sampling(DeviceSampler& d);
};

// False when `deadline` passed with records still in the hardware buffer.
bool GpuMetricsSampler::Impl::decode(DeviceSampler& d, std::vector<capture::GpuMetricSample>& out,
                                     std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    auto p = cupti_params<CUpti_PmSampling_DecodeData_Params>(
        CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE);
    const CurrentContext current(d.context);
    debug("device %u: cuptiPmSamplingDecodeData", d.device);
    p.pPmSamplingObject = d.object;
    p.pCounterDataImage = d.counter_data.data();
    p.counterDataImageSize = d.counter_data.size();
    const auto t0 = std::chrono::steady_clock::now();
    const CUptiResult r = cuptiPmSamplingDecodeData(&p);
    if (p.overflow) {
      std::lock_guard<std::mutex> lock(mu);
      ++info.overflows;
    }
    if (r != CUPTI_SUCCESS) {
      // CUPTI_ERROR_OUT_OF_MEMORY: the hardware buffer overflowed (counted above).
      debug("device %u: decode: %s", d.device, cupti_result_text(r).c_str());
      return true;
    }
    auto ci = cupti_params<CUpti_PmSampling_GetCounterDataInfo_Params>(
        CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE);
    ci.pCounterDataImage = d.counter_data.data();
    ci.counterDataImageSize = d.counter_data.size();
    if (cuptiPmSamplingGetCounterDataInfo(&ci) != CUPTI_SUCCESS) return true;
    std::vector<double> raw;
    for (std::size_t i = 0; i < ci.numCompletedSamples; ++i) {
      auto si = cupti_params<CUpti_PmSampling_CounterData_GetSampleInfo_Params>(
          CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE);
      si.pPmSamplingObject = d.object;
      si.pCounterDataImage = d.counter_data.data();
      si.counterDataImageSize = d.counter_data.size();
      si.sampleIndex = i;
      if (cuptiPmSamplingCounterDataGetSampleInfo(&si) != CUPTI_SUCCESS) continue;
      if (!d.host->evaluate(d.counter_data, i, &raw, nullptr)) continue;
      capture::GpuMetricSample s;
      s.device = d.device;
      s.start = static_cast<capture::TimeNs>(si.startTimestamp);
      s.end = static_cast<capture::TimeNs>(si.endTimestamp);
      for (std::size_t m = 0; m < raw.size() && m < d.metrics.size(); ++m) {
        s.values.push_back(raw[m] * d.metrics[m].scale);
      }
      out.push_back(std::move(s));
    }
    debug("decoded %zu samples (stop reason %d, overflow %d) in %.1f ms", ci.numCompletedSamples,
          static_cast<int>(p.decodeStopReason), static_cast<int>(p.overflow),
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    CUptiResult reset = CUPTI_SUCCESS;
    reset_data(d, &reset);
    if (p.decodeStopReason != CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL) return true;
  }
}

void GpuMetricsSampler::Impl::decode_all(std::chrono::steady_clock::time_point deadline,
                                         bool final) {
  std::lock_guard<std::mutex> one(decode_mu);
  std::vector<DeviceSampler*> ds;
  {
    std::lock_guard<std::mutex> lock(mu);
    for (auto& [id, d] : devices) {
      if (d->object != nullptr && !d->finished) ds.push_back(d.get());
    }
  }
  decode_devices(ds, deadline, final);
}

void GpuMetricsSampler::Impl::decode_devices(const std::vector<DeviceSampler*>& ds,
                                             std::chrono::steady_clock::time_point deadline,
                                             bool final) {
  std::vector<capture::GpuMetricSample> out;
  bool complete = true;
  for (DeviceSampler* d : ds) complete = decode(*d, out, deadline) && complete;
  std::lock_guard<std::mutex> lock(mu);
  if (final) {
    for (DeviceSampler* d : ds) d->finished = true;
  }
  if (!complete && final) info.unfinished = true;
  samples.insert(samples.end(), std::make_move_iterator(out.begin()),
                 std::make_move_iterator(out.end()));
}

void GpuMetricsSampler::Impl::loop() {
  std::unique_lock<std::mutex> lock(mu);
  while (!stopping) {
    wake.wait_for(lock, kDecodePeriod, [this] { return stopping; });
    if (stopping) break;
    lock.unlock();
    decode_all(std::chrono::steady_clock::now() + kDecodeRoundLimit, false);
    lock.lock();
  }
  loop_exited = true;
  exited.notify_all();
}

GpuMetricsSampler::GpuMetricsSampler() : impl_(new Impl) {}

GpuMetricsSampler& GpuMetricsSampler::instance() {
  static GpuMetricsSampler* s = new GpuMetricsSampler;  // never destroyed
  return *s;
}

void GpuMetricsSampler::start(std::int64_t interval_ns) {
  Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.mu);
  s.interval_ns = interval_ns;
  s.info.requested = true;
  s.info.interval_ns = interval_ns;
  // CUPTI's profiler is set up at the first launch (it needs a context).
  s.enabled = true;
  if (s.thread == nullptr) {
    s.thread = new std::thread([&s] { s.loop(); });
  }
}

void GpuMetricsSampler::on_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                    const CUpti_CallbackData* data) {
  Impl& s = *impl_;
  // At the exit of the first launch: the context is then fully set up (CUPTI's profiler
  // refuses to start earlier).
  if (!s.enabled.load(std::memory_order_relaxed) || data->callbackSite != CUPTI_API_EXIT) return;
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      break;
    default:
      return;
  }
  // Launches on the context this thread launched on last: a device already handled.
  thread_local CUcontext last = nullptr;
  if (data->context == nullptr || data->context == last) return;
  last = data->context;
  std::uint32_t device = 0;
  if (cuptiGetDeviceId(data->context, &device) != CUPTI_SUCCESS) return;
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.devices.count(device) != 0 || s.refused.count(device) != 0) return;
  s.add_device(device, data->context);
}

void GpuMetricsSampler::Impl::add_device(std::uint32_t device, CUcontext context) {
  std::string why;
  std::vector<std::string> missing;
  auto d = set_up(device, context, interval_ns, &missing, &why);
  if (!d) {
    refused[device] = true;
    if (info.unavailable.empty()) {
      info.unavailable = why;
      std::fprintf(stderr, "flopline: GPU metrics unavailable on device %u: %s\n", device,
                   why.c_str());
    }
    return;
  }
  if (info.names.empty()) {
    for (const capture::GpuMetric& m : d->metrics) {
      info.names.push_back(m.name);
      info.labels.push_back(m.label);
    }
  }
  devices.emplace(device, std::move(d));
  // Registered after the first launch, so after the CUDA runtime registered its own
  // teardown: it runs before that teardown, while CUPTI can still stop and decode
  // (PM sampling calls made during or after it were seen not to return).
  static std::once_flag at_exit;
  std::call_once(at_exit, [] { std::atexit([] { GpuMetricsSampler::instance().stop(); }); });
}

void GpuMetricsSampler::Impl::stop_sampling(DeviceSampler& d) {
  if (!d.running) return;
  const CurrentContext current(d.context);
  debug("device %u: cuptiPmSamplingStop", d.device);
  auto p = cupti_params<CUpti_PmSampling_Stop_Params>(CUpti_PmSampling_Stop_Params_STRUCT_SIZE);
  p.pPmSamplingObject = d.object;
  const CUptiResult r = cuptiPmSamplingStop(&p);
  debug("device %u: stopped (%d)", d.device, static_cast<int>(r));
  d.running = false;
}

void GpuMetricsSampler::on_context_destroying(CUcontext context) {
  Impl& s = *impl_;
  if (!s.enabled.load()) return;
  DeviceSampler* d = nullptr;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    for (auto& [id, sampler] : s.devices) {
      if (sampler->context == context && sampler->running) d = sampler.get();
    }
  }
  if (d == nullptr) return;
  // The context is still alive here and is being destroyed by this thread: stop and
  // decode now, on it, since neither can be done once the context is gone.
  debug("device %u: its context is being destroyed", d->device);
  std::lock_guard<std::mutex> one(s.decode_mu);
  s.decode_devices({d}, std::chrono::steady_clock::now() + kDrainBeforeStop, false);
  Impl::stop_sampling(*d);
  s.decode_devices({d}, std::chrono::steady_clock::now() + kFinalDecodeLimit, true);
}

namespace {

// Ends sampling without waiting on CUPTI again: the samples decoded so far stay, the
// trace says the rest is missing.
void give_up(GpuMetricsSampler::Impl& s, const char* why) {
  std::fprintf(stderr, "flopline: GPU metrics: %s; the trace is written without the rest\n", why);
  std::lock_guard<std::mutex> lock(s.mu);
  s.info.unfinished = true;
}

}  // namespace

// What CUPTI leaves stuck is left behind: the trace is written without the samples not
// decoded in time, and never waits on a call that does not return.
void GpuMetricsSampler::stop() {
  Impl& s = *impl_;
  if (!s.enabled.exchange(false)) return;
  debug("stop: ending the decode thread");
  bool stuck = false;
  {
    std::unique_lock<std::mutex> lock(s.mu);
    s.stopping = true;
    s.wake.notify_all();
    if (s.thread != nullptr) {
      stuck = !s.exited.wait_for(lock, kDecodeRoundLimit + kStuckMargin,
                                 [&s] { return s.loop_exited; });
    }
  }
  if (s.thread != nullptr) {
    if (stuck) {
      s.thread->detach();  // inside a CUPTI call that does not return
    } else {
      s.thread->join();
    }
    delete s.thread;
    s.thread = nullptr;
  }
  if (stuck) {
    give_up(s, "the decode thread did not return from CUPTI");
    return;
  }
  std::vector<DeviceSampler*> ds;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    for (auto& [id, d] : s.devices) ds.push_back(d.get());
  }
  debug("stop: stopping sampling, then the final decode");
  // Both on a thread of their own, so a CUPTI call that never returns cannot hold the exit.
  auto done = std::make_shared<std::promise<void>>();
  std::future<void> finished = done->get_future();
  std::thread([&s, ds, done] {
    s.decode_all(std::chrono::steady_clock::now() + kDrainBeforeStop, false);
    for (DeviceSampler* d : ds) Impl::stop_sampling(*d);
    s.decode_all(std::chrono::steady_clock::now() + kFinalDecodeLimit, true);
    done->set_value();
  }).detach();
  if (finished.wait_for(kFinalDecodeLimit + kStuckMargin) != std::future_status::ready) {
    give_up(s, "stopping or the final decode did not return from CUPTI");
    return;
  }
  // The sampling objects are not disabled: cuptiPmSamplingDisable has been reported to
  // finalize the whole of CUPTI (XLA's PM sampler leaves them enabled for that reason),
  // and the activity records are flushed after this. Stopped, they sample nothing.
  debug("stop: done, %zu samples", s.samples.size());
}

void GpuMetricsSampler::snapshot(capture::GpuMetricsInfo* info,
                                 std::vector<capture::GpuMetricSample>* samples) {
  Impl& s = *impl_;
  if (s.enabled.load()) s.decode_all(std::chrono::steady_clock::now() + kDecodeRoundLimit, false);
  std::lock_guard<std::mutex> lock(s.mu);
  *info = s.info;
  *samples = s.samples;
}

void GpuMetricsSampler::take(capture::GpuMetricsInfo* info,
                             std::vector<capture::GpuMetricSample>* samples) {
  Impl& s = *impl_;
  if (s.enabled.load()) s.decode_all(std::chrono::steady_clock::now() + kDecodeRoundLimit, false);
  std::lock_guard<std::mutex> lock(s.mu);
  *info = s.info;
  *samples = std::move(s.samples);
  s.samples.clear();
}

void GpuMetricsSampler::reset_after_fork() {
  impl_ = new Impl;  // the parent's devices and thread are not this process's
}

}  // namespace flopline::cupti
