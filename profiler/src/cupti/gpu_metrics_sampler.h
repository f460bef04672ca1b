// GPU metrics over time (--gpu-metrics) through CUPTI's PM Sampling API: each device
// that launches work samples SM active %, tensor pipe active % and DRAM read and write
// throughput at a fixed interval into the hardware buffer, which a background thread of
// flopline's decodes as the program runs (with the sampled context current on it), so the
// buffer never fills and the launching threads never wait on it. Sampling of a device
// starts after the first launch on it returns (a launch on the thread's last context
// costs one comparison). It stops in an exit handler registered at that first launch, so
// before the CUDA runtime's own teardown, or when the context is destroyed, whichever
// comes first. docs/COUNTERS.md.
#pragma once

#include <cupti.h>

#include <cstdint>
#include <string>
#include <vector>

#include "flopline/capture/records.h"

namespace flopline::cupti {

class GpuMetricsSampler {
 public:
  static GpuMetricsSampler& instance();

  // Arms sampling at `interval_ns` (capture_config.h: kMinGpuMetricsIntervalNs to
  // kMaxGpuMetricsIntervalNs).
  void start(std::int64_t interval_ns);
  // Every launch callback of the subscriber goes here; after the first launch on a
  // device returns, sampling of that device starts.
  void on_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                   const CUpti_CallbackData* data);
  // A context is being destroyed (cudaDeviceReset, the runtime's teardown at exit): the
  // device sampled on it is stopped and decoded now, on the destroying thread, while the
  // context still exists.
  void on_context_destroying(CUcontext context);
  // Stops every device and decodes what is left, never waiting on CUPTI past a limit.
  void stop();
  // Copies the samples out (decoding what the devices hold so far when decoding while
  // running).
  void snapshot(capture::GpuMetricsInfo* info, std::vector<capture::GpuMetricSample>* samples);
  // The same, moving the samples out: a streaming capture's append takes those decoded
  // since the last take().
  void take(capture::GpuMetricsInfo* info, std::vector<capture::GpuMetricSample>* samples);
  void reset_after_fork();

  GpuMetricsSampler(const GpuMetricsSampler&) = delete;
  GpuMetricsSampler& operator=(const GpuMetricsSampler&) = delete;

  struct Impl;

 private:
  GpuMetricsSampler();
  ~GpuMetricsSampler() = delete;  // used at exit
  Impl* impl_;
};

}  // namespace flopline::cupti
