// The range profiler of counter_profiler.h.
#include "counter_profiler.h"

#include <cupti_activity.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <string_view>
#include <unordered_map>

#include "capture_window_control.h"
#include "flopline/capture/capture_config.h"
#include "flopline/capture/function_metrics.h"
#include "flopline/capture/launch_work.h"
#include "flopline/capture/self_timing.h"
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

// The driver functions that read a launch's parameter layout and its stream's state,
// from the driver the program already loaded (never loaded by flopline itself).
struct Driver {
  CUresult (*func_param_info)(CUfunction, size_t, size_t*, size_t*) = nullptr;
  CUresult (*kernel_param_info)(CUkernel, size_t, size_t*, size_t*) = nullptr;
  CUresult (*stream_is_capturing)(CUstream, CUstreamCaptureStatus*) = nullptr;
  CUresult (*ctx_synchronize)() = nullptr;
  CUresult (*pointer_get_attribute)(void*, CUpointer_attribute, CUdeviceptr) = nullptr;
  CUresult (*mem_get_info)(size_t*, size_t*) = nullptr;  // FLOPLINE_COUNTERS_DEBUG only
};

const Driver& driver() {
  static const Driver d = [] {
    Driver r;
    void* lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (lib == nullptr) return r;
    r.func_param_info =
        reinterpret_cast<decltype(r.func_param_info)>(dlsym(lib, "cuFuncGetParamInfo"));
    r.kernel_param_info =
        reinterpret_cast<decltype(r.kernel_param_info)>(dlsym(lib, "cuKernelGetParamInfo"));
    r.stream_is_capturing =
        reinterpret_cast<decltype(r.stream_is_capturing)>(dlsym(lib, "cuStreamIsCapturing"));
    r.ctx_synchronize =
        reinterpret_cast<decltype(r.ctx_synchronize)>(dlsym(lib, "cuCtxSynchronize"));
    r.pointer_get_attribute =
        reinterpret_cast<decltype(r.pointer_get_attribute)>(dlsym(lib, "cuPointerGetAttribute"));
    r.mem_get_info = reinterpret_cast<decltype(r.mem_get_info)>(dlsym(lib, "cuMemGetInfo_v2"));
    return r;
  }();
  return d;
}

// The parameter layout of a launched function: a CUfunction, or a CUkernel the runtime
// passes in its place.
capture::ParamLayout param_layout(std::uint64_t function) {
  capture::ParamLayout layout;
  const Driver& d = driver();
  auto read = [&](auto get, auto handle) {
    layout.params.clear();
    for (std::size_t i = 0;; ++i) {
      std::size_t offset = 0, size = 0;
      const CUresult r = get(handle, i, &offset, &size);
      if (r == CUDA_ERROR_INVALID_VALUE && i > 0) return true;   // past the last parameter
      if (r == CUDA_ERROR_INVALID_VALUE && i == 0) return true;  // no parameters
      if (r != CUDA_SUCCESS) return false;
      layout.params.push_back(
          {static_cast<std::uint32_t>(offset), static_cast<std::uint32_t>(size)});
      if (i >= 4096) return false;  // the driver's limit on parameters is far lower
    }
  };
  if (d.func_param_info != nullptr &&
      read(d.func_param_info, reinterpret_cast<CUfunction>(function))) {
    layout.known = true;
  } else if (d.kernel_param_info != nullptr &&
             read(d.kernel_param_info, reinterpret_cast<CUkernel>(function))) {
    layout.known = true;
  } else {
    layout.params.clear();
  }
  return layout;
}

// Whether the driver knows `value` as an address of memory it manages (device, managed
// or registered host memory): how a by-value struct's operand addresses are told from
// sizes that read like addresses (StructAddressWords).
bool is_driver_address(std::uint64_t value) {
  const Driver& d = driver();
  if (d.pointer_get_attribute == nullptr) return false;
  unsigned int type = 0;
  return d.pointer_get_attribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                 static_cast<CUdeviceptr>(value)) == CUDA_SUCCESS &&
         type != 0;
}

// Whether environment variable `name` is set to exactly `value`.
bool env_equals(const char* name, std::string_view value) {
  const char* v = std::getenv(name);
  return v != nullptr && value == v;
}

// What the launch callback's parameters say of the launch.
struct LaunchParams {
  capture::LaunchShape shape;
  CUstream stream = nullptr;
  void** kernel_params = nullptr;
  void** extra = nullptr;
};

