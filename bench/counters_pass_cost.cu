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
//   2 passes   those nine plus DRAM bytes read, L2 writes and duration
//   many       the above plus every Hopper tensor-path metric flopline plans
// each in kernel replay, and the one-pass ones also in user replay (one pass: nothing to
// replay, nothing for CUPTI to save).
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti.h>
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

constexpr int kN = 1 << 24;  // 64 MB per buffer
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
};

bool config_image(const Setup& s, const std::vector<std::string>& metrics,
                  std::vector<uint8_t>* image, size_t* passes) {
  CUpti_Profiler_Host_Initialize_Params hi{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
  hi.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  hi.pChipName = s.chip.c_str();
  hi.pCounterAvailabilityImage = s.availability.data();
  CHECK_CUPTI(cuptiProfilerHostInitialize(&hi));
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
  CUpti_Profiler_Host_Deinitialize_Params hd{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
  hd.pHostObject = hi.pHostObject;
  cuptiProfilerHostDeinitialize(&hd);
  return true;
}

// Times kLaunches measured launches with `metrics` in `mode`; the median ms per launch.
bool time_config(const Setup& s, const std::vector<std::string>& metrics,
                 CUpti_ProfilerReplayMode mode, size_t* passes, double* ms, int* rounds) {
  std::vector<uint8_t> image;
  if (!config_image(s, metrics, &image, passes)) return false;
  CUpti_RangeProfiler_Enable_Params en{CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
  en.ctx = s.ctx;
  CHECK_CUPTI(cuptiRangeProfilerEnable(&en));
  std::vector<const char*> names;
  for (const std::string& m : metrics) names.push_back(m.c_str());
  CUpti_RangeProfiler_GetCounterDataSize_Params ds{
      CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
  ds.pRangeProfilerObject = en.pRangeProfilerObject;
  ds.pMetricNames = names.data();
  ds.numMetrics = names.size();
  ds.maxNumOfRanges = 1;
  ds.maxNumRangeTreeNodes = 1;
  CHECK_CUPTI(cuptiRangeProfilerGetCounterDataSize(&ds));
  std::vector<uint8_t> data(ds.counterDataSize, 0);
  auto init = [&]() {
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params ci{
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
    ci.pRangeProfilerObject = en.pRangeProfilerObject;
    ci.counterDataSize = data.size();
    ci.pCounterData = data.data();
    return cuptiRangeProfilerCounterDataImageInitialize(&ci);
  };
  CHECK_CUPTI(init());
  CUpti_RangeProfiler_SetConfig_Params sc{CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
  sc.pRangeProfilerObject = en.pRangeProfilerObject;
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
  CHECK_CUPTI(cuptiRangeProfilerSetConfig(&sc));
  std::vector<double> times;
  *rounds = 0;
  for (int i = 0; i < kLaunches; ++i) {
    cudaDeviceSynchronize();
    const auto t0 = std::chrono::steady_clock::now();
    bool done = false;
    while (!done) {  // user replay: the caller runs the passes
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
    CHECK_CUPTI(init());
    times.push_back(ms_since(t0));
  }
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

}  // namespace

int main(int argc, char** argv) {
  std::vector<double> gibs{0, 8};
  if (argc > 1) {
    gibs.clear();
    std::stringstream in(argv[1]);
    for (std::string g; std::getline(in, g, ',');) gibs.push_back(std::atof(g.c_str()));
  }
  Setup s;
  cudaSetDevice(0);
  cudaFree(nullptr);
  cuCtxGetCurrent(&s.ctx);
  if (cudaMalloc(&s.x, kN * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&s.y, kN * sizeof(float)) != cudaSuccess) {
    std::fprintf(stderr, "cudaMalloc failed\n");
    return 1;
  }
  CUpti_Profiler_Initialize_Params pi{CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
  if (cuptiProfilerInitialize(&pi) != CUPTI_SUCCESS) return 1;
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

  const std::vector<std::string> simt = {"sm__sass_thread_inst_executed_op_dadd_pred_on.sum",
                                         "sm__sass_thread_inst_executed_op_dmul_pred_on.sum",
                                         "sm__sass_thread_inst_executed_op_dfma_pred_on.sum",
                                         "sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
                                         "sm__sass_thread_inst_executed_op_fmul_pred_on.sum",
                                         "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
                                         "sm__sass_thread_inst_executed_op_hadd_pred_on.sum",
                                         "sm__sass_thread_inst_executed_op_hmul_pred_on.sum",
                                         "sm__sass_thread_inst_executed_op_hfma_pred_on.sum"};
  std::vector<std::string> two = simt;
  for (const char* m : {"dram__bytes_read.sum", "lts__t_sectors_srcunit_tex_op_write.sum",
                        "gpu__time_duration.sum"})
    two.push_back(m);
  std::vector<std::string> many = two;
  for (const char* m :
       {"sm__inst_executed_pipe_tensor.sum", "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum",
        "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32.sum",
        "sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32.sum",
        "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32.sum", "sm__ops_path_tensor_src_fp8.sum",
        "sm__ops_path_tensor_src_fp64.sum"})
    many.push_back(m);
  struct Config {
    const char* what;
    std::vector<std::string> metrics;
    CUpti_ProfilerReplayMode mode;
  };
  const std::vector<Config> configs = {
      {"duration, kernel replay", {"gpu__time_duration.sum"}, CUPTI_KernelReplay},
      {"duration, user replay", {"gpu__time_duration.sum"}, CUPTI_UserReplay},
      {"SIMT ops, kernel replay", simt, CUPTI_KernelReplay},
      {"SIMT ops, user replay", simt, CUPTI_UserReplay},
      {"SIMT+DRAM, kernel replay", two, CUPTI_KernelReplay},
      {"+tensor paths, kernel replay", many, CUPTI_KernelReplay},
  };
  std::printf("%-30s %8s %7s %7s %10s %10s\n", "configuration", "held GiB", "passes", "rounds",
              "ms/launch", "plain ms");
  for (double gib : gibs) {
    void* hold = nullptr;
    if (gib > 0 && cudaMalloc(&hold, static_cast<size_t>(gib * (1ull << 30))) != cudaSuccess) {
      std::fprintf(stderr, "cannot hold %.0f GiB\n", gib);
      continue;
    }
    if (hold != nullptr) cudaMemset(hold, 1, static_cast<size_t>(gib * (1ull << 30)));
    const double plain = plain_ms(s);
    for (const Config& c : configs) {
      size_t passes = 0;
      double ms = 0;
      int rounds = 0;
      if (!time_config(s, c.metrics, c.mode, &passes, &ms, &rounds)) {
        std::printf("%-30s %8.0f failed\n", c.what, gib);
        continue;
      }
      std::printf("%-30s %8.0f %7zu %7d %10.2f %10.3f\n", c.what, gib, passes, rounds, ms, plain);
      std::fflush(stdout);
    }
    if (hold != nullptr) cudaFree(hold);
  }
  return 0;
}
