// GPU metrics over time (--gpu-metrics) through CUPTI's PM Sampling API: each device
// that launches work samples SM active %, tensor pipe active % and DRAM read and write
// throughput at a fixed interval into the hardware buffer, decoded once sampling has
// stopped (or, with FLOPLINE_GPU_METRICS_DECODE=running, by a background thread as the
// program runs), so the launching threads never wait on it. Sampling of a device starts
// after the first launch on it returns (a launch on the thread's last context costs one
// comparison) and stops at write time. docs/COUNTERS.md.
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
  // Stops every device and decodes what is left, never waiting on CUPTI past a limit.
  void stop();
  // Copies the samples out (decoding what the devices hold so far when decoding while
  // running).
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
