// An experiment, not part of flopline: what one Range Profiler measurement costs on the
// launching thread, by the configuration's replay passes, the replay mode and the device
// memory the process holds. It answers whether a measurement's cost is its passes
// (fewer metrics per launch help) or a fixed cost per measured launch (only fewer
// measured launches help), and whether a one-pass configuration escapes kernel replay's
// save and restore of device memory.
//
//   counters_pass_cost [GIB,...]     default 0,8
//
// For each amount held it times, per configuration, 12 measured launches of one
// elementwise kernel (Start, launch, Stop, DecodeData, counter data re-initialized) and
// prints the median, beside the same launch unmeasured. Configurations:
//   1 pass     gpu__time_duration
//   1 pass     the nine SIMT op-count metrics (SASS)
//   ?          DRAM bytes read, L2 writes and duration, without the SIMT counts: the set
//              a function that counted no FLOPs at its first launch would need later
//   2 passes   the nine SIMT counts plus DRAM bytes read, L2 writes and duration
//   many       the above plus every Hopper tensor-path metric flopline plans
//   1 pass     DRAM bytes read alone, L2 writes alone, tensor instructions alone, one
//              tensor-path metric alone (user replay): which metrics make a pass dear
// each in kernel replay, and the one-pass ones also in user replay (one pass: nothing to
// replay, nothing for CUPTI to save); the multi-pass ones also in user replay with the
// device memory saved and restored through CUPTI's Checkpoint API ("user + checkpoint"),
// to see whether a save to the device's own memory costs less than kernel replay's.
//
// It also checks the values, which one-pass measurements got wrong in flopline (SIMT
// counts carried from one measurement to the next): the kernel, y = a*x + y over 2^24
// floats, executes exactly 2^24 FFMA and stores 2^21 L2 sectors. Each configuration runs
// a second time with another kernel (2^26 FFMA, 2^23 sectors stored) launched unmeasured
// after each measured launch ("other between"): a carry-over shows there as the other
// kernel's counts added to the measured one's. "same between" launches the measured
// kernel itself unmeasured instead (a function CUPTI has instrumented); "reconfigured"
// sets the configuration afresh before each measured launch; "after replayed other" and
// "after 1-pass other" measure the other kernel first in a configuration of its own
// (printed: its FFMA, 2^26 when right) and then set this one again, as flopline switches
// between one function's learning set and another's parts; "in callback" starts and
// stops the range in CUPTI's callback of the launch itself, as flopline must, and
// "cb+sync" also synchronizes the context there first, as flopline's parts do. Printed:
// FFMA and L2 write sectors of the last measured launch, and whether all 12 measured
// launches gave the same counts.
//
// Environment: COUNTERS_PASS_COST_SETS="label=metric,...;label=..." adds the caller's
// metric lists (flopline's own sets), each configured afresh, in the launch's callback
// after a 2-pass measurement, after a 4-pass one before every launch ("after many"), after
// one before the first launch only ("many once"), and so with the range profiler
// re-enabled after each launch; COUNTERS_PASS_COST_ONLY=1 times only those.
// COUNTERS_PASS_COST_ACTIVITY=1 turns kernel activity records on,
// COUNTERS_PASS_COST_RUNTIME_CB=1 the runtime's launch callbacks, and
// COUNTERS_PASS_COST_INIT_FIRST=1 initializes CUPTI's profiler before the context, as
// flopline does each: which of them makes flopline's measurements dear.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>
#if FLOPLINE_HAVE_CUPTI_CHECKPOINT
#include <cupti_checkpoint.h>
#endif
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

namespace {

#if FLOPLINE_HAVE_CUPTI_CHECKPOINT
using namespace NV::Cupti::Checkpoint;  // CUpti_Checkpoint and its functions
#endif

#define CHECK_CUPTI(call)                                                               \
  do {                                                                                  \
    CUptiResult r_ = (call);                                                            \
    if (r_ != CUPTI_SUCCESS) {                                                          \
      const char* s_ = nullptr;                                                         \
      cuptiGetResultString(r_, &s_);                                                    \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, s_ ? s_ : "?"); \
      return false;                                                                     \
    }                                                                                   \
  } while (0)

__global__ void axpy(float* y, const float* x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

// The unmeasured kernel between measured launches: one FFMA and one store per element.
__global__ void scale_shift(float* z, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) z[i] = z[i] * a + b;
}

// COUNTERS_PASS_COST_ACTIVITY=1: kernel activity records on (CONCURRENT_KERNEL), as
// under flopline run, their buffers dropped unread: does recording the launches change
// what a measurement in the launch's callback costs?
void CUPTIAPI activity_buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *size = 8 << 20;
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, *size));
  *max_records = 0;
}
void CUPTIAPI activity_buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t) {
  std::free(buffer);
}

// "in callback": the range is started and stopped in CUPTI's driver-API callback of the
// measured launch itself, at its enter and exit, as flopline must (it learns of a launch
// only there), instead of around the launch call.
struct InCallback {
  CUpti_RangeProfiler_Object* object = nullptr;
  bool armed = false;    // the next launch is measured
  bool started = false;  // Start succeeded at its enter
  CUptiResult start = CUPTI_SUCCESS;
  CUptiResult stop = CUPTI_SUCCESS;
  bool all_passes = false;
  // cuCtxSynchronize in the callback before Start, as flopline's one-pass parts do (a
  // part does not replay, so nothing else drains the work queued before it).
  bool synchronize = false;
};
InCallback g_in_callback;

bool is_launch(CUpti_CallbackId cbid) {
  return cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz;
}

