// Runtime and driver calls recorded through CUPTI callbacks (capture::kKindCalls): on
// the calling thread, the callback only takes two timestamps and appends a small record
// to that thread's buffer; full buffers go to a sink that queues them for the decoder
// thread. Only the functions is_recorded_call() names get callbacks, so every other API
// call runs uninstrumented (activity RUNTIME/DRIVER records instrument all of them).
#pragma once

#include <cupti.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace flopline::cupti {

struct CallRecord {
  std::uint64_t start = 0;  // CUPTI timestamps (the clock of the activity records)
  std::uint64_t end = 0;
  std::uint32_t cbid = 0;
  std::uint32_t correlation_id = 0;  // the id the call's kernels and copies carry
  std::uint32_t thread_id = 0;       // OS thread id
  std::int32_t return_value = 0;     // cudaError_t or CUresult
  bool driver = false;               // driver (cu*) or runtime (cuda*) domain
};
using CallChunk = std::vector<CallRecord>;

// Receives full chunks on the recording thread (it must only queue them) and, from
// drain(), the partial ones.
using CallSink = std::function<void(CallChunk&&)>;

// Sets where chunks go (once, before the first enable).
void set_call_sink(CallSink sink);

// Turns the callbacks of the recorded functions on or off for `subscriber`, for the
// runtime and/or the driver domain. Returns how many functions were switched.
int enable_call_callbacks(CUpti_SubscriberHandle subscriber, bool runtime, bool driver, bool on);

// Whether on_call_callback records (false after a fork into a child, and while stopped).
void set_calls_recording(bool on);

// The subscriber's handler for the recorded functions. A driver call made inside a
// recorded runtime call on the same thread (cudaLaunchKernel -> cuLaunchKernel) is not
// recorded again: it carries the runtime call's correlation id.
void on_call_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                      const CUpti_CallbackData* data);

// Hands every thread's buffered records to the sink (at flush and stop).
void drain_calls();

}  // namespace flopline::cupti