LaunchParams launch_params(CUpti_CallbackId cbid, const void* params) {
  LaunchParams l;
  capture::LaunchShape& k = l.shape;
  auto from = [&](const auto* p) {
    k.function = reinterpret_cast<std::uintptr_t>(p->f);
    k.grid[0] = p->gridDimX;
    k.grid[1] = p->gridDimY;
    k.grid[2] = p->gridDimZ;
    k.block[0] = p->blockDimX;
    k.block[1] = p->blockDimY;
    k.block[2] = p->blockDimZ;
    k.shared_memory = p->sharedMemBytes;
    l.stream = p->hStream;
    l.kernel_params = p->kernelParams;
  };
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: {
      const auto* p = static_cast<const cuLaunchKernel_params*>(params);
      from(p);
      l.extra = p->extra;
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      from(static_cast<const cuLaunchCooperativeKernel_params*>(params));
      break;
    default: {
      const auto* p = static_cast<const cuLaunchKernelEx_params*>(params);
      k.function = reinterpret_cast<std::uintptr_t>(p->f);
      l.kernel_params = p->kernelParams;
      l.extra = p->extra;
      if (p->config != nullptr) {
        const CUlaunchConfig& c = *p->config;
        k.grid[0] = c.gridDimX;
        k.grid[1] = c.gridDimY;
        k.grid[2] = c.gridDimZ;
        k.block[0] = c.blockDimX;
        k.block[1] = c.blockDimY;
        k.block[2] = c.blockDimZ;
        k.shared_memory = c.sharedMemBytes;
        l.stream = c.hStream;
      }
      break;
    }
  }
  return l;
}

// The launch's argument words (launch_work.h); false when they cannot be read.
bool launch_words(const capture::ParamLayout& layout, const LaunchParams& l,
                  std::vector<std::uint64_t>* words) {
  words->clear();
  if (!layout.known) return false;
  if (l.kernel_params != nullptr) {
    capture::argument_words(layout, l.kernel_params, words);
    return true;
  }
  if (layout.params.empty()) return true;
  // cuLaunchKernel's `extra`: {CU_LAUNCH_PARAM_BUFFER_POINTER, p, CU_LAUNCH_PARAM_BUFFER_SIZE,
  // &size, CU_LAUNCH_PARAM_END}, in any order.
  const void* buffer = nullptr;
  std::size_t size = 0;
  for (void** e = l.extra; e != nullptr && *e != CU_LAUNCH_PARAM_END; e += 2) {
    if (*e == CU_LAUNCH_PARAM_BUFFER_POINTER)
      buffer = e[1];
    else if (*e == CU_LAUNCH_PARAM_BUFFER_SIZE && e[1] != nullptr)
      size = *static_cast<std::size_t*>(e[1]);
  }
  if (buffer == nullptr) return false;
  capture::argument_words_packed(layout, buffer, size, words);
  return true;
}

bool stream_capturing(CUstream stream) {
  const Driver& d = driver();
  if (d.stream_is_capturing == nullptr) return false;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  if (d.stream_is_capturing(stream, &status) != CUDA_SUCCESS) return false;
  return status != CU_STREAM_CAPTURE_STATUS_NONE;
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
  std::unique_ptr<ProfilerHost> host;  // the chip's metric list and pass counts
  capture::CounterPlan plan;
  std::string chip;
  std::vector<std::uint8_t> availability;
  CUpti_RangeProfiler_Object* object = nullptr;
  // Which metrics each launch collects. Guarded by sets_mu alone: it is read with the
  // profiler's lock held (choosing a launch's set) and with only the launch lock held
  // (configuring, reading values).
  std::unique_ptr<capture::FunctionMetrics> sets;
  std::mutex sets_mu;
  std::uint32_t choose(std::uint64_t function) {
    std::lock_guard<std::mutex> lock(sets_mu);
    return sets->choose(function);
  }
  std::vector<std::uint32_t> set_metrics(std::uint32_t id) {
    std::lock_guard<std::mutex> lock(sets_mu);
    return sets->set(id).metrics;
  }
  std::size_t set_passes(std::uint32_t id) {
    std::lock_guard<std::mutex> lock(sets_mu);
    return sets->set(id).passes;
  }
  std::vector<std::uint32_t> set_parts(std::uint32_t id) {
    std::lock_guard<std::mutex> lock(sets_mu);
    return sets->set(id).parts;
  }
  std::string unfinished(std::uint32_t id, std::size_t parts_done) {
    std::lock_guard<std::mutex> lock(sets_mu);
    return sets->unfinished(id, parts_done);
  }
  std::string learn(std::uint64_t function, std::uint32_t id, std::span<const double> values) {
    std::lock_guard<std::mutex> lock(sets_mu);
    return sets->learn(function, id, values);
  }
  std::string describe(std::uint64_t function) {
    std::lock_guard<std::mutex> lock(sets_mu);
    return sets->describe(function);
  }
  // Per metric set (by FunctionMetrics' id), made at its first use: a host object
  // configured with the set's metrics, its config image and its counter data.
  struct Config {
    std::unique_ptr<ProfilerHost> host;
    std::vector<std::string> names;
    std::vector<std::uint8_t> image;
    std::vector<std::uint8_t> counter_data;
    std::string names_joined() const {
      std::string all;
      for (const std::string& n : names) all += (all.empty() ? "" : ",") + n;
      return all;
    }
  };
  std::vector<Config> configs;
  static constexpr std::uint32_t kNone = ~0u;
  // The set the range profiler is configured with; changed with the launch lock held
  // alone, read without it when a launch chooses its set.
  std::atomic<std::uint32_t> current{kNone};
  // The range profiler refused a new configuration: every launch collects `current`.
  std::atomic<bool> fixed{false};
  // Learned sets are measured in one-pass parts (function_metrics.h): asked for with
  // FLOPLINE_COUNTERS_PARTS=1 (docs/COUNTERS.md says what is verified of it).
  bool parts = false;
  bool init_counter_data(std::vector<std::uint8_t>& data, CUptiResult* r) {
    auto p = cupti_params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
    p.pRangeProfilerObject = object;
    p.counterDataSize = data.size();
    p.pCounterData = data.data();
    *r = cuptiRangeProfilerCounterDataImageInitialize(&p);
    return *r == CUPTI_SUCCESS;
  }
  bool reset_counter_data(CUptiResult* r) {
    return init_counter_data(configs[current.load()].counter_data, r);
  }

  // Configures the range profiler for metric set `id`. Called with the launch lock held
  // alone: no launch is being measured.
  bool use_set(std::uint32_t id, std::string* why);
};

