// GPU metrics over time (--gpu-metrics) through CUPTI's PM Sampling API: each device
// that launches work samples SM active %, tensor pipe active % and DRAM read and write
// throughput at a fixed interval into the hardware buffer; a background thread decodes
// it, so the launching threads never wait on it. Sampling of a device starts when a
// context is created on it (CUPTI's resource callback, once per context, never on the
// launch path) and stops at write time. docs/COUNTERS.md.
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

  // Arms sampling at `interval_ns` (documented range 10-1000 us).
  void start(std::int64_t interval_ns);
  // CUPTI_CBID_RESOURCE_CONTEXT_CREATED: starts sampling the context's device.
  void on_context_created(CUcontext context);
  // Stops every device and decodes what is left.
  void stop();
  // Decodes what the devices hold so far, then copies the samples out.
  void snapshot(capture::GpuMetricsInfo* info, std::vector<capture::GpuMetricSample>* samples);
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
