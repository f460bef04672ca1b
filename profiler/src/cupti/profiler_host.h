// CUPTI's profiler host API for one chip (cupti_profiler_host.h): the chip's metric
// list, the config image of a set of metrics and how many passes it needs, and counter
// data turned into metric values. Used by the range profiler (counter_profiler.h) and
// PM sampling (gpu_metrics_sampler.h).
#pragma once

#include <cupti_profiler_host.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace flopline::cupti {

class ProfilerHost {
 public:
  // Nothing, with `error` set, when CUPTI does not know the chip.
  static std::unique_ptr<ProfilerHost> create(CUpti_ProfilerType type, const std::string& chip,
                                              std::vector<std::uint8_t> counter_availability,
                                              std::string* error);
  ~ProfilerHost();
  ProfilerHost(const ProfilerHost&) = delete;
  ProfilerHost& operator=(const ProfilerHost&) = delete;

  // Base metric names (no rollup) of every metric type.
  std::vector<std::string> base_metrics() const;
  // Passes `names` would need; nothing when the host refuses them.
  std::optional<std::size_t> passes(const std::vector<std::string>& names) const;
  // Adds `names` to this host object and returns the config image. Call once.
  bool configure(const std::vector<std::string>& names, std::vector<std::uint8_t>* image,
                 std::string* error);
  // The configured metrics' values for range (or sample) `index` of `counter_data`.
  bool evaluate(const std::vector<std::uint8_t>& counter_data, std::size_t index,
                std::vector<double>* values, std::string* error) const;
  const std::vector<std::string>& configured() const { return names_; }

 private:
  ProfilerHost() = default;
  CUpti_ProfilerType type_ = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  std::string chip_;
  std::vector<std::uint8_t> availability_;
  CUpti_Profiler_Host_Object* object_ = nullptr;
  std::vector<std::string> names_;
};

// A CUPTI parameter struct with every field zero and its size set.
template <class T>
T cupti_params(std::size_t struct_size) {
  T p{};
  p.structSize = struct_size;
  return p;
}

// cuptiProfilerInitialize, once per process (later calls return the first result). It
// needs a context: CUPTI refuses it inside cuInit.
int initialize_profiler();

// CUPTI's text for a result code.
std::string cupti_result_text(int result);

}  // namespace flopline::cupti
