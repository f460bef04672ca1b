// Per-kernel hardware counters through CUPTI's Range Profiling API (docs/COUNTERS.md):
// auto range, kernel replay, one range per measured launch. On the launching thread,
// from the launch callbacks of CuptiSource's subscriber:
//
//   driver launch, enter  the first N launches of each work key (WorkSampler,
//                         launch_work.h) start the context's range profiler; any other
//                         launch takes a shared lock, so no launch of another thread
//                         lands in a measured range, and notes the measurement whose
//                         values it takes; communication kernels are never measured
//   driver launch, exit   stop, decode, evaluate the plan's metrics into a
//                         CounterRecord with the launch's correlation id
//
// The range profiler of a context is set up at its first measured launch: the chip's
// metric list gives the plan (capture/counters.h), the config image, the counter data.
// Where counters cannot be read (no permission, an unsupported device, a virtual GPU
// that hides them) the first failure turns counting off for the process and says why
// once; the trace is written without counters.
#pragma once

#include <cupti.h>

#include <cstdint>
#include <string>
#include <vector>

#include "flopline/capture/records.h"

namespace flopline::cupti {

class CounterProfiler {
 public:
  static CounterProfiler& instance();

  // Arms counting. CUPTI's profiler is set up at the first measured launch (it needs a
  // context); what fails there turns counting off and is said once.
  // `per_signature` launches of each work key are measured (0: every launch); kernels
  // whose names match `exclude` (a regex; "" for none) or are communication never are.
  bool start(std::uint32_t per_signature, const std::string& exclude, std::string* why);
  bool active() const;
  // Every launch callback of the subscriber goes here (it returns at once for others).
  void on_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                   const CUpti_CallbackData* data);
  // The callbacks counting needs, on `subscriber`.
  static void enable_callbacks(CUpti_SubscriberHandle subscriber);
  // A copy of what was counted so far.
  void snapshot(capture::CounterInfo* info, std::vector<capture::CounterRecord>* records,
                std::vector<capture::InferredLaunch>* inferred) const;
  // Moves out the records and inferred launches made since the last take(), with the
  // info as it is now: what a streaming capture's append hands on (the records are then
  // the streaming decoder's to keep or release). `last` (the run's end) adds what
  // snapshot() adds: measurements in parts that never finished, as incomplete records.
  void take(capture::CounterInfo* info, std::vector<capture::CounterRecord>* records,
            std::vector<capture::InferredLaunch>* inferred, bool last);
  // Drops the records (after a fork, in the child).
  void reset_after_fork();

  CounterProfiler(const CounterProfiler&) = delete;
  CounterProfiler& operator=(const CounterProfiler&) = delete;

  struct Impl;

 private:
  CounterProfiler();
  ~CounterProfiler() = delete;  // used at exit and in signal handlers
  Impl* impl_;
};

}  // namespace flopline::cupti
