// The range profiler of counter_profiler.h.
#include "counter_profiler.h"

#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "flopline/capture/kernel_counts.h"
#include "profiler_host.h"

namespace flopline::cupti {
namespace {

enum class LaunchLevel { kNone, kRuntime, kDriver };

LaunchLevel launch_level(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    switch (cbid) {
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
      case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
        return LaunchLevel::kDriver;
      default:
        return LaunchLevel::kNone;
    }
  }
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    switch (cbid) {
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000:
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000:
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060:
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060:
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000:
      case CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000:
        return LaunchLevel::kRuntime;
      default:
        return LaunchLevel::kNone;
    }
  }
  return LaunchLevel::kNone;
}

capture::LaunchKey launch_key(CUpti_CallbackId cbid, const void* params) {
  capture::LaunchKey k;
  auto from = [&k](const auto* p) {
    k.function = reinterpret_cast<std::uintptr_t>(p->f);
    k.grid[0] = p->gridDimX;
    k.grid[1] = p->gridDimY;
    k.grid[2] = p->gridDimZ;
    k.block[0] = p->blockDimX;
    k.block[1] = p->blockDimY;
    k.block[2] = p->blockDimZ;
    k.shared_memory = p->sharedMemBytes;
  };
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
      from(static_cast<const cuLaunchKernel_params*>(params));
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      from(static_cast<const cuLaunchCooperativeKernel_params*>(params));
      break;
    default: {
      const auto* p = static_cast<const cuLaunchKernelEx_params*>(params);
      k.function = reinterpret_cast<std::uintptr_t>(p->f);
      if (p->config != nullptr) {
        const CUlaunchConfig& c = *p->config;
        k.grid[0] = c.gridDimX;
        k.grid[1] = c.gridDimY;
        k.grid[2] = c.gridDimZ;
        k.block[0] = c.blockDimX;
        k.block[1] = c.blockDimY;
        k.block[2] = c.blockDimZ;
        k.shared_memory = c.sharedMemBytes;
      }
      break;
    }
  }
  return k;
}

std::string why_unavailable(const std::string& what, CUptiResult r) {
  std::string s = what + ": " + cupti_result_text(r);
  if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) {
    s += " (the driver lets only administrators read GPU performance counters: run as root, or "
         "load the NVIDIA module with NVreg_RestrictProfilingToAdminUsers=0; see "
         "https://developer.nvidia.com/ERR_NVGPUCTRPERM)";
  } else if (r == CUPTI_ERROR_NOT_SUPPORTED || r == CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED) {
    s += " (this GPU, driver or virtual machine does not expose performance counters)";
  }
  return s;
}

const char* support_text(CUpti_Profiler_Support_Level level) {
  switch (level) {
    case CUPTI_PROFILER_CONFIGURATION_SUPPORTED:
      return "supported";
    case CUPTI_PROFILER_CONFIGURATION_DISABLED:
      return "disabled by the system";
    case CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED:
      return "unsupported";
    default:
      return "unknown";
  }
}

