// An experiment, not part of flopline: what CUPTI's Range Profiling and PM Sampling APIs
// give on this machine, before flopline's counters are built on them. One run answers:
//   - is profiling permitted and supported here (device, driver, virtual machine)?
//   - which metrics the chip lists (written to DIR/metrics_range.txt, metrics_pm.txt)
//   - auto-range + kernel-replay ranges around kernels of known work: their counted
//     FLOPs by type and DRAM bytes, and what one measured launch costs
//   - the same driven from CUPTI launch callbacks with activity records on (what the
//     injection library would do), and how many kernel records a replayed launch makes
//   - PM sampling over a matmul loop and an elementwise loop
//   Usage: counters_probe DIR
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cupti.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

std::string g_dir = ".";

const char* err(CUptiResult r) {
  const char* s = nullptr;
  cuptiGetResultString(r, &s);
  return s ? s : "?";
}
#define TRY(call)                                                                     \
  do {                                                                                \
    CUptiResult r_ = (call);                                                          \
    if (r_ != CUPTI_SUCCESS) {                                                        \
      std::printf("  FAIL %s: %d %s (line %d)\n", #call, (int)r_, err(r_), __LINE__); \
      return false;                                                                   \
    }                                                                                 \
  } while (0)
#define CK(call)                                                                          \
  do {                                                                                    \
    cudaError_t e_ = (call);                                                              \
    if (e_ != cudaSuccess) {                                                              \
      std::printf("CUDA FAIL %s: %s line %d\n", #call, cudaGetErrorString(e_), __LINE__); \
      std::exit(1);                                                                       \
    }                                                                                     \
  } while (0)

double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// ---- kernels of known work ------------------------------------------------------
__global__ void ffma_kernel(float* out, int iters) {
  float a = threadIdx.x * 1e-3f, b = 1.0001f, c = 0.5f;
  for (int i = 0; i < iters; ++i) a = fmaf(a, b, c);
  out[blockIdx.x * blockDim.x + threadIdx.x] = a;
}
__global__ void dfma_kernel(double* out, int iters) {
  double a = threadIdx.x * 1e-3, b = 1.0001, c = 0.5;
  for (int i = 0; i < iters; ++i) a = fma(a, b, c);
  out[blockIdx.x * blockDim.x + threadIdx.x] = a;
}
__global__ void hfma2_kernel(__half2* out, int iters) {
  __half2 a = __floats2half2_rn(threadIdx.x * 1e-3f, 0.25f), b = __floats2half2_rn(1.0f, 1.0f),
          c = __floats2half2_rn(0.001f, 0.002f);
  for (int i = 0; i < iters; ++i) a = __hfma2(a, b, c);
  out[blockIdx.x * blockDim.x + threadIdx.x] = a;
}
__global__ void add_kernel(const float* a, const float* b, float* c, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    c[i] = a[i] + b[i];
}
__global__ void fill_kernel(float* p, size_t n, float v) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    p[i] = v * (float)(i % 7);
}
__global__ void fill_bf16(__nv_bfloat16* p, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
       i += (size_t)gridDim.x * blockDim.x)
    p[i] = __float2bfloat16((float)(i % 13) * 0.01f);
}

// ---- metric lists ----------------------------------------------------------------
std::string g_chip;
std::vector<uint8_t> g_avail;

