// The linked C++ API of flopline's capture (docs/CAPTURE.md has a complete example).
//
//   flopline::Session session;               // options: kinds, output path, memory cap
//   session.start();                         // before the first NVTX call and the work
//   { flopline::Range r("matmul 4096", 2.0 * 4096 * 4096 * 4096); launch(); }
//   session.stop();
//   session.write("trace.json");             // Chrome/Kineto JSON, .json.gz compresses
//
// One capture per process (CUPTI's activity API is process-wide): a second Session
// started while one runs fails, and so does a Session in a program already recorded by
// `flopline run` (the injection library owns the capture there and writes the trace).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

// The library is built with hidden symbols; these classes are its interface.
#define FLOPLINE_API __attribute__((visibility("default")))

namespace flopline {

struct SessionOptions {
  // Activity kinds, as FLOPLINE_KINDS takes them ("default", "all", "kernel,nvtx", ...).
  std::string kinds = "default";
  // Where write() with no argument writes; "%p" is replaced by the pid.
  std::string output_path = "flopline-%p.json";
  std::uint64_t max_memory_mb = 1024;  // beyond it records are dropped (and counted)
  // Hardware counters per kernel (docs/COUNTERS.md), as FLOPLINE_COUNTERS takes them:
  // "off", "on" (the first launch of each work key), "N", "all".
  std::string counters = "off";
  // Kernel names never measured (an ECMAScript regex searched in the name), beside the
  // communication kernels that never are (NCCL, NVSHMEM).
  std::string counters_exclude;
  // GPU metrics over time, as FLOPLINE_GPU_METRICS takes them: "off", "on" (100 us),
  // or an interval such as "20us". Not together with counters.
  std::string gpu_metrics = "off";
  // Capture windows (docs/CAPTURE.md, "Capture ranges"), as `flopline run`'s
  // --capture-range, --nvtx-capture, --capture-range-end, --delay and --duration take
  // them; "" = not given. With any of them, start() prepares everything and recording
  // waits for a window (the delay counts from start()); write() writes what the windows
  // held, and lists them.
  std::string capture_range;
  std::string nvtx_capture;
  std::string capture_range_end;
  std::string delay;
  std::string duration;
};

struct SessionWriteResult {
  bool ok = false;
  std::string path;
  std::string error;
  std::uint64_t events = 0;
  std::uint64_t kernels = 0;
  std::uint64_t dropped_records = 0;
};

class FLOPLINE_API Session {
 public:
  Session();
  explicit Session(SessionOptions options);
  ~Session();  // stops a running capture (does not write)
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Starts recording. Sets NVTX_INJECTION64_PATH to CUPTI when it is unset, so NVTX
  // ranges are recorded if no NVTX call was made before. False with error() set when
  // the kinds are invalid or CUPTI refuses.
  bool start();
  // Stops recording; what was recorded stays for write().
  void stop();
  bool running() const;
  // Writes everything recorded since start() (flushing first if still running).
  SessionWriteResult write();
  SessionWriteResult write(const std::string& path);
  const std::string& error() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// An NVTX range that is also a flopline operator: the kernels launched inside it on this
// thread are its GPU work; FLOPs and bytes (when >= 0) give its TFLOP/s and GB/s, and the
// precision ("fp32", "tf32", "bf16", ...; empty when unknown) picks the device peak that
// "% of peak" divides by; a plan (a word: letters, digits, "_") names the code path that
// ran and shows in the range's args. Pushed on construction, popped on destruction, on
// the calling thread.
class FLOPLINE_API Range {
 public:
  explicit Range(const std::string& name, double flops = -1, double bytes = -1,
                 const std::string& precision = {}, const std::string& plan = {});
  ~Range();
  Range(const Range&) = delete;
  Range& operator=(const Range&) = delete;
};

}  // namespace flopline
