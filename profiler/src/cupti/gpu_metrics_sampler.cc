// PM sampling of gpu_metrics_sampler.h.
#include "gpu_metrics_sampler.h"

#include <cupti_pmsampling.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
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

struct DeviceSampler {
  std::uint32_t device = 0;
  CUpti_PmSampling_Object* object = nullptr;
  std::unique_ptr<ProfilerHost> host;
  std::vector<capture::GpuMetric> metrics;
  std::vector<std::uint8_t> config;
  std::vector<std::uint8_t> counter_data;
  bool running = false;
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

std::unique_ptr<DeviceSampler> set_up(std::uint32_t device, std::int64_t interval_ns,
                                      std::vector<std::string>* missing, std::string* why) {
  const auto initialized = static_cast<CUptiResult>(initialize_profiler());
  if (initialized != CUPTI_SUCCESS) {
    *why = failure("cuptiProfilerInitialize", initialized);
    return nullptr;
  }
  auto d = std::make_unique<DeviceSampler>();
  d->device = device;
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
  return d;
}

}  // namespace

struct GpuMetricsSampler::Impl {
  std::atomic<bool> enabled{false};
  std::mutex mu;         // devices, info, samples
  std::mutex decode_mu;  // one decode at a time (the thread, stop, snapshot)
  std::condition_variable wake;
  bool stopping = false;
  std::thread* thread = nullptr;  // a pointer: a forked child never joins it
  std::int64_t interval_ns = 100000;
  std::map<std::uint32_t, std::unique_ptr<DeviceSampler>> devices;
  std::map<std::uint32_t, bool> refused;  // devices that could not be sampled
  capture::GpuMetricsInfo info;
  std::vector<capture::GpuMetricSample> samples;

  // Decodes until the hardware buffers are empty or `deadline` passes; a final decode
  // that runs out of time marks the samples unfinished.
  void decode_all(std::chrono::steady_clock::time_point deadline, bool final);
  bool decode(DeviceSampler& d, std::vector<capture::GpuMetricSample>& out,
              std::chrono::steady_clock::time_point deadline);
  void loop();
};

// False when `deadline` passed with records still in the hardware buffer.
bool GpuMetricsSampler::Impl::decode(DeviceSampler& d, std::vector<capture::GpuMetricSample>& out,
                                     std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    auto p = cupti_params<CUpti_PmSampling_DecodeData_Params>(
        CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE);
    p.pPmSamplingObject = d.object;
    p.pCounterDataImage = d.counter_data.data();
    p.counterDataImageSize = d.counter_data.size();
    const CUptiResult r = cuptiPmSamplingDecodeData(&p);
    if (p.overflow) {
      std::lock_guard<std::mutex> lock(mu);
      ++info.overflows;
    }
    if (r != CUPTI_SUCCESS) return true;
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
      if (d->object != nullptr) ds.push_back(d.get());
    }
  }
  std::vector<capture::GpuMetricSample> out;
  bool complete = true;
  for (DeviceSampler* d : ds) complete = decode(*d, out, deadline) && complete;
  std::lock_guard<std::mutex> lock(mu);
  if (!complete && final) info.unfinished = true;
  if (out.empty()) return;
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
  if (s.thread == nullptr) s.thread = new std::thread([&s] { s.loop(); });
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
  std::string why;
  std::vector<std::string> missing;
  auto d = set_up(device, s.interval_ns, &missing, &why);
  if (!d) {
    s.refused[device] = true;
    if (s.info.unavailable.empty()) {
      s.info.unavailable = why;
      std::fprintf(stderr, "flopline: GPU metrics unavailable on device %u: %s\n", device,
                   why.c_str());
    }
    return;
  }
  if (s.info.names.empty()) {
    for (const capture::GpuMetric& m : d->metrics) {
      s.info.names.push_back(m.name);
      s.info.labels.push_back(m.label);
    }
  }
  s.devices.emplace(device, std::move(d));
}

void GpuMetricsSampler::stop() {
  Impl& s = *impl_;
  if (!s.enabled.exchange(false)) return;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.stopping = true;
  }
  s.wake.notify_all();
  if (s.thread != nullptr) {
    s.thread->join();
    delete s.thread;
    s.thread = nullptr;
  }
  std::vector<DeviceSampler*> ds;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    for (auto& [id, d] : s.devices) ds.push_back(d.get());
  }
  for (DeviceSampler* d : ds) {
    if (!d->running) continue;
    auto p = cupti_params<CUpti_PmSampling_Stop_Params>(CUpti_PmSampling_Stop_Params_STRUCT_SIZE);
    p.pPmSamplingObject = d->object;
    cuptiPmSamplingStop(&p);
    d->running = false;
  }
  s.decode_all(std::chrono::steady_clock::now() + kFinalDecodeLimit, true);
  for (DeviceSampler* d : ds) disable(*d);
}

void GpuMetricsSampler::snapshot(capture::GpuMetricsInfo* info,
                                 std::vector<capture::GpuMetricSample>* samples) {
  Impl& s = *impl_;
  if (s.enabled.load()) s.decode_all(std::chrono::steady_clock::now() + kDecodeRoundLimit, false);
  std::lock_guard<std::mutex> lock(s.mu);
  *info = s.info;
  *samples = s.samples;
}

void GpuMetricsSampler::reset_after_fork() {
  impl_ = new Impl;  // the parent's devices and thread are not this process's
}

}  // namespace flopline::cupti
