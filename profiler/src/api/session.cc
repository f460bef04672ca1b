#include "flopline/session.h"

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <optional>

#include "../cupti/cupti_source.h"
#include "../cupti/trace_output.h"
#include "flopline/capture/capture_config.h"
#include "flopline/capture/launch_work.h"

namespace flopline {
namespace {

// CUPTI's activity API is one per process: one Session at a time.
std::atomic<bool> g_session_active{false};

// True when libflopline_inject.so captures this process already (`flopline run`).
bool injection_active() {
  using Fn = int (*)();
  const auto fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "flopline_injection_active"));
  return fn != nullptr && fn() != 0;
}

}  // namespace

struct Session::Impl {
  SessionOptions options;
  bool running = false;
  bool owns_capture = false;
  std::string error;
};

Session::Session() : Session(SessionOptions{}) {}

Session::Session(SessionOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
}

Session::~Session() {
  if (impl_->running) stop();
  if (impl_->owns_capture) g_session_active = false;
}

bool Session::start() {
  Impl& s = *impl_;
  if (s.running) return true;
  std::string error;
  const auto kinds = capture::parse_activity_kinds(s.options.kinds, &error);
  if (!kinds) {
    s.error = error;
    return false;
  }
  if (injection_active()) {
    s.error = "this process is already recorded by flopline run; its trace is written at exit";
    return false;
  }
  if (!s.owns_capture) {
    bool expected = false;
    if (!g_session_active.compare_exchange_strong(expected, true)) {
      s.error = "another flopline::Session is active in this process";
      return false;
    }
    s.owns_capture = true;
    cupti::CuptiSource::instance().clear();
  }
  // NVTX reads this at its first call; CUPTI receives NVTX calls only through it.
  const std::string cupti = cupti::CuptiSource::cupti_library_path();
  if (!cupti.empty()) setenv("NVTX_INJECTION64_PATH", cupti.c_str(), 0);
  cupti::SourceOptions o;
  o.kinds = *kinds;
  o.max_memory_bytes = s.options.max_memory_mb << 20;
  const auto counters = capture::parse_counters(s.options.counters, &error);
  if (!counters) {
    s.error = "counters: " + error;
    return false;
  }
  const auto gpu_metrics = capture::parse_gpu_metrics(s.options.gpu_metrics, &error);
  if (!gpu_metrics) {
    s.error = "gpu_metrics: " + error;
    return false;
  }
  if (counters->on && gpu_metrics->on) {
    s.error =
        "counters and gpu_metrics cannot be on together (both use the GPU's performance monitors)";
    return false;
  }
  if (counters->on) o.counters = counters->per_signature;
  if (!capture::valid_exclude_pattern(s.options.counters_exclude, &error)) {
    s.error = "counters_exclude: " + error;
    return false;
  }
  o.counters_exclude = s.options.counters_exclude;
  if (gpu_metrics->on) o.gpu_metrics_interval_ns = gpu_metrics->interval_ns;
  const capture::CaptureWindowOptionNames names = {"capture_range", "nvtx_capture",
                                                   "capture_range_end", "delay", "duration"};
  const auto windows = capture::parse_capture_window_setting(
      {s.options.capture_range, s.options.nvtx_capture, s.options.capture_range_end,
       s.options.delay, s.options.duration},
      names, &error);
  if (!windows) {
    s.error = error;
    return false;
  }
  o.windows = *windows;
  if (!cupti::CuptiSource::instance().start(o, &s.error)) return false;
  s.running = true;
  return true;
}

void Session::stop() {
  if (!impl_->running) return;
  cupti::CuptiSource::instance().stop();
  impl_->running = false;
}

bool Session::running() const {
  return impl_->running;
}

const std::string& Session::error() const {
  return impl_->error;
}

SessionWriteResult Session::write() {
  const std::string path =
      capture::expand_output_template(impl_->options.output_path, getpid(), std::nullopt);
  return write(path);
}

SessionWriteResult Session::write(const std::string& path) {
  SessionWriteResult result;
  result.path = path;
  if (!impl_->owns_capture) {
    result.error = impl_->error.empty() ? "the session was never started" : impl_->error;
    return result;
  }
  cupti::CuptiSource& source = cupti::CuptiSource::instance();
  source.flush();
  const cupti::CaptureWriteResult w =
      cupti::write_capture(source.snapshot(), path, {{"kinds", impl_->options.kinds}});
  result.ok = w.ok;
  result.error = w.error;
  result.events = w.events;
  result.kernels = w.kernels;
  result.dropped_records = w.dropped_records;
  return result;
}

}  // namespace flopline
