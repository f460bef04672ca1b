// CuptiSource: the one place in flopline that calls CUPTI (cupti_source.cc). It enables
// the activity kinds, hands CUPTI 8 MB buffers from a pool, queues each completed
// buffer from CUPTI's callback and decodes it on its own thread into the plain records
// of flopline/capture/records.h, which everything after it (decode(), attribution,
// the writer) works on.
//
// CUPTI's activity API is process-global (one set of buffer callbacks, one subscriber),
// so there is one CuptiSource per process: instance(). It is never destroyed, so it
// outlives every exit path (atexit handlers, static destructors, signal handlers).
//
// Memory: buffers handed out plus the decoded records are held under a cap. When a new
// buffer would exceed it CUPTI is given none and drops records itself; when the decoded
// records exceed it, completed buffers are counted and thrown away. Both counts, with
// CUPTI's own dropped-record count, make RecordBatch::dropped_records.
#pragma once

#include <cupti.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "flopline/capture/capture_config.h"
#include "flopline/capture/records.h"

namespace flopline::cupti {

struct SourceOptions {
  std::uint32_t kinds = capture::kDefaultKinds;  // capture::ActivityKindBit bits
  std::size_t buffer_bytes = 8u << 20;
  std::uint64_t max_memory_bytes = 1024ull << 20;
  // Hardware counters per kernel (counter_profiler.h): launches measured per signature,
  // 0 = every launch; nothing = off.
  std::optional<std::uint32_t> counters;
  // Kernel names (an ECMAScript regex) never measured, beside communication kernels.
  std::string counters_exclude;
  // GPU metrics over time (gpu_metrics_sampler.h): the sampling interval; nothing = off.
  std::optional<std::int64_t> gpu_metrics_interval_ns;
  // Capture windows (capture_window_control.h): recording only inside them when gated();
  // the delay counts from `window_origin_ns` (capture clock), or from start().
  capture::CaptureWindowSetting windows;
  std::optional<std::int64_t> window_origin_ns;
};

// The source options of a parsed capture configuration, the same for the injection
// library and flopline::Session (window_origin_ns is the caller's: the run's start).
SourceOptions source_options(const capture::CaptureEnv& config);

struct SourceStats {
  std::uint64_t buffers_completed = 0;
  std::uint64_t records = 0;              // decoded and kept
  std::uint64_t cupti_dropped = 0;        // cuptiActivityGetNumDroppedRecords
  std::uint64_t cap_dropped_records = 0;  // in buffers thrown away over the cap
  std::uint64_t buffers_refused = 0;      // requests answered with no buffer (cap)
  std::uint64_t unfinished_records = 0;   // delivered without times by a forced flush
  std::uint64_t memory_bytes = 0;         // buffers allocated + decoded records (estimate)
  std::uint64_t peak_memory_bytes = 0;
  std::uint64_t dropped() const { return cupti_dropped + cap_dropped_records; }
};

// The subscriber's callback for runtime and driver calls: what every recorded call runs
// on the program's own thread, at its entry and its exit. Public so that
// bench_call_callback can time it without a GPU.
void CUPTIAPI on_api_callback(void* user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                              const void* data);

class CuptiSource {
 public:
  static CuptiSource& instance();

  // Registers the buffer callbacks and the resource/runtime callbacks, enables the
  // kinds. False with `error` set when CUPTI refuses (another profiler holds it, ...).
  // Calling it again while running changes nothing and returns true.
  bool start(const SourceOptions& options, std::string* error);
  bool running() const;
  // Every record CUPTI holds so far is decoded into the batch when this returns.
  void flush();
  // The same for records of finished work only, while the program runs (buffers of
  // work still in flight stay with CUPTI).
  void flush_completed();
  // Disables the kinds and flushes. The records stay until clear(). A capture window
  // still open closes here ("program end").
  void stop();
  // Recording on or off while running, for capture windows: the activity kinds and the
  // recorded calls' callbacks are enabled or disabled; the subscriber, the decoder and
  // the records stay. Does nothing while start() or stop() runs.
  void set_recording(bool on);
  // A copy of everything decoded so far, with the devices seen (their properties read
  // from the driver), thread names, the process name, the dropped-record total, and the
  // counters and GPU metrics collected so far.
  capture::RecordBatch snapshot();
  // What a streaming capture's append takes (streaming_decoder.h): the records decoded
  // since the last take(), moved out and no longer held here (nor counted under the
  // memory cap), with the counter records, GPU metric samples and NCCL calls made since,
  // and the run's metadata as snapshot() gives it. Replayed kernels stay unplaced (the
  // streaming decoder places them). `last`: the end of the run, which also takes the
  // counter measurements still in progress, as snapshot() shows them.
  capture::RecordBatch take(bool last);
  void clear();
  SourceStats stats() const;

  // Called on the thread that calls cudaDeviceReset, before the reset runs (the trace
  // should be written then: the reset ends the context's activity).
  void set_device_reset_hook(std::function<void()> hook);

  // In a child created by fork(): forget the parent's state. CUPTI in the child is not
  // usable until CUDA starts there afresh (it calls InitializeInjection again).
  void reset_after_fork();

  // The path of the libcupti this process uses ("" when unknown), for
  // NVTX_INJECTION64_PATH.
  static std::string cupti_library_path();
  // Hands NVTX's injection call on to the libcupti this process uses, so that
  // NVTX_INJECTION64_PATH may name the flopline library itself (which the process then
  // shares with CUDA's injection) and CUPTI receives the program's NVTX calls. Returns
  // the libcupti entry's result, 0 when it cannot be found.
  static int forward_nvtx_injection(void* get_export_table);

  CuptiSource(const CuptiSource&) = delete;
  CuptiSource& operator=(const CuptiSource&) = delete;

  struct Impl;  // opaque; named here so CUPTI's plain-function callbacks can reach it

 private:
  CuptiSource();
  ~CuptiSource() = delete;  // see the file comment
  Impl* impl_;
};

}  // namespace flopline::cupti