void CUPTIAPI on_driver_call(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                             const void* data) {
  InCallback& g = g_in_callback;
  if (domain != CUPTI_CB_DOMAIN_DRIVER_API || !is_launch(cbid) || !g.armed) return;
  const auto* cb = static_cast<const CUpti_CallbackData*>(data);
  if (cb->callbackSite == CUPTI_API_ENTER) {
    if (g.synchronize) cuCtxSynchronize();
    CUpti_RangeProfiler_Start_Params st{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
    st.pRangeProfilerObject = g.object;
    g.start = cuptiRangeProfilerStart(&st);
    g.started = g.start == CUPTI_SUCCESS;
  } else if (g.started) {
    CUpti_RangeProfiler_Stop_Params sp{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
    sp.pRangeProfilerObject = g.object;
    g.stop = cuptiRangeProfilerStop(&sp);
    g.all_passes = sp.isAllPassSubmitted != 0;
    g.started = false;
    g.armed = false;
  }
}

// The drain's kernel: integer work only, so its own SIMT FLOP counts are zero.
__global__ void integer_only(int* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = a[i] * 3 + 1;
}

constexpr int kN = 1 << 24;       // 64 MB per buffer
constexpr int kOtherN = 1 << 26;  // 256 MB
constexpr int kLaunches = 12;

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Setup {
  CUcontext ctx = nullptr;
  std::string chip;
  std::vector<uint8_t> availability;
  float* x = nullptr;
  float* y = nullptr;
  float* z = nullptr;  // the other kernel's buffer
};

// A configuration's host object (kept to evaluate the counter data) and image.
struct HostConfig {
  CUpti_Profiler_Host_Object* object = nullptr;
  std::vector<uint8_t> image;
  size_t passes = 0;
  ~HostConfig() {
    if (object == nullptr) return;
    CUpti_Profiler_Host_Deinitialize_Params hd{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
    hd.pHostObject = object;
    cuptiProfilerHostDeinitialize(&hd);
  }
};

bool config_image(const Setup& s, const std::vector<std::string>& metrics, HostConfig* out) {
  std::vector<uint8_t>* image = &out->image;
  size_t* passes = &out->passes;
  CUpti_Profiler_Host_Initialize_Params hi{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
  hi.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  hi.pChipName = s.chip.c_str();
  hi.pCounterAvailabilityImage = s.availability.data();
  CHECK_CUPTI(cuptiProfilerHostInitialize(&hi));
  out->object = hi.pHostObject;
  std::vector<const char*> names;
  for (const std::string& m : metrics) names.push_back(m.c_str());
  CUpti_Profiler_Host_ConfigAddMetrics_Params am{
      CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
  am.pHostObject = hi.pHostObject;
  am.ppMetricNames = names.data();
  am.numMetrics = names.size();
  CHECK_CUPTI(cuptiProfilerHostConfigAddMetrics(&am));
  CUpti_Profiler_Host_GetConfigImageSize_Params sz{
      CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
  sz.pHostObject = hi.pHostObject;
  CHECK_CUPTI(cuptiProfilerHostGetConfigImageSize(&sz));
  image->assign(sz.configImageSize, 0);
  CUpti_Profiler_Host_GetConfigImage_Params gi{
      CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
  gi.pHostObject = hi.pHostObject;
  gi.configImageSize = image->size();
  gi.pConfigImage = image->data();
  CHECK_CUPTI(cuptiProfilerHostGetConfigImage(&gi));
  CUpti_Profiler_Host_GetNumOfPasses_Params np{
      CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
  np.configImageSize = image->size();
  np.pConfigImage = image->data();
  CHECK_CUPTI(cuptiProfilerHostGetNumOfPasses(&np));
  *passes = np.numOfPasses;
  return true;
}

// The value of `metric` in the counter data, -1 when the configuration lacks it.
double metric_value(const HostConfig& h, const std::vector<std::string>& metrics,
                    const std::vector<uint8_t>& data, const std::string& metric) {
  const auto it = std::find(metrics.begin(), metrics.end(), metric);
  if (it == metrics.end()) return -1;
  const char* name = it->c_str();
  double value = -1;
  CUpti_Profiler_Host_EvaluateToGpuValues_Params ev{
      CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
  ev.pHostObject = h.object;
  ev.pCounterDataImage = data.data();
  ev.counterDataImageSize = data.size();
  ev.rangeIndex = 0;
  ev.ppMetricNames = &name;
  ev.numMetrics = 1;
  ev.pMetricValues = &value;
  return cuptiProfilerHostEvaluateToGpuValues(&ev) == CUPTI_SUCCESS ? value : -2;
}

// The counter data size for `metrics` on `object` (which from then on initializes
// counter data for that list), one range at a time.
CUptiResult counter_data_size(CUpti_RangeProfiler_Object* object,
                              const std::vector<std::string>& metrics, size_t* size) {
  std::vector<const char*> names;
  for (const std::string& m : metrics) names.push_back(m.c_str());
  CUpti_RangeProfiler_GetCounterDataSize_Params ds{
      CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
  ds.pRangeProfilerObject = object;
  ds.pMetricNames = names.data();
  ds.numMetrics = names.size();
  ds.maxNumOfRanges = 1;
  ds.maxNumRangeTreeNodes = 1;
  const CUptiResult r = cuptiRangeProfilerGetCounterDataSize(&ds);
  *size = ds.counterDataSize;
  return r;
}

// SetConfig's parameters for one auto range per launch, as flopline sets them.
CUpti_RangeProfiler_SetConfig_Params one_range_config(CUpti_RangeProfiler_Object* object,
                                                      const std::vector<uint8_t>& image,
                                                      std::vector<uint8_t>& data,
                                                      CUpti_ProfilerReplayMode mode) {
  CUpti_RangeProfiler_SetConfig_Params sc{CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
  sc.pRangeProfilerObject = object;
  sc.configSize = image.size();
  sc.pConfig = image.data();
  sc.counterDataImageSize = data.size();
  sc.pCounterDataImage = data.data();
  sc.range = CUPTI_AutoRange;
  sc.replayMode = mode;
  sc.maxRangesPerPass = 1;
  sc.numNestingLevels = 1;
  sc.minNestingLevel = 1;
  sc.passIndex = 0;
  sc.targetNestingLevel = 1;
  return sc;
}

// Counter data initialized afresh for `object`'s last announced metric list.
CUptiResult init_counter_data(CUpti_RangeProfiler_Object* object, std::vector<uint8_t>& data) {
  CUpti_RangeProfiler_CounterDataImage_Initialize_Params ci{
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
  ci.pRangeProfilerObject = object;
  ci.counterDataSize = data.size();
  ci.pCounterData = data.data();
  return cuptiRangeProfilerCounterDataImageInitialize(&ci);
}

// One range around `launch()` (Start, the launch, Stop) and its data decoded; whether
// every pass ran into `all_passes`.
template <class Launch>
CUptiResult measure_around(CUpti_RangeProfiler_Object* object, Launch&& launch, bool* all_passes) {
  CUpti_RangeProfiler_Start_Params st{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
  st.pRangeProfilerObject = object;
  if (CUptiResult r = cuptiRangeProfilerStart(&st); r != CUPTI_SUCCESS) return r;
  launch();
  CUpti_RangeProfiler_Stop_Params sp{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
  sp.pRangeProfilerObject = object;
  if (CUptiResult r = cuptiRangeProfilerStop(&sp); r != CUPTI_SUCCESS) return r;
  *all_passes = sp.isAllPassSubmitted != 0;
  CUpti_RangeProfiler_DecodeData_Params dd{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
  dd.pRangeProfilerObject = object;
  return cuptiRangeProfilerDecodeData(&dd);
}

// What runs unmeasured after each measured launch: nothing, a kernel never measured, or
// the measured kernel itself (a function CUPTI has already instrumented for its SASS
// metrics: does that launch count into the next measurement?).
enum class Between { kNothing, kOther, kSame };

struct Result {
  size_t passes = 0;
  double ms = 0;
  int rounds = 0;
  double ffma = -1;  // the last measured launch's
  double l2_sectors = -1;
  bool stable = true;        // every measured launch gave the same counts
  double other_ffma = -1;    // the interleaved measurement's, the last one
  double drained_ffma = -1;  // what the last drain took up
};

// The nine SIMT op counts flopline collects (SASS metrics: a pass of their own).
std::vector<std::string> simt_metrics() {
  return {"sm__sass_thread_inst_executed_op_dadd_pred_on.sum",
          "sm__sass_thread_inst_executed_op_dmul_pred_on.sum",
          "sm__sass_thread_inst_executed_op_dfma_pred_on.sum",
          "sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
          "sm__sass_thread_inst_executed_op_fmul_pred_on.sum",
          "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
          "sm__sass_thread_inst_executed_op_hadd_pred_on.sum",
          "sm__sass_thread_inst_executed_op_hmul_pred_on.sum",
          "sm__sass_thread_inst_executed_op_hfma_pred_on.sum"};
}

// What runs after each measured launch, inside its timed part: nothing; the range
// profiler disabled and enabled afresh ("re-enabled"); or a launch of a kernel without
// floating-point work measured with the SIMT metrics ("drained"), which takes up SIMT
// counts left in the profiler. Both are ways to keep a one-pass measurement without the
// SIMT metrics from leaving its kernel's SIMT counts to the next SIMT measurement.
enum class After { kNothing, kReenable, kDrain };

struct Config {
  const char* what;
  std::vector<std::string> metrics;
  CUpti_ProfilerReplayMode mode;
  Between between = Between::kNothing;
  bool checkpoint = false;
  bool reconfigure = false;
  const std::vector<std::string>* interleave = nullptr;
  bool in_callback = false;
  bool synchronize = false;  // in the callback, before Start
  After after = After::kNothing;
  // `interleave` only before the first measured launch: does a many-pass configuration
  // set once keep later measurements dear ("after many once")?
  bool interleave_once = false;
};

// Times kLaunches measured launches with `metrics` in `mode`, `between` launched
// unmeasured after each one. `checkpoint` (user replay): the device
// memory is saved with CUPTI's Checkpoint API before the first pass, on the device where
// it fits, and restored before each further pass: flopline's own save and restore in
// place of kernel replay's.
bool time_config(const Setup& s, const Config& c, Result* out) {
#if !FLOPLINE_HAVE_CUPTI_CHECKPOINT
  if (c.checkpoint) return false;  // built without CUPTI's Checkpoint library
#endif
  HostConfig host;
  if (!config_image(s, c.metrics, &host)) return false;
  const std::vector<uint8_t>& image = host.image;
  size_t* passes = &out->passes;
  double* ms = &out->ms;
  int* rounds = &out->rounds;
  *passes = host.passes;
  CUpti_RangeProfiler_Enable_Params en{CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
  en.ctx = s.ctx;
  CHECK_CUPTI(cuptiRangeProfilerEnable(&en));
  // The range profiler object initializes counter data for the metrics of its last
  // GetCounterDataSize: each configuration announces its own again before it is set.
  size_t data_size = 0;
  auto announce = [&](const std::vector<std::string>& metrics) {
    return counter_data_size(en.pRangeProfilerObject, metrics, &data_size);
  };
  CHECK_CUPTI(announce(c.metrics));
  std::vector<uint8_t> data(data_size, 0);
  auto init = [&]() { return init_counter_data(en.pRangeProfilerObject, data); };
  CHECK_CUPTI(init());
  CUpti_RangeProfiler_SetConfig_Params sc =
      one_range_config(en.pRangeProfilerObject, image, data, c.mode);
  CHECK_CUPTI(cuptiRangeProfilerSetConfig(&sc));
  // `c.reconfigure`: the configuration set afresh before each measured launch, inside the
  // timed part (flopline's one-pass parts do so).
  auto configure_afresh = [&]() {
    CHECK_CUPTI(init());
    CHECK_CUPTI(cuptiRangeProfilerSetConfig(&sc));
    return true;
  };
  // A configuration beside this one (kernel replay): the interleaved kernel's, the drain's.
  struct Side {
    HostConfig host;
    std::vector<std::string> metrics;
    std::vector<uint8_t> data;
    CUpti_RangeProfiler_SetConfig_Params sc{};
  };
  auto prepare = [&](Side& side, const std::vector<std::string>& m) {
    side.metrics = m;
    if (!config_image(s, side.metrics, &side.host)) return false;
    CHECK_CUPTI(announce(side.metrics));
    side.data.assign(data_size, 0);
    side.sc = sc;
    side.sc.configSize = side.host.image.size();
    side.sc.pConfig = side.host.image.data();
    side.sc.counterDataImageSize = side.data.size();
    side.sc.pCounterDataImage = side.data.data();
    side.sc.replayMode = CUPTI_KernelReplay;
    CHECK_CUPTI(announce(c.metrics));
    return true;
  };
  // One launch measured with `side`, its FFMA count into `ffma`; then this configuration
  // is set again.
  auto measure_side = [&](Side& side, auto launch, double* ffma) {
    CHECK_CUPTI(announce(side.metrics));
    CHECK_CUPTI(init_counter_data(en.pRangeProfilerObject, side.data));
    side.sc.pRangeProfilerObject = en.pRangeProfilerObject;
    CHECK_CUPTI(cuptiRangeProfilerSetConfig(&side.sc));
    bool all_passes = false;
    CHECK_CUPTI(measure_around(en.pRangeProfilerObject, launch, &all_passes));
    *ffma = metric_value(side.host, side.metrics, side.data,
                         "sm__sass_thread_inst_executed_op_ffma_pred_on.sum");
    CHECK_CUPTI(announce(c.metrics));
    CHECK_CUPTI(init());
    CHECK_CUPTI(cuptiRangeProfilerSetConfig(&sc));
    return true;
  };
  // `c.interleave`: before each measured launch, the other kernel is measured with these
  // metrics (flopline switches so between one function's learning set and another's
  // parts).
  Side other;
  if (c.interleave != nullptr && !prepare(other, *c.interleave)) return false;
  auto measure_other = [&]() {
    return measure_side(
        other, [&] { scale_shift<<<(kOtherN + 255) / 256, 256>>>(s.z, 1.0f, 0.0f, kOtherN); },
        &out->other_ffma);
  };
  // `c.after`: re-enable, or drain with the SIMT metrics on integer_only.
  Side drain;
  if (c.after == After::kDrain && !prepare(drain, simt_metrics())) return false;
  auto after = [&]() {
    if (c.after == After::kReenable) {
      CUpti_RangeProfiler_Disable_Params off{CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
      off.pRangeProfilerObject = en.pRangeProfilerObject;
      CHECK_CUPTI(cuptiRangeProfilerDisable(&off));
      en = CUpti_RangeProfiler_Enable_Params{CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
      en.ctx = s.ctx;
      CHECK_CUPTI(cuptiRangeProfilerEnable(&en));
      // A fresh object knows no metric list: announce it before initializing counter data.
      sc.pRangeProfilerObject = en.pRangeProfilerObject;  // the sides take it when measured
      CHECK_CUPTI(announce(c.metrics));
      CHECK_CUPTI(init());
      CHECK_CUPTI(cuptiRangeProfilerSetConfig(&sc));
    } else if (c.after == After::kDrain) {
      return measure_side(
          drain, [&] { integer_only<<<64, 256>>>(reinterpret_cast<int*>(s.z), 64 * 256); },
          &out->drained_ffma);
    }
    return true;
  };
  std::vector<double> times;
  *rounds = 0;
#if FLOPLINE_HAVE_CUPTI_CHECKPOINT
  CUpti_Checkpoint cp{CUpti_Checkpoint_STRUCT_SIZE};
  cp.ctx = s.ctx;
  cp.reserveDeviceMB = 2048;  // the copy may use the device's memory but its last 2 GiB
  cp.allowOverwrite = 1;
#endif
  for (int i = 0; i < kLaunches; ++i) {
    if (c.interleave != nullptr && (i == 0 || !c.interleave_once) && !measure_other()) {
      return false;
    }
    cudaDeviceSynchronize();
    const auto t0 = std::chrono::steady_clock::now();
    if (c.reconfigure && i > 0 && !configure_afresh()) return false;
    bool done = false;
    if (c.in_callback) {
      g_in_callback.object = en.pRangeProfilerObject;
      g_in_callback.synchronize = c.synchronize;
      g_in_callback.armed = true;
      axpy<<<(kN + 255) / 256, 256>>>(s.y, s.x, 1.0f, kN);
      g_in_callback.armed = false;
      CHECK_CUPTI(g_in_callback.start);
      CHECK_CUPTI(g_in_callback.stop);
      if (!g_in_callback.all_passes) return false;  // kernel replay runs every pass in the launch
      done = true;
      if (i == 0) *rounds = 1;
    }
    for (int pass = 0; !done; ++pass) {  // user replay: the caller runs the passes
#if FLOPLINE_HAVE_CUPTI_CHECKPOINT
      if (c.checkpoint && pass == 0) CHECK_CUPTI(cuptiCheckpointSave(&cp));
      if (c.checkpoint && pass > 0) CHECK_CUPTI(cuptiCheckpointRestore(&cp));
#endif
      CUpti_RangeProfiler_Start_Params st{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
      st.pRangeProfilerObject = en.pRangeProfilerObject;
      CHECK_CUPTI(cuptiRangeProfilerStart(&st));
      axpy<<<(kN + 255) / 256, 256>>>(s.y, s.x, 1.0f, kN);
      CUpti_RangeProfiler_Stop_Params sp{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
      sp.pRangeProfilerObject = en.pRangeProfilerObject;
      CHECK_CUPTI(cuptiRangeProfilerStop(&sp));
      done = sp.isAllPassSubmitted != 0;
      if (i == 0) ++*rounds;
    }
    CUpti_RangeProfiler_DecodeData_Params dd{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
    dd.pRangeProfilerObject = en.pRangeProfilerObject;
    CHECK_CUPTI(cuptiRangeProfilerDecodeData(&dd));
    times.push_back(ms_since(t0));
    const double ffma =
        metric_value(host, c.metrics, data, "sm__sass_thread_inst_executed_op_ffma_pred_on.sum");
    const double sectors =
        metric_value(host, c.metrics, data, "lts__t_sectors_srcunit_tex_op_write.sum");
    if (i > 0 && (ffma != out->ffma || sectors != out->l2_sectors)) out->stable = false;
    out->ffma = ffma;
    out->l2_sectors = sectors;
    CHECK_CUPTI(init());
    if (c.after != After::kNothing) {
      const auto t1 = std::chrono::steady_clock::now();
      if (!after()) return false;
      times.back() += ms_since(t1);
    }
    if (c.between == Between::kOther) {
      scale_shift<<<(kOtherN + 255) / 256, 256>>>(s.z, 1.0f, 0.0f, kOtherN);
    } else if (c.between == Between::kSame) {
      axpy<<<(kN + 255) / 256, 256>>>(s.y, s.x, 1.0f, kN);
    }
    cudaDeviceSynchronize();
  }
#if FLOPLINE_HAVE_CUPTI_CHECKPOINT
  if (c.checkpoint) cuptiCheckpointFree(&cp);
#endif
  CUpti_RangeProfiler_Disable_Params di{CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
  di.pRangeProfilerObject = en.pRangeProfilerObject;
  CHECK_CUPTI(cuptiRangeProfilerDisable(&di));
  *ms = median(times);
  return true;
}

double plain_ms(const Setup& s) {
  std::vector<double> times;
  for (int i = 0; i < kLaunches; ++i) {
    cudaDeviceSynchronize();
    const auto t0 = std::chrono::steady_clock::now();
    axpy<<<(kN + 255) / 256, 256>>>(s.y, s.x, 1.0f, kN);
    cudaDeviceSynchronize();
    times.push_back(ms_since(t0));
  }
  return median(times);
}

// Never measured with the SIMT counts before its own sequence: 2 FFMA per element.
__global__ void twice(float* z, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) z[i] = (z[i] * a + b) * a + b;
}

// COUNTERS_PASS_COST_LEAKS=1: which launches leave SIMT counts to the next range
// configured with them, and whether what is left adds up, so that a measurement could
// subtract it instead of restarting or draining (both dear). Each sequence runs on a
// fresh range profiler object; "S" measures a launch with the SIMT counts, "B" with DRAM,
// L2 writes and duration only, "2" with both (2 passes, kernel replay), each configured
// right before it; "s" and "b" measure again with the configuration already set (counter
// data initialized afresh only); "u" launches unmeasured. With
// COUNTERS_PASS_COST_LEAKS_IN_CALLBACK=1 each range is started and stopped in the
// launch's own callback, as flopline must. Kernels: a = axpy (2^24 FFMA), o = scale_shift (2^26), t
// = twice (2^23), i = integer_only (0). Printed: the FFMA each S or 2 read (the kernel alone: a
// 2^24, o 2^26, t 2^23, i 0), the L2 write sectors each B read, and each range's milliseconds
// configuring and measuring.
bool run_leak_sequences(const Setup& s) {
  const std::vector<std::string> simt = simt_metrics();
  const std::vector<std::string> bytes = {
      "dram__bytes_read.sum", "lts__t_sectors_srcunit_tex_op_write.sum", "gpu__time_duration.sum"};
  std::vector<std::string> both = simt;
  both.insert(both.end(), bytes.begin(), bytes.end());
  HostConfig h_simt, h_bytes, h_both;
  if (!config_image(s, simt, &h_simt) || !config_image(s, bytes, &h_bytes) ||
      !config_image(s, both, &h_both))
    return false;
  constexpr int kTwiceN = 1 << 22;
  auto launch = [&](char k) {
    if (k == 'a') axpy<<<(kN + 255) / 256, 256>>>(s.y, s.x, 1.0f, kN);
    if (k == 'o') scale_shift<<<(kOtherN + 255) / 256, 256>>>(s.z, 1.0f, 0.0f, kOtherN);
    if (k == 't') twice<<<(kTwiceN + 255) / 256, 256>>>(s.z, 1.0f, 0.0f, kTwiceN);
    if (k == 'i') integer_only<<<64, 256>>>(reinterpret_cast<int*>(s.z), 64 * 256);
  };
  struct Sequence {
    const char* what;
    const char* steps;  // pairs: mode, kernel
  };
  const Sequence sequences[] = {
      {"one byte-only range leaves its kernel's", "SaBaSo"},
      {"two byte-only ranges, two kernels: a sum?", "SaSoBaBoSi"},
      {"the same kernel twice byte-only: twice?", "SaBaBaSi"},
      {"a replayed range with the SIMT counts reads it too?", "SaBa2o"},
      {"a kernel never measured with SIMT leaves nothing?", "BtSa"},
      {"unmeasured launches after the byte-only range", "SaBauauaSi"},
      {"left over after the SIMT range that read it?", "SaBaSiSi"},
      {"one-pass ranges after a 2-pass one: dearer?", "SaBaSaBa2oSaBaSaBa"},
      {"a set measured again without configuring it: dearer?", "BabababaBaBaBa"},
      {"the same for the SIMT counts, and 2 passes", "SasasaSa2o2o"},
  };
  const char* cb = std::getenv("COUNTERS_PASS_COST_LEAKS_IN_CALLBACK");
  const bool in_callback = cb != nullptr && std::string(cb) == "1";
  std::printf("%-52s %-12s %s%s\n", "sequence", "steps",
              "each range: FFMA read (or [L2 sectors]), ms configuring+measuring",
              in_callback ? "; ranges started in the launch's callback" : "");
  for (const Sequence& q : sequences) {
    CUpti_RangeProfiler_Enable_Params en{CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
    en.ctx = s.ctx;
    CHECK_CUPTI(cuptiRangeProfilerEnable(&en));
    std::string reads;
    std::vector<uint8_t> data;  // the current configuration's counter data
    for (const char* p = q.steps; p[0] != '\0' && p[1] != '\0'; p += 2) {
      const char kernel = p[1];
      if (p[0] == 'u') {
        launch(kernel);
        cudaDeviceSynchronize();
        continue;
      }
      // Lower case: measured again with the configuration already set, its counter data
      // only initialized afresh (as the timing rows above and flopline's repeated sets).
      const bool again = p[0] == 's' || p[0] == 'b';
      const char mode = again ? static_cast<char>(p[0] - 'a' + 'A') : p[0];
      const HostConfig& h = mode == 'S' ? h_simt : mode == 'B' ? h_bytes : h_both;
      const std::vector<std::string>& metrics = mode == 'S' ? simt : mode == 'B' ? bytes : both;
      const auto c0 = std::chrono::steady_clock::now();
      if (!again) {
        size_t size = 0;
        CHECK_CUPTI(counter_data_size(en.pRangeProfilerObject, metrics, &size));
        data.assign(size, 0);
      }
      CHECK_CUPTI(init_counter_data(en.pRangeProfilerObject, data));
      if (!again) {
        CUpti_RangeProfiler_SetConfig_Params sc =
            one_range_config(en.pRangeProfilerObject, h.image, data, CUPTI_KernelReplay);
        CHECK_CUPTI(cuptiRangeProfilerSetConfig(&sc));
      }
      const double configure_ms = ms_since(c0);
      cudaDeviceSynchronize();
      const auto t0 = std::chrono::steady_clock::now();
      bool all_passes = false;
      if (in_callback) {  // started and stopped in the launch's own callback, as flopline
        g_in_callback.object = en.pRangeProfilerObject;
        g_in_callback.synchronize = false;
        g_in_callback.armed = true;
        launch(kernel);
        g_in_callback.armed = false;
        CHECK_CUPTI(g_in_callback.start);
        CHECK_CUPTI(g_in_callback.stop);
        all_passes = g_in_callback.all_passes;
        CUpti_RangeProfiler_DecodeData_Params dd{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
        dd.pRangeProfilerObject = en.pRangeProfilerObject;
        CHECK_CUPTI(cuptiRangeProfilerDecodeData(&dd));
      } else {
        CHECK_CUPTI(measure_around(
            en.pRangeProfilerObject, [&] { launch(kernel); }, &all_passes));
      }
      const double ms = ms_since(t0);
      // What the range read: FFMA where it has the SIMT counts, else L2 write sectors (a
      // check that a byte-only range counted at all); its time and its configuring's.
      const bool has_simt = mode != 'B';
      const double value =
          metric_value(h, metrics, data,
                       has_simt ? "sm__sass_thread_inst_executed_op_ffma_pred_on.sum"
                                : "lts__t_sectors_srcunit_tex_op_write.sum");
      char cell[128];
      std::snprintf(cell, sizeof cell, " %c%c: %s%.0f%s %.0f+%.0f ms%s", p[0], kernel,
                    has_simt ? "" : "[L2 ", value, has_simt ? "" : "]", configure_ms, ms,
                    all_passes ? "" : " (passes missing)");
      reads += cell;
    }
    CUpti_RangeProfiler_Disable_Params di{CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
    di.pRangeProfilerObject = en.pRangeProfilerObject;
    CHECK_CUPTI(cuptiRangeProfilerDisable(&di));
    std::printf("%-52s %-12s%s\n", q.what, q.steps, reads.c_str());
    std::fflush(stdout);
  }
  return true;
}

}  // namespace

#if FLOPLINE_PASS_COST_LIBRARY
// Built as a library too, so that bench/counters_pass_cost_torch.py can run it inside a
// PyTorch process, on the context PyTorch uses.
extern "C" __attribute__((visibility("default"))) int counters_pass_cost_main(int argc,
                                                                              char** argv) {
#else
int main(int argc, char** argv) {
#endif
  std::vector<double> gibs{0, 8};
  if (argc > 1) {
    gibs.clear();
    std::stringstream in(argv[1]);
    for (std::string g; std::getline(in, g, ',');) gibs.push_back(std::atof(g.c_str()));
  }
  // COUNTERS_PASS_COST_INIT_FIRST=1: CUPTI's profiler initialized before the CUDA
  // context exists, as flopline's injection does.
  auto env_on = [](const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr && std::string(v) == "1";
  };
  if (env_on("COUNTERS_PASS_COST_INIT_FIRST")) {
    CUpti_Profiler_Initialize_Params first{CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
    if (cuptiProfilerInitialize(&first) != CUPTI_SUCCESS) return 1;
    std::printf("(profiler initialized before the context)\n");
  }
  Setup s;
  cudaSetDevice(0);
  cudaFree(nullptr);
  cuCtxGetCurrent(&s.ctx);
  if (cudaMalloc(&s.x, kN * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&s.y, kN * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&s.z, kOtherN * sizeof(float)) != cudaSuccess) {
    std::fprintf(stderr, "cudaMalloc failed\n");
    return 1;
  }
  CUpti_Profiler_Initialize_Params pi{CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
  if (cuptiProfilerInitialize(&pi) != CUPTI_SUCCESS) return 1;
  CUpti_SubscriberHandle subscriber = nullptr;
  if (cuptiSubscribe(&subscriber, on_driver_call, nullptr) == CUPTI_SUCCESS) {
    for (CUpti_CallbackId id :
         {CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
          CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz})
      cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, id);
    // COUNTERS_PASS_COST_RUNTIME_CB=1: the runtime's launch callbacks on too (ignored), as
    // flopline's are.
    if (env_on("COUNTERS_PASS_COST_RUNTIME_CB")) {
      for (CUpti_CallbackId id : {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                                  CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
                                  CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060})
        cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, id);
      std::printf("(runtime launch callbacks on)\n");
    }
  } else {
    std::fprintf(stderr, "cuptiSubscribe failed: the \"in callback\" rows fail\n");
  }
  if (const char* a = std::getenv("COUNTERS_PASS_COST_ACTIVITY"); a && std::string(a) == "1") {
    if (cuptiActivityRegisterCallbacks(activity_buffer_requested, activity_buffer_completed) !=
            CUPTI_SUCCESS ||
        cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
      std::fprintf(stderr, "kernel activity records could not be enabled\n");
      return 1;
    }
    std::printf("(kernel activity records on)\n");
  }
  CUpti_Device_GetChipName_Params cn{CUpti_Device_GetChipName_Params_STRUCT_SIZE};
  cn.deviceIndex = 0;
  if (cuptiDeviceGetChipName(&cn) != CUPTI_SUCCESS) return 1;
  s.chip = cn.pChipName;
  CUpti_Profiler_GetCounterAvailability_Params av{
      CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
  av.ctx = s.ctx;
  cuptiProfilerGetCounterAvailability(&av);
  s.availability.resize(av.counterAvailabilityImageSize);
  av.pCounterAvailabilityImage = s.availability.data();
  cuptiProfilerGetCounterAvailability(&av);

  if (const char* leaks = std::getenv("COUNTERS_PASS_COST_LEAKS");
      leaks && std::string(leaks) == "1")
    return run_leak_sequences(s) ? 0 : 1;
  const std::vector<std::string> simt = simt_metrics();
  const std::vector<std::string> bytes = {
      "dram__bytes_read.sum", "lts__t_sectors_srcunit_tex_op_write.sum", "gpu__time_duration.sum"};
  std::vector<std::string> two = simt;
  two.insert(two.end(), bytes.begin(), bytes.end());
  std::vector<std::string> many = two;
  for (const char* m :
       {"sm__inst_executed_pipe_tensor.sum", "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum",
        "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32.sum",
        "sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32.sum",
        "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32.sum", "sm__ops_path_tensor_src_fp8.sum",
        "sm__ops_path_tensor_src_fp64.sum"})
    many.push_back(m);
  constexpr Between kOther = Between::kOther;
  constexpr Between kSame = Between::kSame;
  constexpr Between kNothing = Between::kNothing;
  const std::vector<Config> configs = {
      {"duration, kernel replay", {"gpu__time_duration.sum"}, CUPTI_KernelReplay},
      {"duration, user replay", {"gpu__time_duration.sum"}, CUPTI_UserReplay},
      {"SIMT ops, kernel replay", simt, CUPTI_KernelReplay},
      {"SIMT ops, user replay", simt, CUPTI_UserReplay},
      {"DRAM+L2+dur, kernel replay", bytes, CUPTI_KernelReplay},
      {"DRAM+L2+dur, user replay", bytes, CUPTI_UserReplay},
      // Which of the one-pass byte metrics cost what, and whether a tensor metric alone
      // costs as much: one metric each, nothing replayed.
      {"DRAM read only, user replay", {"dram__bytes_read.sum"}, CUPTI_UserReplay},
      {"L2 writes only, user replay",
       {"lts__t_sectors_srcunit_tex_op_write.sum"},
       CUPTI_UserReplay},
      {"tensor inst only, user replay", {"sm__inst_executed_pipe_tensor.sum"}, CUPTI_UserReplay},
      {"hgmma bf16 only, user replay",
       {"sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum"},
       CUPTI_UserReplay},
      {"SIMT+DRAM, kernel replay", two, CUPTI_KernelReplay},
      {"+tensor paths, kernel replay", many, CUPTI_KernelReplay},
      {"SIMT ops, other between", simt, CUPTI_KernelReplay, kOther},
      {"DRAM+L2+dur, other between", bytes, CUPTI_KernelReplay, kOther},
      {"SIMT+DRAM, other between", two, CUPTI_KernelReplay, kOther},
      {"SIMT ops, same between", simt, CUPTI_KernelReplay, kSame},
      {"SIMT ops, same between, user", simt, CUPTI_UserReplay, kSame},
      {"SIMT+DRAM, same between", two, CUPTI_KernelReplay, kSame},
      {"SIMT ops, reconfigured", simt, CUPTI_KernelReplay, kSame, false, true},
      {"DRAM+L2+dur, reconfigured", bytes, CUPTI_KernelReplay, kSame, false, true},
      // A one-pass measurement right after another kernel's measurement in another
      // configuration, as flopline's parts come between other functions' measurements.
      {"SIMT ops, after replayed other", simt, CUPTI_KernelReplay, kNothing, false, false, &two},
      {"SIMT ops, after 1-pass other", simt, CUPTI_KernelReplay, kNothing, false, false, &simt},
      {"DRAM+L2+dur, after replayed", bytes, CUPTI_KernelReplay, kNothing, false, false, &two},
      {"SIMT ops, same+after replayed", simt, CUPTI_KernelReplay, kSame, false, false, &two},
      {"SIMT ops, in callback", simt, CUPTI_KernelReplay, kNothing, false, false, nullptr, true},
      {"DRAM+L2+dur, in callback", bytes, CUPTI_KernelReplay, kNothing, false, false, nullptr,
       true},
      {"SIMT+DRAM, in callback", two, CUPTI_KernelReplay, kNothing, false, false, nullptr, true},
      {"SIMT ops, same, in callback", simt, CUPTI_KernelReplay, kSame, false, false, nullptr, true},
      {"SIMT ops, after replayed, in cb", simt, CUPTI_KernelReplay, kSame, false, false, &two,
       true},
      {"DRAM+L2+dur, after repl., in cb", bytes, CUPTI_KernelReplay, kSame, false, false, &two,
       true},
      {"SIMT ops, after repl., cb+sync", simt, CUPTI_KernelReplay, kSame, false, false, &two, true,
       true},
      {"DRAM+L2+dur, after repl., cb+sync", bytes, CUPTI_KernelReplay, kSame, false, false, &two,
       true, true},
      // The carry-over's fixes: after each one-pass byte measurement, the range profiler
      // re-enabled, or the SIMT counts it left drained; right when "other FFMA" is 2^26.
      {"DRAM+L2+dur, re-enabled", bytes, CUPTI_KernelReplay, kNothing, false, false, &two, false,
       false, After::kReenable},
      {"DRAM+L2+dur, drained", bytes, CUPTI_KernelReplay, kNothing, false, false, &two, false,
       false, After::kDrain},
      // ... and with the measured kernel run again unmeasured after the fix, while the
      // byte-only configuration is set: do launches outside a range leave counts too?
      {"DRAM+L2+dur, re-enabled, same", bytes, CUPTI_KernelReplay, kSame, false, false, &two, false,
       false, After::kReenable},
      {"DRAM+L2+dur, drained, same", bytes, CUPTI_KernelReplay, kSame, false, false, &two, false,
       false, After::kDrain},
      {"SIMT+DRAM, user + checkpoint", two, CUPTI_UserReplay, kNothing, true},
      {"+tensor paths, user + checkpoint", many, CUPTI_UserReplay, kNothing, true},
  };
  // COUNTERS_PASS_COST_SETS="label=metric,metric;label=..." times metric lists of the
  // caller's (flopline's own parts, from FLOPLINE_COUNTERS_DEBUG's lines), each configured
  // afresh before every measured launch and after another configuration's measurement, as
  // flopline's parts are; COUNTERS_PASS_COST_ONLY=1 times only those.
  std::vector<std::string> labels;
  std::vector<std::vector<std::string>> lists;
  if (const char* sets = std::getenv("COUNTERS_PASS_COST_SETS")) {
    std::stringstream in(sets);
    for (std::string item; std::getline(in, item, ';');) {
      const std::size_t eq = item.find('=');
      if (eq == std::string::npos) continue;
      labels.push_back(item.substr(0, eq));
      std::vector<std::string> names;
      std::stringstream metrics(item.substr(eq + 1));
      for (std::string m; std::getline(metrics, m, ',');) names.push_back(m);
      lists.push_back(names);
    }
  }
  std::vector<Config> chosen;
  const char* only = std::getenv("COUNTERS_PASS_COST_ONLY");
  if (only == nullptr || std::string(only) != "1") chosen = configs;
  std::vector<std::string> labels_in_callback;
  std::vector<std::string> labels_after_many;  // after a measurement of many passes
  for (const std::string& l : labels) labels_in_callback.push_back(l + ", after repl., cb+sync");
  for (const std::string& l : labels) labels_after_many.push_back(l + ", after many, cb+sync");
  std::vector<std::string> labels_after_many_once, labels_reenabled;
  for (const std::string& l : labels) labels_after_many_once.push_back(l + ", many once, cb");
  for (const std::string& l : labels) labels_reenabled.push_back(l + ", many once, re-enabled");
  for (std::size_t i = 0; i < lists.size(); ++i) {
    chosen.push_back({labels[i].c_str(), lists[i], CUPTI_KernelReplay, kSame, false, true});
    chosen.push_back({labels_in_callback[i].c_str(), lists[i], CUPTI_KernelReplay, kSame, false,
                      false, &two, true, true});
    chosen.push_back({labels_after_many[i].c_str(), lists[i], CUPTI_KernelReplay, kSame, false,
                      false, &many, true, true});
    chosen.push_back({labels_after_many_once[i].c_str(), lists[i], CUPTI_KernelReplay, kSame, false,
                      false, &many, true, true, After::kNothing, true});
    chosen.push_back({labels_reenabled[i].c_str(), lists[i], CUPTI_KernelReplay, kSame, false,
                      false, &many, true, true, After::kReenable, true});
  }
  std::printf("%-30s %8s %7s %7s %10s %10s %12s %12s %7s %12s %12s\n", "configuration", "held GiB",
              "passes", "rounds", "ms/launch", "plain ms", "FFMA", "L2 sectors", "stable",
              "other FFMA", "drained");
  std::printf("%-30s %8s %7s %7s %10s %10s %12d %12d\n", "(exact for the measured kernel)", "", "",
              "", "", "", kN, kN * 4 / 32);
  for (double gib : gibs) {
    void* hold = nullptr;
    if (gib > 0 && cudaMalloc(&hold, static_cast<size_t>(gib * (1ull << 30))) != cudaSuccess) {
      std::fprintf(stderr, "cannot hold %.0f GiB\n", gib);
      continue;
    }
    if (hold != nullptr) cudaMemset(hold, 1, static_cast<size_t>(gib * (1ull << 30)));
    const double plain = plain_ms(s);
    for (const Config& c : chosen) {
      Result r;
      if (!time_config(s, c, &r)) {
        std::printf("%-30s %8.0f failed\n", c.what, gib);
        continue;
      }
      std::printf("%-30s %8.0f %7zu %7d %10.2f %10.3f %12.0f %12.0f %7s %12.0f %12.0f\n", c.what,
                  gib, r.passes, r.rounds, r.ms, plain, r.ffma, r.l2_sectors,
                  r.stable ? "yes" : "NO", r.other_ffma, r.drained_ffma);
      std::fflush(stdout);
    }
    if (hold != nullptr) cudaFree(hold);
  }
  return 0;
}