bool list_metrics(CUpti_ProfilerType type, const char* file) {
  CUpti_Profiler_Host_Initialize_Params hi{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
  hi.profilerType = type;
  hi.pChipName = g_chip.c_str();
  hi.pCounterAvailabilityImage = g_avail.empty() ? nullptr : g_avail.data();
  TRY(cuptiProfilerHostInitialize(&hi));
  std::ofstream out(g_dir + "/" + file);
  size_t total = 0;
  for (int mt = 0; mt < CUPTI_METRIC_TYPE__COUNT; ++mt) {
    CUpti_Profiler_Host_GetBaseMetrics_Params bm{
        CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE};
    bm.pHostObject = hi.pHostObject;
    bm.metricType = (CUpti_MetricType)mt;
    if (cuptiProfilerHostGetBaseMetrics(&bm) != CUPTI_SUCCESS) continue;
    total += bm.numMetrics;
    for (size_t i = 0; i < bm.numMetrics; ++i) {
      out << mt << "\t" << bm.ppMetricNames[i];
      CUpti_Profiler_Host_GetSubMetrics_Params sm{
          CUpti_Profiler_Host_GetSubMetrics_Params_STRUCT_SIZE};
      sm.pHostObject = hi.pHostObject;
      sm.metricType = (CUpti_MetricType)mt;
      sm.pMetricName = bm.ppMetricNames[i];
      if (cuptiProfilerHostGetSubMetrics(&sm) == CUPTI_SUCCESS) {
        out << "\t";
        for (size_t j = 0; j < sm.numOfSubmetrics && j < 12; ++j) out << sm.ppSubMetrics[j] << ",";
      }
      out << "\n";
    }
  }
  std::printf("  %s: %zu base metrics -> %s\n",
              type == CUPTI_PROFILER_TYPE_PM_SAMPLING ? "pm" : "range", total, file);
  CUpti_Profiler_Host_Deinitialize_Params hd{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
  hd.pHostObject = hi.pHostObject;
  cuptiProfilerHostDeinitialize(&hd);
  return true;
}

// The names in `wanted` whose base metric (the part before the first '.') the host lists.
std::vector<std::string> known_metrics(CUpti_Profiler_Host_Object* host,
                                       const std::vector<std::string>& wanted) {
  std::vector<std::string> base;
  for (int mt = 0; mt < CUPTI_METRIC_TYPE__COUNT; ++mt) {
    CUpti_Profiler_Host_GetBaseMetrics_Params bm{
        CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE};
    bm.pHostObject = host;
    bm.metricType = (CUpti_MetricType)mt;
    if (cuptiProfilerHostGetBaseMetrics(&bm) != CUPTI_SUCCESS) continue;
    for (size_t i = 0; i < bm.numMetrics; ++i) base.push_back(bm.ppMetricNames[i]);
  }
  std::vector<std::string> out;
  for (const std::string& w : wanted) {
    const std::string b = w.substr(0, w.find('.'));
    if (std::find(base.begin(), base.end(), b) != base.end()) {
      out.push_back(w);
    } else {
      std::printf("  not listed: %s\n", w.c_str());
    }
  }
  return out;
}

// ---- a range profiler for one context -----------------------------------------------
struct RangeProfiler {
  CUpti_Profiler_Host_Object* host = nullptr;
  CUpti_RangeProfiler_Object* obj = nullptr;
  std::vector<std::string> names;
  std::vector<const char*> cnames;
  std::vector<uint8_t> config, counter_data;
  size_t passes = 0;
  size_t max_ranges = 0;

  bool init(CUcontext ctx, const std::vector<std::string>& wanted, size_t max_ranges_) {
    max_ranges = max_ranges_;
    CUpti_Profiler_Host_Initialize_Params hi{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
    hi.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    hi.pChipName = g_chip.c_str();
    hi.pCounterAvailabilityImage = g_avail.empty() ? nullptr : g_avail.data();
    TRY(cuptiProfilerHostInitialize(&hi));
    host = hi.pHostObject;
    // A name the host does not know breaks the host object for every later call: keep
    // only names whose base metric the chip lists, then add them all at once.
    names = known_metrics(host, wanted);
    for (auto& n : names) cnames.push_back(n.c_str());
    {
      CUpti_Profiler_Host_ConfigAddMetrics_Params am{
          CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
      am.pHostObject = host;
      am.ppMetricNames = cnames.data();
      am.numMetrics = cnames.size();
      TRY(cuptiProfilerHostConfigAddMetrics(&am));
    }
    CUpti_Profiler_Host_GetConfigImageSize_Params cs{
        CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
    cs.pHostObject = host;
    TRY(cuptiProfilerHostGetConfigImageSize(&cs));
    config.resize(cs.configImageSize);
    CUpti_Profiler_Host_GetConfigImage_Params ci{
        CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
    ci.pHostObject = host;
    ci.configImageSize = config.size();
    ci.pConfigImage = config.data();
    TRY(cuptiProfilerHostGetConfigImage(&ci));
    CUpti_Profiler_Host_GetNumOfPasses_Params np{
        CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
    np.configImageSize = config.size();
    np.pConfigImage = config.data();
    TRY(cuptiProfilerHostGetNumOfPasses(&np));
    passes = np.numOfPasses;

    CUpti_RangeProfiler_Enable_Params en{CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
    en.ctx = ctx;
    TRY(cuptiRangeProfilerEnable(&en));
    obj = en.pRangeProfilerObject;
    CUpti_RangeProfiler_GetCounterDataSize_Params ds{
        CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
    ds.pRangeProfilerObject = obj;
    ds.pMetricNames = cnames.data();
    ds.numMetrics = cnames.size();
    ds.maxNumOfRanges = max_ranges;
    ds.maxNumRangeTreeNodes = (uint32_t)max_ranges;
    TRY(cuptiRangeProfilerGetCounterDataSize(&ds));
    counter_data.resize(ds.counterDataSize);
    if (!reset_data()) return false;
    CUpti_RangeProfiler_SetConfig_Params sc{CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
    sc.pRangeProfilerObject = obj;
    sc.configSize = config.size();
    sc.pConfig = config.data();
    sc.counterDataImageSize = counter_data.size();
    sc.pCounterDataImage = counter_data.data();
    sc.range = CUPTI_AutoRange;
    sc.replayMode = CUPTI_KernelReplay;
    sc.maxRangesPerPass = max_ranges;
    sc.numNestingLevels = 1;
    sc.minNestingLevel = 1;
    sc.passIndex = 0;
    sc.targetNestingLevel = 1;
    TRY(cuptiRangeProfilerSetConfig(&sc));
    std::printf(
        "  range profiler: %zu metrics, %zu passes, counter data %zu bytes, config %zu bytes\n",
        names.size(), passes, counter_data.size(), config.size());
    return true;
  }
  bool reset_data() {
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params in{
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
    in.pRangeProfilerObject = obj;
    in.counterDataSize = counter_data.size();
    in.pCounterData = counter_data.data();
    TRY(cuptiRangeProfilerCounterDataImageInitialize(&in));
    return true;
  }
  bool start() {
    CUpti_RangeProfiler_Start_Params p{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
    p.pRangeProfilerObject = obj;
    TRY(cuptiRangeProfilerStart(&p));
    return true;
  }
  bool stop(bool* all_submitted) {
    CUpti_RangeProfiler_Stop_Params p{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
    p.pRangeProfilerObject = obj;
    TRY(cuptiRangeProfilerStop(&p));
    *all_submitted = p.isAllPassSubmitted != 0;
    return true;
  }
  bool push(const char* name) {
    CUpti_RangeProfiler_PushRange_Params p{CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE};
    p.pRangeProfilerObject = obj;
    p.pRangeName = name;
    TRY(cuptiRangeProfilerPushRange(&p));
    return true;
  }
  bool pop() {
    CUpti_RangeProfiler_PopRange_Params p{CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE};
    p.pRangeProfilerObject = obj;
    TRY(cuptiRangeProfilerPopRange(&p));
    return true;
  }
  // Decodes and returns every range's name and values.
  bool decode(std::vector<std::pair<std::string, std::vector<double>>>* out, size_t* dropped) {
    CUpti_RangeProfiler_DecodeData_Params d{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
    d.pRangeProfilerObject = obj;
    TRY(cuptiRangeProfilerDecodeData(&d));
    *dropped = d.numOfRangeDropped;
    CUpti_RangeProfiler_GetCounterDataInfo_Params info{
        CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
    info.pCounterDataImage = counter_data.data();
    info.counterDataImageSize = counter_data.size();
    TRY(cuptiRangeProfilerGetCounterDataInfo(&info));
    for (size_t i = 0; i < info.numTotalRanges; ++i) {
      CUpti_RangeProfiler_CounterData_GetRangeInfo_Params ri{
          CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE};
      ri.pCounterDataImage = counter_data.data();
      ri.counterDataImageSize = counter_data.size();
      ri.rangeIndex = i;
      ri.rangeDelimiter = "/";
      std::string name = "?";
      if (cuptiRangeProfilerCounterDataGetRangeInfo(&ri) == CUPTI_SUCCESS && ri.rangeName)
        name = ri.rangeName;
      std::vector<double> v(names.size(), -1);
      CUpti_Profiler_Host_EvaluateToGpuValues_Params ev{
          CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
      ev.pHostObject = host;
      ev.pCounterDataImage = counter_data.data();
      ev.counterDataImageSize = counter_data.size();
      ev.rangeIndex = i;
      ev.ppMetricNames = cnames.data();
      ev.numMetrics = cnames.size();
      ev.pMetricValues = v.data();
      const CUptiResult r = cuptiProfilerHostEvaluateToGpuValues(&ev);
      if (r != CUPTI_SUCCESS) std::printf("  evaluate range %zu: %s\n", i, err(r));
      out->emplace_back(name, std::move(v));
    }
    return true;
  }
  void disable() {
    if (obj) {
      CUpti_RangeProfiler_Disable_Params p{CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
      p.pRangeProfilerObject = obj;
      cuptiRangeProfilerDisable(&p);
      obj = nullptr;
    }
    if (host) {
      CUpti_Profiler_Host_Deinitialize_Params hd{
          CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
      hd.pHostObject = host;
      cuptiProfilerHostDeinitialize(&hd);
      host = nullptr;
    }
  }
};

void print_ranges(const RangeProfiler& rp,
                  const std::vector<std::pair<std::string, std::vector<double>>>& ranges,
                  const char* label) {
  std::printf("  [%s] %zu ranges\n", label, ranges.size());
  for (const auto& [name, v] : ranges) {
    std::printf("    range '%s'\n", name.c_str());
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i] != 0) std::printf("      %-60s %.0f\n", rp.names[i].c_str(), v[i]);
    }
  }
}

// The metrics flopline wants, in every spelling worth trying; rejected ones are printed.
std::vector<std::string> wanted_metrics() {
  std::vector<std::string> m;
  for (const char* t : {"fp64", "tf32_dst_fp32", "bf16_dst_fp32", "fp16", "fp8", "int8"})
    m.push_back(std::string("sm__ops_path_tensor_src_") + t + ".sum");
  for (const char* t : {"tf32_dst_fp32", "bf16_dst_fp32", "fp16"})
    m.push_back(std::string("sm__ops_path_tensor_op_hgmma_src_") + t + ".sum");
  m.push_back("sm__ops_path_tensor_op_igmma_src_int8.sum");
  for (const char* t : {"tf32_dst_fp32", "bf16_dst_fp32", "fp16"})
    m.push_back(std::string("sm__ops_path_tensor_op_hgmma_src_") + t + "_sparsity_on.sum");
  m.push_back("sm__ops_path_tensor_src_fp8_sparsity_on.sum");
  for (const char* p : {"d", "f", "h"}) {
    for (const char* op : {"add", "mul", "fma"}) {
      m.push_back(std::string("sm__sass_thread_inst_executed_op_") + p + op + "_pred_on.sum");
    }
  }
  m.push_back("dram__bytes_read.sum");
  m.push_back("dram__bytes_write.sum");
  return m;
}

// ---- workloads ---------------------------------------------------------------------
struct Buffers {
  size_t n = 1u << 26;  // 64 M floats: 256 MB each, far above L2
  float *a = nullptr, *b = nullptr, *c = nullptr, *out = nullptr;
  double* dout = nullptr;
  __half2* hout = nullptr;
  int mm = 2048;
  float *ma = nullptr, *mb = nullptr, *mc = nullptr;
  __nv_bfloat16 *ha = nullptr, *hb = nullptr;
  cublasHandle_t blas = nullptr;
};

void alloc(Buffers& B) {
  CK(cudaMalloc(&B.a, B.n * 4));
  CK(cudaMalloc(&B.b, B.n * 4));
  CK(cudaMalloc(&B.c, B.n * 4));
  CK(cudaMalloc(&B.out, 1 << 20));
  CK(cudaMalloc(&B.dout, 1 << 21));
  CK(cudaMalloc(&B.hout, 1 << 20));
  const size_t mm2 = (size_t)B.mm * B.mm;
  CK(cudaMalloc(&B.ma, mm2 * 4));
  CK(cudaMalloc(&B.mb, mm2 * 4));
  CK(cudaMalloc(&B.mc, mm2 * 4));
  CK(cudaMalloc(&B.ha, mm2 * 2));
  CK(cudaMalloc(&B.hb, mm2 * 2));
  fill_kernel<<<1024, 256>>>(B.a, B.n, 1.0f);
  fill_kernel<<<1024, 256>>>(B.b, B.n, 2.0f);
  fill_kernel<<<1024, 256>>>(B.ma, mm2, 0.01f);
  fill_kernel<<<1024, 256>>>(B.mb, mm2, 0.02f);
  fill_bf16<<<1024, 256>>>(B.ha, mm2);
  fill_bf16<<<1024, 256>>>(B.hb, mm2);
  CK(cudaDeviceSynchronize());
  if (cublasCreate(&B.blas) != CUBLAS_STATUS_SUCCESS) std::printf("cublasCreate failed\n");
}

// 1024 blocks x 256 threads x 1000 iterations: 262,144,000 FMAs per kernel.
constexpr int kBlocks = 1024, kThreads = 256, kIters = 1000;

void sgemm(Buffers& B, bool tf32) {
  cublasSetMathMode(B.blas, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_PEDANTIC_MATH);
  const float one = 1, zero = 0;
  cublasSgemm(B.blas, CUBLAS_OP_N, CUBLAS_OP_N, B.mm, B.mm, B.mm, &one, B.ma, B.mm, B.mb, B.mm,
              &zero, B.mc, B.mm);
}
void bf16gemm(Buffers& B) {
  cublasSetMathMode(B.blas, CUBLAS_DEFAULT_MATH);
  const float one = 1, zero = 0;
  cublasGemmEx(B.blas, CUBLAS_OP_N, CUBLAS_OP_N, B.mm, B.mm, B.mm, &one, B.ha, CUDA_R_16BF, B.mm,
               B.hb, CUDA_R_16BF, B.mm, &zero, B.mc, CUDA_R_32F, B.mm, CUBLAS_COMPUTE_32F,
               CUBLAS_GEMM_DEFAULT);
}

void run_workload(Buffers& B, int which) {
  switch (which) {
    case 0:
      ffma_kernel<<<kBlocks, kThreads>>>(B.out, kIters);
      break;
    case 1:
      dfma_kernel<<<kBlocks, kThreads>>>(B.dout, kIters);
      break;
    case 2:
      hfma2_kernel<<<kBlocks, kThreads>>>(B.hout, kIters);
      break;
    case 3:
      add_kernel<<<1024, 256>>>(B.a, B.b, B.c, B.n);
      break;
    case 4:
      sgemm(B, true);
      break;
    case 5:
      bf16gemm(B);
      break;
    case 6:
      sgemm(B, false);
      break;
  }
}
const char* kWorkNames[] = {"ffma 262144000 fma",
                            "dfma 262144000 fma",
                            "hfma2 262144000 inst",
                            "add n=67108864 (805306368 bytes)",
                            "cublas tf32 2048^3 (1.718e10 flop)",
                            "cublas bf16 2048^3 (1.718e10 flop)",
                            "cublas fp32 simt 2048^3"};

// ---- test A: ranges around launches in the program ------------------------------------
void test_direct(CUcontext ctx, Buffers& B) {
  std::printf("== A: auto range, kernel replay, Start/Stop around each workload\n");
  RangeProfiler rp;
  if (!rp.init(ctx, wanted_metrics(), 64)) return;
  for (int w = 0; w < 7; ++w) {
    for (int rep = 0; rep < 2; ++rep) {
      CK(cudaDeviceSynchronize());
      const double t0 = now_ms();
      if (!rp.start()) return;
      run_workload(B, w);
      bool all = false;
      if (!rp.stop(&all)) return;
      const double t1 = now_ms();
      std::vector<std::pair<std::string, std::vector<double>>> ranges;
      size_t dropped = 0;
      if (!rp.decode(&ranges, &dropped)) return;
      const double t2 = now_ms();
      std::printf(
          " %s rep %d: start..stop %.2f ms, decode+eval %.2f ms, all passes %d, dropped %zu\n",
          kWorkNames[w], rep, t1 - t0, t2 - t1, (int)all, dropped);
      if (rep == 0) print_ranges(rp, ranges, kWorkNames[w]);
      if (!rp.reset_data()) return;
    }
  }
  // Several launches in one Start/Stop.
  CK(cudaDeviceSynchronize());
  if (rp.start()) {
    run_workload(B, 0);
    run_workload(B, 3);
    run_workload(B, 0);
    bool all = false;
    rp.stop(&all);
    std::vector<std::pair<std::string, std::vector<double>>> ranges;
    size_t dropped = 0;
    if (rp.decode(&ranges, &dropped)) {
      std::printf(" three launches in one start/stop: %zu ranges, all %d, dropped %zu\n",
                  ranges.size(), (int)all, dropped);
      for (auto& r : ranges) std::printf("    '%s'\n", r.first.c_str());
    }
    rp.reset_data();
  }
  // Without reset between two start/stops: do ranges accumulate?
  if (rp.start()) {
    run_workload(B, 0);
    bool all = false;
    rp.stop(&all);
    std::vector<std::pair<std::string, std::vector<double>>> r1;
    size_t d = 0;
    rp.decode(&r1, &d);
    rp.start();
    run_workload(B, 3);
    rp.stop(&all);
    std::vector<std::pair<std::string, std::vector<double>>> r2;
    rp.decode(&r2, &d);
    std::printf(" no reset between: first decode %zu ranges, second %zu ranges\n", r1.size(),
                r2.size());
    rp.reset_data();
  }
  // push/pop in auto range (reported elsewhere as needed).
  if (rp.start()) {
    const bool pushed = rp.push("r");
    run_workload(B, 0);
    if (pushed) rp.pop();
    bool all = false;
    rp.stop(&all);
    std::vector<std::pair<std::string, std::vector<double>>> ranges;
    size_t d = 0;
    rp.decode(&ranges, &d);
    std::printf(" push/pop in auto range: push ok %d, %zu ranges\n", (int)pushed, ranges.size());
    rp.reset_data();
  }
  rp.disable();
}

// ---- test C: from launch callbacks, with activity records on ---------------------------
struct CallbackState {
  RangeProfiler* rp = nullptr;
  std::atomic<int> enters{0};
  std::map<std::string, int> cb_seen;
  std::vector<uint32_t> measured_correlations;
  std::vector<std::pair<uint32_t, std::vector<double>>> results;
  thread_local static int depth;
  bool measuring = false;
  double measure_ms = 0;
  int measure_count = 0;
  double t0 = 0;
  int errors = 0;
};
thread_local int CallbackState::depth = 0;
CallbackState g_cb;
std::mutex g_kernels_mu;
std::map<uint32_t, int> g_kernel_records_by_corr;
std::vector<std::pair<uint32_t, std::pair<uint64_t, uint64_t>>> g_kernel_times;

void CUPTIAPI on_request(uint8_t** buffer, size_t* size, size_t* max) {
  *buffer = (uint8_t*)std::aligned_alloc(8, 8 << 20);
  *size = 8 << 20;
  *max = 0;
}
void CUPTIAPI on_complete(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* r = nullptr;
  std::lock_guard<std::mutex> lock(g_kernels_mu);
  while (cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) {
    if (r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
      auto* k = (CUpti_ActivityKernel10*)r;
      g_kernel_records_by_corr[k->correlationId]++;
      g_kernel_times.push_back(
          {(uint32_t)k->correlationId, {(uint64_t)k->start, (uint64_t)k->end}});
    }
  }
  std::free(buffer);
}

bool is_launch(CUpti_CallbackDomain d, CUpti_CallbackId id) {
  if (d == CUPTI_CB_DOMAIN_DRIVER_API)
    return id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel ||
           id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx ||
           id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz ||
           id == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz;
  return id == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 ||
         id == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060;
}

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                          const void* data) {
  const auto* cb = (const CUpti_CallbackData*)data;
  if (!is_launch(domain, cbid)) return;
  if (cb->callbackSite == CUPTI_API_ENTER) {
    g_cb.cb_seen[std::string(domain == CUPTI_CB_DOMAIN_DRIVER_API ? "driver:" : "runtime:") +
                 cb->functionName]++;
  }
  if (!g_cb.measuring) return;
  if (cb->callbackSite == CUPTI_API_ENTER) {
    if (CallbackState::depth++ == 0) {
      g_cb.t0 = now_ms();
      if (!g_cb.rp->start()) ++g_cb.errors;
    }
  } else {
    if (--CallbackState::depth == 0) {
      bool all = false;
      if (!g_cb.rp->stop(&all)) ++g_cb.errors;
      std::vector<std::pair<std::string, std::vector<double>>> ranges;
      size_t dropped = 0;
      if (g_cb.rp->decode(&ranges, &dropped) && !ranges.empty()) {
        g_cb.results.push_back({cb->correlationId, ranges[0].second});
      } else {
        g_cb.results.push_back({cb->correlationId, {}});
      }
      g_cb.rp->reset_data();
      g_cb.measure_ms += now_ms() - g_cb.t0;
      ++g_cb.measure_count;
    }
  }
}

void test_callbacks(CUcontext ctx, Buffers& B) {
  std::printf("== C: from launch callbacks, with CONCURRENT_KERNEL activity on\n");
  RangeProfiler rp;
  if (!rp.init(ctx, wanted_metrics(), 4)) return;
  g_cb.rp = &rp;
  if (cuptiActivityRegisterCallbacks(on_request, on_complete) != CUPTI_SUCCESS)
    std::printf("  register failed\n");
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  CUpti_SubscriberHandle sub;
  CUptiResult r = cuptiSubscribe(&sub, on_callback, nullptr);
  if (r != CUPTI_SUCCESS) {
    std::printf("  subscribe failed %s\n", err(r));
    return;
  }
  cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API);
  cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API);
  // Unmeasured baseline launches, then measured ones, then unmeasured again.
  for (int w : {0, 3, 4, 5}) run_workload(B, w);
  CK(cudaDeviceSynchronize());
  g_cb.measuring = true;
  for (int rep = 0; rep < 3; ++rep) {
    for (int w : {0, 1, 2, 3, 4, 5, 6}) run_workload(B, w);
  }
  CK(cudaDeviceSynchronize());
  g_cb.measuring = false;
  for (int w : {0, 3, 4, 5}) run_workload(B, w);
  CK(cudaDeviceSynchronize());
  cuptiActivityFlushAll(1);
  std::printf("  callbacks seen at enter:\n");
  for (auto& [k, v] : g_cb.cb_seen) std::printf("    %-40s %d\n", k.c_str(), v);
  std::printf("  measured launches %d (errors %d), %.2f ms per measured launch\n",
              g_cb.measure_count, g_cb.errors,
              g_cb.measure_count ? g_cb.measure_ms / g_cb.measure_count : 0);
  for (auto& [corr, v] : g_cb.results) {
    std::printf("   corr %u: kernel records %d:", corr,
                g_kernel_records_by_corr.count(corr) ? g_kernel_records_by_corr[corr] : 0);
    for (size_t i = 0; i < v.size(); ++i)
      if (v[i] != 0) std::printf(" %s=%.0f", rp.names[i].c_str(), v[i]);
    std::printf("\n");
  }
  size_t multi = 0;
  for (auto& [corr, n] : g_kernel_records_by_corr) multi += n > 1;
  std::printf("  kernel records %zu over %zu correlation ids; ids with >1 record: %zu\n",
              g_kernel_times.size(), g_kernel_records_by_corr.size(), multi);
  cuptiUnsubscribe(sub);
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  rp.disable();
}

// ---- test D: PM sampling ------------------------------------------------------------
bool test_pm(Buffers& B, const std::vector<std::string>& metrics, uint64_t interval_ns) {
  std::printf("== D: PM sampling, interval %llu ns\n", (unsigned long long)interval_ns);
  CUpti_PmSampling_Enable_Params en{CUpti_PmSampling_Enable_Params_STRUCT_SIZE};
  en.deviceIndex = 0;
  TRY(cuptiPmSamplingEnable(&en));
  CUpti_PmSampling_Object* pm = en.pPmSamplingObject;
  std::vector<uint8_t> avail;
  {
    CUpti_PmSampling_GetCounterAvailability_Params ca{
        CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE};
    ca.deviceIndex = 0;
    if (cuptiPmSamplingGetCounterAvailability(&ca) == CUPTI_SUCCESS) {
      avail.resize(ca.counterAvailabilityImageSize);
      ca.pCounterAvailabilityImage = avail.data();
      cuptiPmSamplingGetCounterAvailability(&ca);
    }
  }
  CUpti_Profiler_Host_Initialize_Params hi{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
  hi.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
  hi.pChipName = g_chip.c_str();
  hi.pCounterAvailabilityImage = avail.empty() ? nullptr : avail.data();
  TRY(cuptiProfilerHostInitialize(&hi));
  std::vector<std::string> names = known_metrics(hi.pHostObject, metrics);
  std::vector<const char*> cn;
  for (auto& n : names) cn.push_back(n.c_str());
  struct Cleanup {
    CUpti_PmSampling_Object* pm;
    CUpti_Profiler_Host_Object* host;
    ~Cleanup() {
      CUpti_PmSampling_Disable_Params dis{CUpti_PmSampling_Disable_Params_STRUCT_SIZE};
      dis.pPmSamplingObject = pm;
      cuptiPmSamplingDisable(&dis);
      CUpti_Profiler_Host_Deinitialize_Params hd{
          CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
      hd.pHostObject = host;
      cuptiProfilerHostDeinitialize(&hd);
    }
  } cleanup{pm, hi.pHostObject};
  {
    CUpti_Profiler_Host_ConfigAddMetrics_Params am{
        CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
    am.pHostObject = hi.pHostObject;
    am.ppMetricNames = cn.data();
    am.numMetrics = cn.size();
    TRY(cuptiProfilerHostConfigAddMetrics(&am));
  }
  CUpti_Profiler_Host_GetConfigImageSize_Params cs{
      CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
  cs.pHostObject = hi.pHostObject;
  TRY(cuptiProfilerHostGetConfigImageSize(&cs));
  std::vector<uint8_t> config(cs.configImageSize);
  CUpti_Profiler_Host_GetConfigImage_Params ci{
      CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
  ci.pHostObject = hi.pHostObject;
  ci.configImageSize = config.size();
  ci.pConfigImage = config.data();
  TRY(cuptiProfilerHostGetConfigImage(&ci));
  {
    CUpti_Profiler_Host_GetNumOfPasses_Params np{
        CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
    np.configImageSize = config.size();
    np.pConfigImage = config.data();
    if (cuptiProfilerHostGetNumOfPasses(&np) == CUPTI_SUCCESS)
      std::printf("  pm: %zu metrics, %zu passes\n", names.size(), np.numOfPasses);
  }
  CUpti_PmSampling_SetConfig_Params sc{CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE};
  sc.pPmSamplingObject = pm;
  sc.configSize = config.size();
  sc.pConfig = config.data();
  sc.hardwareBufferSize = 64u << 20;
  sc.samplingInterval = interval_ns;
  sc.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
  sc.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
  if (CUptiResult r = cuptiPmSamplingSetConfig(&sc); r != CUPTI_SUCCESS) {
    std::printf("  SetConfig time interval: %s; trying sysclk interval\n", err(r));
    sc.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_SYSCLK_INTERVAL;
    sc.samplingInterval = interval_ns;  // clocks
    TRY(cuptiPmSamplingSetConfig(&sc));
  }
  CUpti_PmSampling_GetCounterDataSize_Params ds{
      CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE};
  ds.pPmSamplingObject = pm;
  ds.pMetricNames = cn.data();
  ds.numMetrics = cn.size();
  ds.maxSamples = 200000;
  TRY(cuptiPmSamplingGetCounterDataSize(&ds));
  std::vector<uint8_t> data(ds.counterDataSize);
  CUpti_PmSampling_CounterDataImage_Initialize_Params di{
      CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE};
  di.pPmSamplingObject = pm;
  di.counterDataSize = data.size();
  di.pCounterData = data.data();
  TRY(cuptiPmSamplingCounterDataImageInitialize(&di));
  uint64_t ts0 = 0;
  cuptiGetTimestamp(&ts0);
  CUpti_PmSampling_Start_Params st{CUpti_PmSampling_Start_Params_STRUCT_SIZE};
  st.pPmSamplingObject = pm;
  TRY(cuptiPmSamplingStart(&st));
  // 10 ms of matmuls, then 10 ms of elementwise adds, twice.
  cudaEvent_t e[5];
  for (auto& x : e) cudaEventCreate(&x);
  cudaEventRecord(e[0]);
  for (int i = 0; i < 20; ++i) run_workload(B, 5);
  cudaEventRecord(e[1]);
  for (int i = 0; i < 10; ++i) run_workload(B, 3);
  cudaEventRecord(e[2]);
  for (int i = 0; i < 20; ++i) run_workload(B, 4);
  cudaEventRecord(e[3]);
  for (int i = 0; i < 10; ++i) run_workload(B, 3);
  cudaEventRecord(e[4]);
  CK(cudaDeviceSynchronize());
  float ms[4];
  for (int i = 0; i < 4; ++i) cudaEventElapsedTime(&ms[i], e[i], e[i + 1]);
  uint64_t ts1 = 0;
  cuptiGetTimestamp(&ts1);
  CUpti_PmSampling_Stop_Params sp{CUpti_PmSampling_Stop_Params_STRUCT_SIZE};
  sp.pPmSamplingObject = pm;
  TRY(cuptiPmSamplingStop(&sp));
  CUpti_PmSampling_DecodeData_Params dd{CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE};
  dd.pPmSamplingObject = pm;
  dd.pCounterDataImage = data.data();
  dd.counterDataImageSize = data.size();
  const double d0 = now_ms();
  TRY(cuptiPmSamplingDecodeData(&dd));
  const double d1 = now_ms();
  CUpti_PmSampling_GetCounterDataInfo_Params info{
      CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE};
  info.pCounterDataImage = data.data();
  info.counterDataImageSize = data.size();
  TRY(cuptiPmSamplingGetCounterDataInfo(&info));
  std::printf(
      "  phases (ms): bf16 mm %.2f, add %.2f, tf32 mm %.2f, add %.2f; decode %.2f ms, stop reason "
      "%d, overflow %d\n",
      ms[0], ms[1], ms[2], ms[3], d1 - d0, (int)dd.decodeStopReason, (int)dd.overflow);
  std::printf("  samples total %zu populated %zu completed %zu; cupti ts window %llu..%llu\n",
              info.numTotalSamples, info.numPopulatedSamples, info.numCompletedSamples,
              (unsigned long long)ts0, (unsigned long long)ts1);
  std::ofstream out(g_dir + "/pm_samples_" + std::to_string(interval_ns) + ".tsv");
  out << "start\tend";
  for (auto& n : names) out << "\t" << n;
  out << "\n";
  const size_t step = std::max<size_t>(1, info.numCompletedSamples / 40);
  for (size_t i = 0; i < info.numCompletedSamples; ++i) {
    CUpti_PmSampling_CounterData_GetSampleInfo_Params si{
        CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE};
    si.pPmSamplingObject = pm;
    si.pCounterDataImage = data.data();
    si.counterDataImageSize = data.size();
    si.sampleIndex = i;
    cuptiPmSamplingCounterDataGetSampleInfo(&si);
    std::vector<double> v(names.size());
    CUpti_Profiler_Host_EvaluateToGpuValues_Params ev{
        CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
    ev.pHostObject = hi.pHostObject;
    ev.pCounterDataImage = data.data();
    ev.counterDataImageSize = data.size();
    ev.rangeIndex = i;
    ev.ppMetricNames = cn.data();
    ev.numMetrics = cn.size();
    ev.pMetricValues = v.data();
    const CUptiResult r = cuptiProfilerHostEvaluateToGpuValues(&ev);
    out << si.startTimestamp << "\t" << si.endTimestamp;
    for (double x : v) out << "\t" << x;
    out << "\n";
    if (i % step == 0) {
      std::printf("   s%zu %llu..%llu%s", i, (unsigned long long)si.startTimestamp,
                  (unsigned long long)si.endTimestamp, r == CUPTI_SUCCESS ? "" : " (eval failed)");
      for (size_t j = 0; j < v.size(); ++j) std::printf(" %.3g", v[j]);
      std::printf("\n");
    }
  }
  return true;
}

bool setup(CUcontext* ctx) {
  CK(cudaFree(nullptr));
  cuCtxGetCurrent(ctx);
  CUpti_Profiler_Initialize_Params pi{CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
  TRY(cuptiProfilerInitialize(&pi));
  for (CUpti_Profiler_API api : {CUPTI_PROFILER_RANGE_PROFILING, CUPTI_PROFILER_PM_SAMPLING}) {
    CUpti_Profiler_DeviceSupported_Params ds{CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE};
    ds.cuDevice = 0;
    ds.api = api;
    const CUptiResult r = cuptiProfilerDeviceSupported(&ds);
    std::printf("  device supported (api %d): %s isSupported=%d arch=%d vGpu=%d cc=%d\n", (int)api,
                err(r), (int)ds.isSupported, (int)ds.architecture, (int)ds.vGpu,
                (int)ds.confidentialCompute);
  }
  CUpti_Device_GetChipName_Params cn{CUpti_Device_GetChipName_Params_STRUCT_SIZE};
  cn.deviceIndex = 0;
  TRY(cuptiDeviceGetChipName(&cn));
  g_chip = cn.pChipName;
  CUpti_Profiler_GetCounterAvailability_Params ca{
      CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
  ca.ctx = *ctx;
  TRY(cuptiProfilerGetCounterAvailability(&ca));
  g_avail.resize(ca.counterAvailabilityImageSize);
  ca.pCounterAvailabilityImage = g_avail.data();
  TRY(cuptiProfilerGetCounterAvailability(&ca));
  std::printf("  chip %s, counter availability image %zu bytes\n", g_chip.c_str(), g_avail.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) g_dir = argv[1];
  std::printf("== setup\n");
  CUcontext ctx = nullptr;
  if (!setup(&ctx)) return 1;
  list_metrics(CUPTI_PROFILER_TYPE_RANGE_PROFILER, "metrics_range.txt");
  list_metrics(CUPTI_PROFILER_TYPE_PM_SAMPLING, "metrics_pm.txt");
  Buffers B;
  alloc(B);
  // Unmeasured timing of each workload.
  for (int w = 0; w < 7; ++w) {
    run_workload(B, w);
    CK(cudaDeviceSynchronize());
    const double t0 = now_ms();
    run_workload(B, w);
    CK(cudaDeviceSynchronize());
    std::printf("  plain %s: %.3f ms\n", kWorkNames[w], now_ms() - t0);
  }
  test_direct(ctx, B);
  test_callbacks(ctx, B);
  const std::vector<std::vector<std::string>> pm_sets = {
      {"sm__cycles_active.avg"},
      {"dram__bytes_read.sum"},
      {"sm__cycles_active.avg.pct_of_peak_sustained_elapsed",
       "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
       "dram__bytes_read.sum.per_second", "dram__bytes_write.sum.per_second"},
      {"sm__cycles_active.avg", "sm__cycles_elapsed.avg", "sm__pipe_tensor_cycles_active.avg",
       "dram__bytes_read.sum", "dram__bytes_write.sum"},
  };
  for (const auto& set : pm_sets) test_pm(B, set, 20000);
  test_pm(B, pm_sets[2], 100000);
  std::printf("== done\n");
  return 0;
}