bool ContextProfiler::use_set(std::uint32_t id, std::string* why) {
  if (id == current) return true;
  if (configs.size() <= id) configs.resize(id + 1);
  Config& c = configs[id];
  CUptiResult r = CUPTI_SUCCESS;
  if (!c.host) {
    for (std::uint32_t i : set_metrics(id)) c.names.push_back(plan.metrics[i].name);
    auto made = ProfilerHost::create(CUPTI_PROFILER_TYPE_RANGE_PROFILER, chip, availability, why);
    if (!made || !made->configure(c.names, &c.image, why)) {
      c.names.clear();
      return false;
    }
    c.host = std::move(made);
  }
  // The range profiler object keeps the metric list of its last GetCounterDataSize and
  // initializes every counter data image for that list: a set configured again after
  // another one must announce its metrics again, or its image cannot be initialized.
  std::vector<const char*> n;
  for (const std::string& name : c.names) n.push_back(name.c_str());
  auto ds = cupti_params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
      CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  ds.pRangeProfilerObject = object;
  ds.pMetricNames = n.data();
  ds.numMetrics = n.size();
  ds.maxNumOfRanges = 1;  // one launch at a time
  ds.maxNumRangeTreeNodes = 1;
  if ((r = cuptiRangeProfilerGetCounterDataSize(&ds)) != CUPTI_SUCCESS) {
    *why = why_unavailable("cuptiRangeProfilerGetCounterDataSize", r);
    return false;
  }
  c.counter_data.assign(ds.counterDataSize, 0);
  if (!init_counter_data(c.counter_data, &r)) {
    *why = why_unavailable("cuptiRangeProfilerCounterDataImageInitialize", r);
    return false;
  }
  auto sc = cupti_params<CUpti_RangeProfiler_SetConfig_Params>(
      CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  sc.pRangeProfilerObject = object;
  sc.configSize = c.image.size();
  sc.pConfig = c.image.data();
  sc.counterDataImageSize = c.counter_data.size();
  sc.pCounterDataImage = c.counter_data.data();
  sc.range = CUPTI_AutoRange;
  sc.replayMode = CUPTI_KernelReplay;
  sc.maxRangesPerPass = 1;
  sc.numNestingLevels = 1;
  sc.minNestingLevel = 1;
  sc.passIndex = 0;
  sc.targetNestingLevel = 1;
  if ((r = cuptiRangeProfilerSetConfig(&sc)) != CUPTI_SUCCESS) {
    *why = why_unavailable("cuptiRangeProfilerSetConfig", r);
    return false;
  }
  current = id;
  return true;
}

// Sets up counting on `ctx`. On failure `why` says what failed.
std::unique_ptr<ContextProfiler> set_up(CUcontext ctx, bool every_launch, std::string* why) {
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
  auto avail = cupti_params<CUpti_Profiler_GetCounterAvailability_Params>(
      CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
  avail.ctx = ctx;
  if ((r = cuptiProfilerGetCounterAvailability(&avail)) != CUPTI_SUCCESS) {
    *why = why_unavailable("cuptiProfilerGetCounterAvailability", r);
    return nullptr;
  }
  cp->availability.resize(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = cp->availability.data();
  if ((r = cuptiProfilerGetCounterAvailability(&avail)) != CUPTI_SUCCESS) {
    *why = why_unavailable("cuptiProfilerGetCounterAvailability", r);
    return nullptr;
  }
  cp->host =
      ProfilerHost::create(CUPTI_PROFILER_TYPE_RANGE_PROFILER, cp->chip, cp->availability, why);
  if (!cp->host) return nullptr;
  const ProfilerHost* host = cp->host.get();
  const capture::PassCounter passes = [host](const std::vector<std::string>& names) {
    return host->passes(names);
  };
  // A function's first measurement in two passes where it can (function_metrics.h,
  // "first"): a set of more passes, once configured, makes every later measurement as
  // dear. FLOPLINE_COUNTERS_FIRST_SET=learning gives the learning set of every metric
  // instead, to tell a fault of the first set from any other. Only the first set reads
  // the tensor instructions by type, so only it plans them.
  const bool two_pass_first = !env_equals("FLOPLINE_COUNTERS_FIRST_SET", "learning");
  cp->plan = capture::plan_counter_metrics(host->base_metrics(), passes, two_pass_first);
  if (cp->plan.empty()) {
    *why = "chip " + cp->chip + " lists none of the counters flopline reads";
    return nullptr;
  }
  // Metric sets per function (docs/COUNTERS.md). FLOPLINE_COUNTERS_SETS=0 makes every
  // launch collect every metric without --counters=all's measuring of every launch: the
  // way to tell a fault of the sets' reconfiguration from any other.
  const bool learn_sets = !env_equals("FLOPLINE_COUNTERS_SETS", "0");
  cp->sets = std::make_unique<capture::FunctionMetrics>(
      cp->plan, passes, every_launch || !learn_sets, two_pass_first);
  cp->parts = env_equals("FLOPLINE_COUNTERS_PARTS", "1");
  if (cp->parts) {
    // An experiment: say what is known of it wherever it is asked for.
    std::fprintf(stderr,
                 "flopline: counters: FLOPLINE_COUNTERS_PARTS=1 is an experiment and "
                 "miscounts: a part without the SIMT metrics leaves its kernel's SIMT "
                 "operations to a later measurement (docs/COUNTERS.md, \"One-pass parts\")\n");
  }

  auto en = cupti_params<CUpti_RangeProfiler_Enable_Params>(
      CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
  en.ctx = ctx;
  if ((r = cuptiRangeProfilerEnable(&en)) != CUPTI_SUCCESS) {
    *why = why_unavailable("cuptiRangeProfilerEnable", r);
    return nullptr;
  }
  cp->object = en.pRangeProfilerObject;
  // The set of a function's first launch: the range profiler is configured before its
  // first measurement, and again whenever a launch needs another set.
  if (!cp->use_set(
          every_launch || !learn_sets ? capture::FunctionMetrics::kFull : cp->sets->first_set(),
          why) &&
      !cp->use_set(capture::FunctionMetrics::kFull, why)) {
    return nullptr;
  }
  return cp;
}

// A forced flush of CUPTI's activity buffers right after each measured launch. A
// measured launch's kernel record has no times, and CUPTI hands a buffer holding one
// over only at a forced flush: without it every record after the first measurement
// waits for the run's end (with no operator). Inside the measured launch, with the
// launch lock held alone, the replay has drained this context, but not other contexts
// of the process, whose running work a forced flush would hand over without times:
// capture::counters_forced_flush decides from FLOPLINE_COUNTERS_FORCED_FLUSH and the
// contexts launched into.
bool forced_flush_after_measuring(bool several_contexts) {
  static const char* const value = std::getenv("FLOPLINE_COUNTERS_FORCED_FLUSH");
  return capture::counters_forced_flush([](const char*) { return value; }, several_contexts);
}

// FLOPLINE_COUNTERS_DEBUG=1: each function's first sight and each measurement on stderr.
bool debug_enabled() {
  static const bool debug = std::getenv("FLOPLINE_COUNTERS_DEBUG") != nullptr;
  return debug;
}

// Per launching thread: where its launch stands.
struct ThreadLaunch {
  int depth = 0;           // open launch calls (runtime and driver)
  bool in_driver = false;  // inside a driver launch call
  bool measuring = false;  // this launch holds the range profiler
  bool shared = false;     // this launch holds the shared launch lock
  ContextProfiler* profiler = nullptr;
  bool have_values = false;                    // a measured range awaiting the outermost exit's id
  std::uint32_t measurement = capture::kNoId;  // the sampler's id of this measurement
  std::uint64_t function = 0;                  // the measured launch's function
  std::uint32_t set = 0;                       // the metric set it collects
  // The set whose values the measurement gives: `set`, or the set `set` is a part of.
  std::uint32_t whole_set = 0;
  bool in_parts = false;  // `set` is one of whole_set's one-pass parts
  // A measurement's first part ran in this launch: its correlation id names the launch
  // an unfinished measurement's values are shown on.
  std::uint32_t first_part_of = capture::kNoId;
  std::string incomplete;  // why its values miss some of its work
  // An unmeasured launch awaiting the outermost exit's id: the measurement it takes.
  bool have_source = false;
  capture::InferredLaunch inferred;
  std::uint32_t device = 0;
  std::uint32_t driver_correlation = 0;  // the driver call's id, for FLOPLINE_COUNTERS_DEBUG
  std::vector<double> values;
  // When this launch's current part of measuring began (CounterInfo's time parts).
  std::chrono::steady_clock::time_point since;
  capture::TimeNs configure_ns = 0;
  capture::TimeNs synchronize_ns = 0;  // a part's wait for the work queued before it
  // For FLOPLINE_COUNTERS_DEBUG: Start's own time, and when the launch call began.
  capture::TimeNs start_ns = 0;
  std::chrono::steady_clock::time_point launch_since;
};

capture::TimeNs ns_since(std::chrono::steady_clock::time_point t) {
  return static_cast<capture::TimeNs>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t)
          .count());
}

thread_local ThreadLaunch t_launch;

// FLOPLINE_SELF_TIMING: one call's counter work since `since_ns`, as a launch left
// unmeasured (it shared the launch lock) or as part of a measured one.
void add_counter_time(bool unmeasured, std::uint64_t since_ns) {
  capture::add_self_time(
      unmeasured ? capture::SelfPart::kCounterLaunch : capture::SelfPart::kCounterMeasured,
      capture::SelfTimer::now_ns() - since_ns);
}

}  // namespace

struct CounterProfiler::Impl {
  // Read first by every launch callback: false unless counting runs.
  std::atomic<bool> enabled{false};
  mutable std::mutex mu;
  bool started = false;
  bool off = false;  // counting failed for good (the reason is in info.unavailable)
  capture::WorkSampler sampler{2};
  capture::CounterExclusion exclusion;
  // Per launched function: its parameter layout and whether it is never measured.
  struct FunctionInfo {
    capture::ParamLayout layout;
    capture::StructAddressWords struct_addresses;
    bool excluded = false;
    std::uint64_t launches = 0;  // inside capture windows
    // The most of its launches a key of it took to come back for its next part.
    std::uint64_t longest_return = 0;
  };
  std::unordered_map<std::uint64_t, FunctionInfo> functions;
  std::unordered_map<CUcontext, std::uint32_t> device_of_context;
  // The first context launched into, and whether another followed: see
  // forced_flush_after_measuring().
  CUcontext first_launch_context = nullptr;  // under mu
  std::atomic<bool> several_contexts{false};
  std::vector<std::uint64_t> words;  // scratch, under mu
  std::unordered_map<CUcontext, std::unique_ptr<ContextProfiler>> contexts;
  capture::CounterInfo info;
  std::vector<capture::CounterRecord> records;
  std::vector<capture::InferredLaunch> inferred;
  // Measurements in one-pass parts (function_metrics.h) whose key has not yet run
  // every part, by measurement id.
  struct OpenParts {
    ContextProfiler* profiler = nullptr;
    std::uint32_t set = 0;  // the whole set
    std::size_t done = 0;   // parts collected
    std::vector<double> values;
    std::uint64_t function = 0;
    std::uint32_t device = 0;
    std::uint32_t first_correlation = 0;  // 0 until its first launch's outermost call ends
    std::uint64_t at_launch = 0;          // its function's launches when its key last ran a part
  };
  std::unordered_map<std::uint32_t, OpenParts> open_parts;
  // Whether a new measurement of `function` starts in parts (measure_in_parts).
  bool parts_for(std::uint64_t function, const FunctionInfo& fn) const {
    std::vector<std::uint64_t> ages;
    for (const auto& [id, op] : open_parts) {
      if (op.function == function) ages.push_back(fn.launches - op.at_launch);
    }
    return capture::measure_in_parts(ages, fn.longest_return);
  }
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
  void enter_driver(CUpti_CallbackId cbid, const CUpti_CallbackData* data);
  std::uint32_t device_of(CUcontext ctx) {
    auto [it, fresh] = device_of_context.try_emplace(ctx, 0);
    if (fresh) cuptiGetDeviceId(ctx, &it->second);
    return it->second;
  }
  void exit_driver();
  // `info` with the sampler's figures as they are now. Both under `mu`.
  void current_info(capture::CounterInfo* out) const;
  // Incomplete records for the measurements in parts whose key has not run every part.
  void add_unfinished(std::vector<capture::CounterRecord>* out) const;
};

void CounterProfiler::Impl::enter_driver(CUpti_CallbackId cbid, const CUpti_CallbackData* data) {
  ThreadLaunch& t = t_launch;
  const CUcontext ctx = data->context;
  ContextProfiler* cp = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!off && started) {
      if (first_launch_context == nullptr) {
        first_launch_context = ctx;
      } else if (ctx != first_launch_context) {
        several_contexts = true;
      }
      const LaunchParams l = launch_params(cbid, data->functionParams);
      auto [fn, fresh] = functions.try_emplace(l.shape.function);
      if (fresh) {
        fn->second.layout = param_layout(l.shape.function);
        fn->second.struct_addresses = capture::StructAddressWords(fn->second.layout);
        if (!fn->second.layout.known) ++info.unread_layouts;
        const char* name = data->symbolName != nullptr ? data->symbolName : "";
        fn->second.excluded = !exclusion.why(name).empty();
        if (debug_enabled()) {
          std::fprintf(stderr, "flopline: counters: function %s: %s, %zu parameters%s\n",
                       name[0] != '\0' ? name : "(no name)",
                       fn->second.excluded ? "never measured" : "measured by work key",
                       fn->second.layout.params.size(),
                       fn->second.layout.known ? "" : " (layout unknown)");
        }
      }
      ++fn->second.launches;
      capture::SampleDecision d;
      if (!fn->second.excluded) {
        capture::LaunchShape shape = l.shape;
        shape.context = reinterpret_cast<std::uintptr_t>(ctx);
        // Every launch measured: no key to read.
        const bool known = sampler.every_launch() ? fn->second.layout.known
                                                  : launch_words(fn->second.layout, l, &words);
        if (known && !sampler.every_launch()) {
          fn->second.struct_addresses.apply(&words, is_driver_address);
        }
        d = sampler.decide(shape, words, known);
        if (d.measure && stream_capturing(l.stream)) {
          // Recorded into a graph, not run: nothing to measure now. A measurement in
          // parts waits for the key's next launch.
          if (d.continuing) {
            sampler.continues(d.measurement);
          } else {
            sampler.cancel(d.measurement);
          }
          ++info.capturing;
          d = capture::SampleDecision{};
        }
        if (d.continuing && open_parts.count(d.measurement) == 0) {
          sampler.failed(d.measurement);  // its parts were given up: measure the key anew
          d = capture::SampleDecision{};
        }
      }
      if (!d.measure && d.measurement != capture::kNoId) {
        t.have_source = true;
        t.inferred.device = device_of(ctx);
        t.inferred.source = d.measurement;
        t.inferred.exact = d.exact;
      }
      if (d.measure) {
        auto it = contexts.find(ctx);
        if (it == contexts.end()) {
          std::string why;
          auto made = set_up(ctx, sampler.every_launch(), &why);
          if (!made) {
            turn_off(why);
          } else {
            if (info.chip.empty()) {
              info.chip = made->chip;
              info.plan = made->plan;
              info.metric_sets = made->sets->set_count() > 1;
            }
            it = contexts.emplace(ctx, std::move(made)).first;
          }
        }
        if (it != contexts.end()) {
          cp = it->second.get();
          t.measurement = d.measurement;
          t.function = l.shape.function;
          t.in_parts = false;
          t.first_part_of = capture::kNoId;
          if (d.continuing) {
            OpenParts& op = open_parts[d.measurement];
            fn->second.longest_return =
                std::max(fn->second.longest_return, fn->second.launches - op.at_launch);
            op.at_launch = fn->second.launches;
            t.whole_set = op.set;
            t.set = cp->set_parts(op.set)[op.done];
            t.in_parts = true;
          } else {
            t.whole_set = cp->fixed ? cp->current.load() : cp->choose(l.shape.function);
            t.set = t.whole_set;
            const std::vector<std::uint32_t> parts = cp->set_parts(t.whole_set);
            if (cp->parts && !parts.empty() && !cp->fixed &&
                parts_for(l.shape.function, fn->second)) {
              OpenParts& op = open_parts[d.measurement];
              op.profiler = cp;
              op.set = t.whole_set;
              op.function = l.shape.function;
              op.device = cp->device;
              op.values.assign(cp->plan.metrics.size(), -1);
              op.at_launch = fn->second.launches;
              t.set = parts.front();
              t.in_parts = true;
              t.first_part_of = d.measurement;
            }
          }
          if (debug_enabled()) {
            std::fprintf(
                stderr, "flopline: counters: measuring %s (measurement %u): %s; metrics: %s\n",
                data->symbolName != nullptr ? data->symbolName : "(no name)", d.measurement,
                sampler.explain(d.measurement).c_str(), cp->describe(l.shape.function).c_str());
          }
        } else {
          sampler.cancel(d.measurement);
        }
      }
    }
  }
  if (cp == nullptr) {
    launch_lock.lock_shared();
    t.shared = true;
    return;
  }
  launch_lock.lock();
  t.since = std::chrono::steady_clock::now();
  const bool switching = cp->current != t.set;
  if (std::string why; !cp->use_set(t.set, &why)) {
    // The sets of a function's first launch and of --counters=all collect every
    // metric: measuring with them stays complete. Any other set would not.
    if (cp->current == capture::FunctionMetrics::kFull ||
        cp->current == capture::FunctionMetrics::kLearning) {
      std::fprintf(stderr,
                   "flopline: counters: %s; every launch collects every metric from now on\n",
                   why.c_str());
      cp->fixed = true;
      t.set = cp->current;
      if (t.in_parts) {
        // Every metric at once: this launch finishes the measurement by itself.
        t.in_parts = false;
        t.first_part_of = capture::kNoId;
        std::lock_guard<std::mutex> lock(mu);
        open_parts.erase(t.measurement);
      }
      t.whole_set = t.set;
    } else {
      launch_lock.unlock();
      std::lock_guard<std::mutex> lock(mu);
      ++info.failed;
      sampler.failed(t.measurement);
      open_parts.erase(t.measurement);
      turn_off(why);
      return;
    }
  }
  t.configure_ns = switching ? ns_since(t.since) : 0;
  t.since = std::chrono::steady_clock::now();
  if (t.in_parts && driver().ctx_synchronize != nullptr) {
    // Counters count the whole GPU from Start on, and a one-pass measurement does not
    // replay, so nothing waits for the work queued before it: kernels still running
    // would add their operations and bytes to this launch's. Kernel replay drains the
    // GPU itself; a part must do it here. No other thread launches meanwhile (the launch
    // lock is held alone).
    driver().ctx_synchronize();
  }
  t.synchronize_ns = ns_since(t.since);
  auto p =
      cupti_params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
  p.pRangeProfilerObject = cp->object;
  const auto start_since = std::chrono::steady_clock::now();
  const CUptiResult r = cuptiRangeProfilerStart(&p);
  t.start_ns = ns_since(start_since);
  t.launch_since = std::chrono::steady_clock::now();
  if (r != CUPTI_SUCCESS) {
    launch_lock.unlock();
    std::lock_guard<std::mutex> lock(mu);
    ++info.failed;
    sampler.failed(t.measurement);
    open_parts.erase(t.measurement);
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
  const capture::TimeNs launch_ns = ns_since(t.launch_since);
  const auto stop_since = std::chrono::steady_clock::now();
  CUptiResult r = cuptiRangeProfilerStop(&stop);
  const capture::TimeNs stop_ns = ns_since(stop_since);
  const capture::TimeNs replay_ns = ns_since(t.since);
  t.since = std::chrono::steady_clock::now();
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
    info_p.pCounterDataImage = cp.configs[cp.current].counter_data.data();
    info_p.counterDataImageSize = cp.configs[cp.current].counter_data.size();
    r = cuptiRangeProfilerGetCounterDataInfo(&info_p);
    if (r == CUPTI_SUCCESS && info_p.numTotalRanges != 1) {
      error = "the launch gave " + std::to_string(info_p.numTotalRanges) + " ranges, not one";
    }
  }
  const std::uint32_t set = cp.current;
  const ContextProfiler::Config& config = cp.configs[set];
  std::vector<double> set_values;
  if (r == CUPTI_SUCCESS && error.empty() &&
      config.host->evaluate(config.counter_data, 0, &set_values, &error)) {
    // Parallel to the plan: what the set did not collect stays negative.
    const std::vector<std::uint32_t> metrics = cp.set_metrics(set);
    t.values.assign(cp.plan.metrics.size(), -1);
    for (std::size_t i = 0; i < metrics.size() && i < set_values.size(); ++i)
      t.values[metrics[i]] = set_values[i];
    t.have_values = true;
    t.device = cp.device;
  }
  CUptiResult reset = CUPTI_SUCCESS;
  cp.reset_counter_data(&reset);
  if (t.in_parts) {
    // A part configures the range profiler afresh (its SIMT counts once seemed to carry
    // over from one part to the next).
    cp.current = ContextProfiler::kNone;
  }
  const capture::TimeNs decode_ns = ns_since(t.since);
  if (debug_enabled()) {
    // Where a measurement's time goes, and the device memory in use beside it.
    std::size_t free_bytes = 0, total_bytes = 0;
    if (driver().mem_get_info != nullptr) driver().mem_get_info(&free_bytes, &total_bytes);
    // The tensor instruction counts as read (a NaN here makes the function's learning
    // give up on its set: which counts came back unread, after which set).
    std::string instructions;
    for (std::uint32_t i : cp.set_metrics(set)) {
      const capture::CounterMetric& m = cp.plan.metrics[i];
      if (m.use != capture::CounterUse::kTensorInstructions &&
          m.use != capture::CounterUse::kTensorInstructionType) {
        continue;
      }
      char v[32];
      std::snprintf(v, sizeof v, "%.6g", t.have_values && i < t.values.size() ? t.values[i] : -1.0);
      instructions += (instructions.empty() ? "; instructions: " : ", ") + m.name + "=" + v;
    }
    std::fprintf(stderr,
                 "flopline: counters: measurement %u took %.2f ms: %zu passes%s, %.2f ms "
                 "configuring, %.2f ms waiting for queued work, %.2f ms running (%.2f ms "
                 "starting, %.2f ms launching, %.2f ms stopping), %.2f ms decoding; %.2f GiB "
                 "in use on the device%s; metrics: %s\n",
                 t.measurement, (t.configure_ns + replay_ns + decode_ns) / 1e6, cp.set_passes(set),
                 t.in_parts ? " (a one-pass part)" : "", t.configure_ns / 1e6,
                 t.synchronize_ns / 1e6, (replay_ns - t.synchronize_ns) / 1e6, t.start_ns / 1e6,
                 launch_ns / 1e6, stop_ns / 1e6, decode_ns / 1e6,
                 (total_bytes - free_bytes) / double(1ull << 30), instructions.c_str(),
                 config.names_joined().c_str());
  }
  if (forced_flush_after_measuring(several_contexts.load())) {
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  }
  launch_lock.unlock();
  {
    std::lock_guard<std::mutex> lock(mu);
    info.configure_ns += t.configure_ns;
    info.replay_ns += replay_ns;
    info.decode_ns += decode_ns;
    if (t.have_values) {
      const std::size_t passes = cp.set_passes(set);
      auto& by = info.measured_by_passes;
      auto at =
          std::find_if(by.begin(), by.end(), [&](const auto& e) { return e.first >= passes; });
      if (at == by.end() || at->first != passes) at = by.insert(at, {passes, 0});
      ++at->second;
    }
    bool part_pending = false;
    if (t.have_values && t.in_parts) {
      auto op = open_parts.find(t.measurement);
      if (op == open_parts.end()) {
        t.have_values = false;  // given up meanwhile
      } else {
        for (std::size_t i = 0; i < t.values.size() && i < op->second.values.size(); ++i) {
          if (t.values[i] >= 0) op->second.values[i] = t.values[i];
        }
        ++op->second.done;
        if (op->second.done < cp.set_parts(op->second.set).size()) {
          // Not yet the whole measurement: this launch takes it as its source, like the
          // key's other launches, and the key's next launch collects the next part.
          part_pending = true;
          sampler.continues(t.measurement);
          ++info.measured;
          t.have_values = false;
          t.have_source = true;
          t.inferred.device = cp.device;
          t.inferred.source = t.measurement;
          t.inferred.exact = true;
        } else {
          t.values = std::move(op->second.values);
          open_parts.erase(op);
        }
      }
    }
    if (t.have_values) {
      t.incomplete = cp.learn(t.function, t.whole_set, t.values);
      if (!t.incomplete.empty()) {
        // Its key is measured again, with every metric.
        ++info.incomplete;
        sampler.failed(t.measurement);
        if (debug_enabled()) {
          std::fprintf(stderr, "flopline: counters: measurement %u incomplete: %s\n", t.measurement,
                       t.incomplete.c_str());
        }
      } else {
        sampler.measured(t.measurement, capture::evaluate_counters(cp.plan, t.values));
      }
    } else if (!part_pending) {
      sampler.failed(t.measurement);
      open_parts.erase(t.measurement);
    }
  }
  if (r != CUPTI_SUCCESS || !error.empty()) {
    if (debug_enabled()) {
      std::fprintf(stderr, "flopline: counters: measurement %u failed: %s\n", t.measurement,
                   !error.empty() ? error.c_str() : why_unavailable("range profiler", r).c_str());
    }
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

bool CounterProfiler::start(std::uint32_t per_signature, const std::string& exclude,
                            std::string* why) {
  (void)why;  // failures come at the first measured launch, where CUPTI can be set up
  Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.mu);
  s.info.requested = true;
  s.info.per_signature = per_signature;
  s.info.exclude = exclude;
  s.sampler = capture::WorkSampler(per_signature);
  s.exclusion = capture::CounterExclusion(exclude);
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
    // Outside capture windows no launch is measured (their callbacks stay on so that
    // depths stay balanced across a window's edge).
    if ((!impl_->enabled.load(std::memory_order_relaxed) || !capture_window_open()) &&
        t.depth == 0) {
      return;
    }
    ++t.depth;
    if (level == LaunchLevel::kDriver && !t.in_driver) {
      t.in_driver = true;
      const std::uint64_t since = capture::self_timing_on() ? capture::SelfTimer::now_ns() : 0;
      impl_->enter_driver(cbid, data);
      if (since != 0) add_counter_time(t.shared, since);
    }
    return;
  }
  if (t.depth == 0) return;  // entered before counting started
  if (level == LaunchLevel::kDriver && t.in_driver) {
    t.in_driver = false;
    t.driver_correlation = data->correlationId;
    const bool shared = t.shared;
    const std::uint64_t since = capture::self_timing_on() ? capture::SelfTimer::now_ns() : 0;
    impl_->exit_driver();
    if (since != 0) add_counter_time(shared, since);
  }
  if (--t.depth > 0) return;
  if (t.first_part_of != capture::kNoId) {
    std::lock_guard<std::mutex> lock(impl_->mu);
    const auto op = impl_->open_parts.find(t.first_part_of);
    if (op != impl_->open_parts.end()) op->second.first_correlation = data->correlationId;
    t.first_part_of = capture::kNoId;
  }
  if (t.have_source) {
    // The outermost call's correlation id is the one its kernel record carries.
    t.have_source = false;
    t.inferred.correlation_id = data->correlationId;
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->inferred.push_back(t.inferred);
  }
  if (!t.have_values) return;
  t.have_values = false;
  capture::CounterRecord rec;
  rec.correlation_id = data->correlationId;
  rec.device = t.device;
  rec.values = std::move(t.values);
  rec.measurement = t.measurement;
  rec.incomplete = std::move(t.incomplete);
  t.incomplete.clear();
  if (debug_enabled()) {
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

void CounterProfiler::Impl::current_info(capture::CounterInfo* out) const {
  *out = info;
  out->work_keys = sampler.keys();
  out->learned_words = sampler.learned_words();
}

void CounterProfiler::Impl::add_unfinished(std::vector<capture::CounterRecord>* out) const {
  // A measurement whose key has not yet run every part shows what it has on its first
  // launch, as incomplete (never a source): the decoder marks it estimated and why.
  for (const auto& [id, op] : open_parts) {
    if (op.first_correlation == 0) continue;
    capture::CounterRecord rec;
    rec.correlation_id = op.first_correlation;
    rec.device = op.device;
    rec.values = op.values;
    rec.measurement = id;
    rec.incomplete = op.profiler->unfinished(op.set, op.done);
    out->push_back(std::move(rec));
  }
}

void CounterProfiler::snapshot(capture::CounterInfo* info,
                               std::vector<capture::CounterRecord>* records,
                               std::vector<capture::InferredLaunch>* inferred) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->current_info(info);
  *records = impl_->records;
  *inferred = impl_->inferred;
  impl_->add_unfinished(records);
}

void CounterProfiler::take(capture::CounterInfo* info, std::vector<capture::CounterRecord>* records,
                           std::vector<capture::InferredLaunch>* inferred, bool last) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->current_info(info);
  *records = std::move(impl_->records);
  impl_->records.clear();
  *inferred = std::move(impl_->inferred);
  impl_->inferred.clear();
  if (last) impl_->add_unfinished(records);
}

void CounterProfiler::reset_after_fork() {
  // The parent's contexts and records are not this process's; CUDA cannot run here.
  impl_ = new Impl;
  t_launch = ThreadLaunch{};
}

}  // namespace flopline::cupti