// Why the device cannot be profiled, or "" when it can.
std::string device_support(std::uint32_t device) {
  auto p = cupti_params<CUpti_Profiler_DeviceSupported_Params>(
      CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE);
  p.cuDevice = static_cast<CUdevice>(device);
  p.api = CUPTI_PROFILER_RANGE_PROFILING;
  if (cuptiProfilerDeviceSupported(&p) != CUPTI_SUCCESS) return {};  // cannot tell: try
  if (p.isSupported == CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return {};
  std::string why = "device " + std::to_string(device) + " cannot be profiled:";
  auto flag = [&why](const char* name, CUpti_Profiler_Support_Level l) {
    if (l != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
      why += std::string(" ") + name + " " + support_text(l) + ";";
  };
  flag("architecture", p.architecture);
  flag("SLI", p.sli);
  flag("vGPU", p.vGpu);
  flag("confidential computing", p.confidentialCompute);
  flag("CMP", p.cmp);
  flag("WSL", p.wsl);
  return why;
}

// The range profiler of one context, set up at its first measured launch.
struct ContextProfiler {
  std::uint32_t device = 0;
  std::unique_ptr<ProfilerHost> host;
  capture::CounterPlan plan;
  std::string chip;
  CUpti_RangeProfiler_Object* object = nullptr;
  std::vector<std::uint8_t> config;
  std::vector<std::uint8_t> counter_data;

  bool reset_counter_data(CUptiResult* r) {
    auto p = cupti_params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = object;
    p.counterDataSize = counter_data.size();
    p.pCounterData = counter_data.data();
    *r = cuptiRangeProfilerCounterDataImageInitialize(&p);
    return *r == CUPTI_SUCCESS;
  }
};

// Sets up counting on `ctx`. On failure `why` says what failed.
std::unique_ptr<ContextProfiler> set_up(CUcontext ctx, std::string* why) {
  auto cp = std::make_unique<ContextProfiler>();
  const auto initialized = static_cast<CUptiResult>(initialize_profiler());
  if (initialized != CUPTI_SUCCESS) {
    *why = why_unavailable("cuptiProfilerInitialize", initialized);
    return nullptr;
  }
  CUptiResult r = cuptiGetDeviceId(ctx, &cp->device);
  if (r != CUPTI_SUCCESS) {
    *why = why_unavailable("cuptiGetDeviceId", r);
    return nullptr;
  }
  if (std::string s = device_support(cp->device); !s.empty()) {
    *why = s;
    return nullptr;
  }
  auto chip =
      cupti_params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  chip.deviceIndex = cp->device;
  if ((r = cuptiDeviceGetChipName(&chip)) != CUPTI_SUCCESS) {
    *why = why_unavailable("cuptiDeviceGetChipName", r);
    return nullptr;
  }
  cp->chip = chip.pChipName;
  std::vector<std::uint8_t> availability;
  auto avail = cupti_params<CUpti_Profiler_GetCounterAvailability_Params>(
      CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
  avail.ctx = ctx;
  if ((r = cuptiProfilerGetCounterAvailability(&avail)) != CUPTI_SUCCESS) {
    *why = why_unavailable("cuptiProfilerGetCounterAvailability", r);
    return nullptr;
  }
  availability.resize(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = availability.data();
  if ((r = cuptiProfilerGetCounterAvailability(&avail)) != CUPTI_SUCCESS) {
    *why = why_unavailable("cuptiProfilerGetCounterAvailability", r);
    return nullptr;
  }
  cp->host = ProfilerHost::create(CUPTI_PROFILER_TYPE_RANGE_PROFILER, cp->chip, availability, why);
  if (!cp->host) return nullptr;
  const ProfilerHost& host = *cp->host;
  cp->plan = capture::plan_counter_metrics(
      host.base_metrics(),
      [&host](const std::vector<std::string>& names) { return host.passes(names); });
  if (cp->plan.empty()) {
    *why = "chip " + cp->chip + " lists none of the counters flopline reads";
    return nullptr;
  }
  if (!cp->host->configure(cp->plan.names(), &cp->config, why)) return nullptr;

  auto en = cupti_params<CUpti_RangeProfiler_Enable_Params>(
      CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
  en.ctx = ctx;
  if ((r = cuptiRangeProfilerEnable(&en)) != CUPTI_SUCCESS) {
    *why = why_unavailable("cuptiRangeProfilerEnable", r);
    return nullptr;
  }
  cp->object = en.pRangeProfilerObject;
  const std::vector<std::string> names = cp->plan.names();
  std::vector<const char*> c;
  for (const std::string& n : names) c.push_back(n.c_str());
  auto ds = cupti_params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
      CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  ds.pRangeProfilerObject = cp->object;
  ds.pMetricNames = c.data();
  ds.numMetrics = c.size();
  ds.maxNumOfRanges = 1;  // one launch at a time
  ds.maxNumRangeTreeNodes = 1;
  if ((r = cuptiRangeProfilerGetCounterDataSize(&ds)) != CUPTI_SUCCESS) {
    *why = why_unavailable("cuptiRangeProfilerGetCounterDataSize", r);
    return nullptr;
  }
  cp->counter_data.assign(ds.counterDataSize, 0);
  if (!cp->reset_counter_data(&r)) {
    *why = why_unavailable("cuptiRangeProfilerCounterDataImageInitialize", r);
    return nullptr;
  }
  auto sc = cupti_params<CUpti_RangeProfiler_SetConfig_Params>(
      CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  sc.pRangeProfilerObject = cp->object;
  sc.configSize = cp->config.size();
  sc.pConfig = cp->config.data();
  sc.counterDataImageSize = cp->counter_data.size();
  sc.pCounterDataImage = cp->counter_data.data();
  sc.range = CUPTI_AutoRange;
  sc.replayMode = CUPTI_KernelReplay;
  sc.maxRangesPerPass = 1;
  sc.numNestingLevels = 1;
  sc.minNestingLevel = 1;
  sc.passIndex = 0;
  sc.targetNestingLevel = 1;
  if ((r = cuptiRangeProfilerSetConfig(&sc)) != CUPTI_SUCCESS) {
    *why = why_unavailable("cuptiRangeProfilerSetConfig", r);
    return nullptr;
  }
  return cp;
}

// Per launching thread: where its launch stands.
struct ThreadLaunch {
  int depth = 0;           // open launch calls (runtime and driver)
  bool in_driver = false;  // inside a driver launch call
  bool measuring = false;  // this launch holds the range profiler
  bool shared = false;     // this launch holds the shared launch lock
  ContextProfiler* profiler = nullptr;
  bool have_values = false;  // a measured range awaiting the outermost exit's id
  std::uint32_t device = 0;
  std::uint32_t driver_correlation = 0;  // the driver call's id, for FLOPLINE_COUNTERS_DEBUG
  std::vector<double> values;
};

thread_local ThreadLaunch t_launch;

}  // namespace

struct CounterProfiler::Impl {
  // Read first by every launch callback: false unless counting runs.
  std::atomic<bool> enabled{false};
  mutable std::mutex mu;
  bool started = false;
  bool off = false;  // counting failed for good (the reason is in info.unavailable)
  capture::LaunchSampler sampler{2};
  std::unordered_map<CUcontext, std::unique_ptr<ContextProfiler>> contexts;
  capture::CounterInfo info;
  std::vector<capture::CounterRecord> records;
  // A measured launch holds it alone, every other launch shares it: a launch of another
  // thread can never run inside a measured range.
  std::shared_mutex launch_lock;

  void turn_off(const std::string& why) {
    if (off) return;
    off = true;
    enabled = false;
    info.unavailable = why;
    std::fprintf(stderr, "flopline: counters unavailable: %s; the trace is written without them\n",
                 why.c_str());
  }
  void enter_driver(CUcontext ctx, CUpti_CallbackId cbid, const void* params);
  void exit_driver();
};

void CounterProfiler::Impl::enter_driver(CUcontext ctx, CUpti_CallbackId cbid, const void* params) {
  ThreadLaunch& t = t_launch;
  ContextProfiler* cp = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (off || !started || !sampler.take(launch_key(cbid, params))) {
      cp = nullptr;
    } else {
      auto it = contexts.find(ctx);
      if (it == contexts.end()) {
        std::string why;
        auto made = set_up(ctx, &why);
        if (!made) {
          turn_off(why);
        } else {
          if (info.chip.empty()) {
            info.chip = made->chip;
            info.plan = made->plan;
          }
          it = contexts.emplace(ctx, std::move(made)).first;
        }
      }
      if (it != contexts.end()) cp = it->second.get();
    }
  }
  if (cp == nullptr) {
    launch_lock.lock_shared();
    t.shared = true;
    return;
  }
  launch_lock.lock();
  auto p =
      cupti_params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
  p.pRangeProfilerObject = cp->object;
  const CUptiResult r = cuptiRangeProfilerStart(&p);
  if (r != CUPTI_SUCCESS) {
    launch_lock.unlock();
    std::lock_guard<std::mutex> lock(mu);
    ++info.failed;
    turn_off(why_unavailable("cuptiRangeProfilerStart", r));
    return;
  }
  t.measuring = true;
  t.profiler = cp;
}

void CounterProfiler::Impl::exit_driver() {
  ThreadLaunch& t = t_launch;
  if (t.shared) {
    t.shared = false;
    launch_lock.unlock_shared();
    return;
  }
  if (!t.measuring) return;
  t.measuring = false;
  ContextProfiler& cp = *t.profiler;
  std::string error;
  auto stop =
      cupti_params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
  stop.pRangeProfilerObject = cp.object;
  CUptiResult r = cuptiRangeProfilerStop(&stop);
  if (r == CUPTI_SUCCESS && !stop.isAllPassSubmitted) error = "not every replay pass ran";
  if (r == CUPTI_SUCCESS && error.empty()) {
    auto d = cupti_params<CUpti_RangeProfiler_DecodeData_Params>(
        CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
    d.pRangeProfilerObject = cp.object;
    r = cuptiRangeProfilerDecodeData(&d);
  }
  if (r == CUPTI_SUCCESS && error.empty()) {
    auto info_p = cupti_params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
        CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
    info_p.pCounterDataImage = cp.counter_data.data();
    info_p.counterDataImageSize = cp.counter_data.size();
    r = cuptiRangeProfilerGetCounterDataInfo(&info_p);
    if (r == CUPTI_SUCCESS && info_p.numTotalRanges != 1) {
      error = "the launch gave " + std::to_string(info_p.numTotalRanges) + " ranges, not one";
    }
  }
  if (r == CUPTI_SUCCESS && error.empty() &&
      cp.host->evaluate(cp.counter_data, 0, &t.values, &error)) {
    t.have_values = true;
    t.device = cp.device;
  }
  CUptiResult reset = CUPTI_SUCCESS;
  cp.reset_counter_data(&reset);
  launch_lock.unlock();
  if (r != CUPTI_SUCCESS || !error.empty()) {
    std::lock_guard<std::mutex> lock(mu);
    ++info.failed;
    if (r != CUPTI_SUCCESS) turn_off(why_unavailable("range profiler", r));
  }
  if (reset != CUPTI_SUCCESS) {
    std::lock_guard<std::mutex> lock(mu);
    turn_off(why_unavailable("cuptiRangeProfilerCounterDataImageInitialize", reset));
  }
}

CounterProfiler::CounterProfiler() : impl_(new Impl) {}

CounterProfiler& CounterProfiler::instance() {
  static CounterProfiler* p = new CounterProfiler;  // never destroyed
  return *p;
}

bool CounterProfiler::start(std::uint32_t per_signature, std::string* why) {
  (void)why;  // failures come at the first measured launch, where CUPTI can be set up
  Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.mu);
  s.info.requested = true;
  s.info.per_signature = per_signature;
  s.sampler = capture::LaunchSampler(per_signature);
  s.started = true;
  s.enabled = true;
  return true;
}

bool CounterProfiler::active() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->started && !impl_->off;
}

void CounterProfiler::on_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                  const CUpti_CallbackData* data) {
  const LaunchLevel level = launch_level(domain, cbid);
  if (level == LaunchLevel::kNone) return;
  ThreadLaunch& t = t_launch;
  if (data->callbackSite == CUPTI_API_ENTER) {
    if (!impl_->enabled.load(std::memory_order_relaxed) && t.depth == 0) return;
    ++t.depth;
    if (level == LaunchLevel::kDriver && !t.in_driver) {
      t.in_driver = true;
      impl_->enter_driver(data->context, cbid, data->functionParams);
    }
    return;
  }
  if (t.depth == 0) return;  // entered before counting started
  if (level == LaunchLevel::kDriver && t.in_driver) {
    t.in_driver = false;
    t.driver_correlation = data->correlationId;
    impl_->exit_driver();
  }
  if (--t.depth > 0 || !t.have_values) return;
  // The outermost call's correlation id is the one its kernel record carries.
  t.have_values = false;
  capture::CounterRecord rec;
  rec.correlation_id = data->correlationId;
  rec.device = t.device;
  rec.values = std::move(t.values);
  static const bool debug = std::getenv("FLOPLINE_COUNTERS_DEBUG") != nullptr;
  if (debug) {
    std::fprintf(
        stderr,
        "flopline: counters: launch %s correlation %u (driver call %u), device %u, %zu values\n",
        data->functionName, rec.correlation_id, t.driver_correlation, rec.device,
        rec.values.size());
  }
  std::lock_guard<std::mutex> lock(impl_->mu);
  ++impl_->info.measured;
  impl_->records.push_back(std::move(rec));
}

void CounterProfiler::enable_callbacks(CUpti_SubscriberHandle subscriber) {
  for (CUpti_CallbackId cbid :
       {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
        CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz}) {
    cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid);
  }
  for (CUpti_CallbackId cbid : {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                                CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
                                CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
                                CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
                                CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
                                CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000}) {
    cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, cbid);
  }
}

void CounterProfiler::snapshot(capture::CounterInfo* info,
                               std::vector<capture::CounterRecord>* records) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  *info = impl_->info;
  *records = impl_->records;
}

void CounterProfiler::reset_after_fork() {
  // The parent's contexts and records are not this process's; CUDA cannot run here.
  impl_ = new Impl;
  t_launch = ThreadLaunch{};
}

}  // namespace flopline::cupti
