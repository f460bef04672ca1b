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
  // The options through the capture configuration every front end shares
  // (capture_config.h): the same parsing and rules as flopline run and the library.
  using capture::CaptureOptionId;
  const SessionOptions& so = s.options;
  capture::CaptureOptionValues values;
  values[CaptureOptionId::kOutput] = so.output_path;
  values[CaptureOptionId::kKinds] = so.kinds;
  values[CaptureOptionId::kMaxMemory] = std::to_string(so.max_memory_mb);
  values[CaptureOptionId::kCounters] = so.counters;
  values[CaptureOptionId::kCountersExclude] = so.counters_exclude;
  values[CaptureOptionId::kGpuMetrics] = so.gpu_metrics;
  values[CaptureOptionId::kCaptureRange] = so.capture_range;
  values[CaptureOptionId::kNvtxCapture] = so.nvtx_capture;
  values[CaptureOptionId::kCaptureRangeEnd] = so.capture_range_end;
  values[CaptureOptionId::kDelay] = so.delay;
  values[CaptureOptionId::kDuration] = so.duration;
  std::vector<capture::CaptureProblem> problems;
  const capture::CaptureEnv c =
      capture::parse_capture_options(values, capture::CaptureFrontEnd::kSession, &problems);
  if (!problems.empty()) {
    s.error = problems.front().message;
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
  if (!cupti::CuptiSource::instance().start(cupti::source_options(c), &s.error)) return false;
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
