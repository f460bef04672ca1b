#include "profiler_host.h"

#include <cupti.h>
#include <cupti_profiler_target.h>

namespace flopline::cupti {
namespace {

CUpti_Profiler_Host_Object* new_object(CUpti_ProfilerType type, const std::string& chip,
                                       const std::vector<std::uint8_t>& availability,
                                       CUptiResult* result) {
  auto p = cupti_params<CUpti_Profiler_Host_Initialize_Params>(
      CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  p.profilerType = type;
  p.pChipName = chip.c_str();
  p.pCounterAvailabilityImage = availability.empty() ? nullptr : availability.data();
  *result = cuptiProfilerHostInitialize(&p);
  return *result == CUPTI_SUCCESS ? p.pHostObject : nullptr;
}

void delete_object(CUpti_Profiler_Host_Object* object) {
  if (object == nullptr) return;
  auto p = cupti_params<CUpti_Profiler_Host_Deinitialize_Params>(
      CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
  p.pHostObject = object;
  cuptiProfilerHostDeinitialize(&p);
}

CUptiResult add_metrics(CUpti_Profiler_Host_Object* object, const std::vector<std::string>& names) {
  std::vector<const char*> c;
  c.reserve(names.size());
  for (const std::string& n : names) c.push_back(n.c_str());
  auto p = cupti_params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
      CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  p.pHostObject = object;
  p.ppMetricNames = c.data();
  p.numMetrics = c.size();
  return cuptiProfilerHostConfigAddMetrics(&p);
}

CUptiResult config_image(CUpti_Profiler_Host_Object* object, std::vector<std::uint8_t>* image) {
  auto s = cupti_params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
      CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  s.pHostObject = object;
  if (CUptiResult r = cuptiProfilerHostGetConfigImageSize(&s); r != CUPTI_SUCCESS) return r;
  image->assign(s.configImageSize, 0);
  auto g = cupti_params<CUpti_Profiler_Host_GetConfigImage_Params>(
      CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  g.pHostObject = object;
  g.configImageSize = image->size();
  g.pConfigImage = image->data();
  return cuptiProfilerHostGetConfigImage(&g);
}

}  // namespace

int initialize_profiler() {
  static const CUptiResult result = [] {
    auto p = cupti_params<CUpti_Profiler_Initialize_Params>(
        CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    return cuptiProfilerInitialize(&p);
  }();
  return result;
}

std::string cupti_result_text(int result) {
  const char* s = nullptr;
  if (cuptiGetResultString(static_cast<CUptiResult>(result), &s) != CUPTI_SUCCESS || s == nullptr) {
    return "CUPTI error " + std::to_string(result);
  }
  return s;
}

std::unique_ptr<ProfilerHost> ProfilerHost::create(CUpti_ProfilerType type, const std::string& chip,
                                                   std::vector<std::uint8_t> counter_availability,
                                                   std::string* error) {
  std::unique_ptr<ProfilerHost> h(new ProfilerHost);
  h->type_ = type;
  h->chip_ = chip;
  h->availability_ = std::move(counter_availability);
  CUptiResult r = CUPTI_SUCCESS;
  h->object_ = new_object(type, chip, h->availability_, &r);
  if (h->object_ == nullptr) {
    if (error) *error = "cuptiProfilerHostInitialize(" + chip + "): " + cupti_result_text(r);
    return nullptr;
  }
  return h;
}

ProfilerHost::~ProfilerHost() {
  delete_object(object_);
}

std::vector<std::string> ProfilerHost::base_metrics() const {
  std::vector<std::string> out;
  for (int type = 0; type < CUPTI_METRIC_TYPE__COUNT; ++type) {
    auto p = cupti_params<CUpti_Profiler_Host_GetBaseMetrics_Params>(
        CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE);
    p.pHostObject = object_;
    p.metricType = static_cast<CUpti_MetricType>(type);
    if (cuptiProfilerHostGetBaseMetrics(&p) != CUPTI_SUCCESS) continue;
    for (std::size_t i = 0; i < p.numMetrics; ++i) out.emplace_back(p.ppMetricNames[i]);
  }
  return out;
}

std::optional<std::size_t> ProfilerHost::passes(const std::vector<std::string>& names) const {
  // A scratch object: adding metrics to one cannot be undone.
  CUptiResult r = CUPTI_SUCCESS;
  CUpti_Profiler_Host_Object* scratch = new_object(type_, chip_, availability_, &r);
  if (scratch == nullptr) return std::nullopt;
  std::optional<std::size_t> out;
  std::vector<std::uint8_t> image;
  if (add_metrics(scratch, names) == CUPTI_SUCCESS &&
      config_image(scratch, &image) == CUPTI_SUCCESS) {
    auto p = cupti_params<CUpti_Profiler_Host_GetNumOfPasses_Params>(
        CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
    p.configImageSize = image.size();
    p.pConfigImage = image.data();
    if (cuptiProfilerHostGetNumOfPasses(&p) == CUPTI_SUCCESS) out = p.numOfPasses;
  }
  delete_object(scratch);
  return out;
}

bool ProfilerHost::configure(const std::vector<std::string>& names,
                             std::vector<std::uint8_t>* image, std::string* error) {
  if (CUptiResult r = add_metrics(object_, names); r != CUPTI_SUCCESS) {
    if (error) *error = "cuptiProfilerHostConfigAddMetrics: " + cupti_result_text(r);
    return false;
  }
  if (CUptiResult r = config_image(object_, image); r != CUPTI_SUCCESS) {
    if (error) *error = "cuptiProfilerHostGetConfigImage: " + cupti_result_text(r);
    return false;
  }
  names_ = names;
  return true;
}

bool ProfilerHost::evaluate(const std::vector<std::uint8_t>& counter_data, std::size_t index,
                            std::vector<double>* values, std::string* error) const {
  std::vector<const char*> c;
  c.reserve(names_.size());
  for (const std::string& n : names_) c.push_back(n.c_str());
  values->assign(names_.size(), -1);
  auto p = cupti_params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
      CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
  p.pHostObject = object_;
  p.pCounterDataImage = counter_data.data();
  p.counterDataImageSize = counter_data.size();
  p.rangeIndex = index;
  p.ppMetricNames = c.data();
  p.numMetrics = c.size();
  p.pMetricValues = values->data();
  const CUptiResult r = cuptiProfilerHostEvaluateToGpuValues(&p);
  if (r != CUPTI_SUCCESS && error)
    *error = "cuptiProfilerHostEvaluateToGpuValues: " + cupti_result_text(r);
  return r == CUPTI_SUCCESS;
}

}  // namespace flopline::cupti
