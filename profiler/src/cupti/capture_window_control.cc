#include "capture_window_control.h"

#include <generated_nvtx_meta.h>
#include <nvtx3/nvToolsExt.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

namespace flopline::cupti {
namespace {

using capture::TimeNs;

// True when nothing gates recording, so the counter profiler measures everything.
std::atomic<bool> g_window_open{true};

std::mutex g_listener_mu;
std::shared_ptr<CaptureWindowListener> g_listener;

std::uint32_t this_thread_id() {
  thread_local const auto tid = static_cast<std::uint32_t>(syscall(SYS_gettid));
  return tid;
}

TimeNs now_ns() {
  std::uint64_t t = 0;
  cuptiGetTimestamp(&t);
  return static_cast<TimeNs>(t);
}

// NVTX's wide strings are UTF-32 here (Linux's wchar_t).
std::string utf8(const wchar_t* w) {
  std::string s;
  if (w == nullptr) return s;
  for (; *w != 0; ++w) {
    auto c = static_cast<std::uint32_t>(*w);
    if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) c = 0xFFFD;
    if (c < 0x80) {
      s += static_cast<char>(c);
    } else if (c < 0x800) {
      s += static_cast<char>(0xC0 | (c >> 6));
      s += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      s += static_cast<char>(0xE0 | (c >> 12));
      s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      s += static_cast<char>(0xF0 | (c >> 18));
      s += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  return s;
}

// The NVTX calls an nvtx capture range watches: ranges, and the domains and registered
// strings that name them.
constexpr CUpti_CallbackId kNvtxCbids[] = {
    CUPTI_CBID_NVTX_nvtxRangePushA,
    CUPTI_CBID_NVTX_nvtxRangePushW,
    CUPTI_CBID_NVTX_nvtxRangePushEx,
    CUPTI_CBID_NVTX_nvtxRangePop,
    CUPTI_CBID_NVTX_nvtxDomainRangePushEx,
    CUPTI_CBID_NVTX_nvtxDomainRangePop,
    CUPTI_CBID_NVTX_nvtxRangeStartA,
    CUPTI_CBID_NVTX_nvtxRangeStartW,
    CUPTI_CBID_NVTX_nvtxRangeStartEx,
    CUPTI_CBID_NVTX_nvtxRangeEnd,
    CUPTI_CBID_NVTX_nvtxDomainRangeStartEx,
    CUPTI_CBID_NVTX_nvtxDomainRangeEnd,
    CUPTI_CBID_NVTX_nvtxDomainCreateA,
    CUPTI_CBID_NVTX_nvtxDomainCreateW,
    CUPTI_CBID_NVTX_nvtxDomainRegisterStringA,
    CUPTI_CBID_NVTX_nvtxDomainRegisterStringW,
};

// nvtxDomainCreateW's parameters (generated_nvtx_meta.h declares none).
struct DomainCreateWParams {
  const wchar_t* name;
};

// Inside a cudaProfilerStart/Stop on this thread: the cuProfilerStart/Stop the runtime
// makes inside it is the same call, not a second one.
thread_local int t_runtime_profiler_depth = 0;

}  // namespace

bool capture_window_open() {
  return g_window_open.load(std::memory_order_relaxed);
}

void set_capture_window_listener(CaptureWindowListener listener) {
  std::lock_guard<std::mutex> lock(g_listener_mu);
  g_listener = listener ? std::make_shared<CaptureWindowListener>(std::move(listener)) : nullptr;
}

struct CaptureWindowControl::Impl {
  mutable std::mutex mu;  // the machine, the name maps, desired_open, finished
  std::optional<capture::CaptureWindow> machine;
  std::string description;
  std::function<void(bool)> recording;
  bool desired_open = true;  // recording is on when start() is called
  bool finished = false;
  std::atomic<bool> active{false};
  std::atomic<bool> watching_nvtx{false};
  std::atomic<bool> watching_profiler{false};
  std::unordered_map<std::uintptr_t, std::string> domain_names;  // nvtxDomainHandle_t
  std::unordered_map<std::uintptr_t, std::string> registered;    // nvtxStringHandle_t
  std::condition_variable wake;                                  // the timer, on mu
  // A capture without a trigger, delay or duration has no machine until a command comes
  // (control_watcher.cc): what start() was given, kept for then.
  std::optional<capture::CaptureWindowSetting> idle_setting;
  TimeNs idle_origin = 0, idle_started = 0;

  // One thread at a time switches recording; a thread that finds another doing it
  // leaves its change to that one (never waits): CUPTI may call back into the program's
  // threads while it enables or disables, and none of them must block on us.
  std::mutex apply_mu;
  bool applied_open = true;  // under apply_mu
  std::atomic<bool> applied_mirror{true};

  // After an event, under mu.
  void decided(const capture::CaptureWindow::Changes& changes) {
    desired_open = machine->is_open();
    if (!machine->wants_nvtx()) watching_nvtx.store(false, std::memory_order_relaxed);
    if (machine->done()) watching_profiler.store(false, std::memory_order_relaxed);
    if (!changes.empty()) wake.notify_all();  // the next deadline may have changed
  }
  void apply();
  void timer_loop();
  std::optional<std::string_view> domain_name(const void* handle) const {
    if (handle == nullptr) return std::string_view();  // NVTX's default domain
    const auto it = domain_names.find(reinterpret_cast<std::uintptr_t>(handle));
    if (it == domain_names.end()) return std::nullopt;
    return std::string_view(it->second);
  }
  std::string message(const nvtxEventAttributes_t* a) const {
    if (a == nullptr) return {};
    switch (a->messageType) {
      case NVTX_MESSAGE_TYPE_ASCII:
        return a->message.ascii != nullptr ? a->message.ascii : "";
      case NVTX_MESSAGE_TYPE_UNICODE:
        return utf8(a->message.unicode);
      case NVTX_MESSAGE_TYPE_REGISTERED: {
        const auto it = registered.find(reinterpret_cast<std::uintptr_t>(a->message.registered));
        return it == registered.end() ? std::string() : it->second;
      }
      default:
        return {};
    }
  }
};

void CaptureWindowControl::Impl::apply() {
  for (;;) {
    std::unique_lock<std::mutex> a(apply_mu, std::try_to_lock);
    if (!a.owns_lock()) return;  // the thread applying sees this change when it looks again
    for (;;) {
      bool want = false;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (finished) return;
        want = desired_open;
      }
      if (want == applied_open) break;
      recording(want);
      applied_open = want;
      applied_mirror.store(want);
      g_window_open.store(want, std::memory_order_relaxed);
      std::shared_ptr<CaptureWindowListener> listener;
      {
        std::lock_guard<std::mutex> lock(g_listener_mu);
        listener = g_listener;
      }
      if (listener) (*listener)(want);
    }
    a.unlock();
    // A change decided after our last look, while we held apply_mu, was left to us.
    std::lock_guard<std::mutex> lock(mu);
    if (finished || desired_open == applied_mirror.load()) return;
  }
}

void CaptureWindowControl::Impl::timer_loop() {
  std::unique_lock<std::mutex> lock(mu);
  while (!finished) {
    const std::optional<TimeNs> deadline = machine->next_deadline();
    if (!deadline) {
      wake.wait(lock);  // an event may bring one (a window opened with a duration)
      continue;
    }
    const TimeNs now = now_ns();
    if (now < *deadline) {
      wake.wait_for(lock, std::chrono::nanoseconds(*deadline - now));
      continue;
    }
    decided(machine->tick(now));
    lock.unlock();
    apply();
    lock.lock();
  }
}

CaptureWindowControl::CaptureWindowControl() : impl_(new Impl) {}

CaptureWindowControl& CaptureWindowControl::instance() {
  static CaptureWindowControl* c = new CaptureWindowControl;  // never destroyed
  return *c;
}

void CaptureWindowControl::start(const capture::CaptureWindowSetting& setting,
                                 capture::TimeNs origin_ns, CUpti_SubscriberHandle subscriber,
                                 std::function<void(bool)> recording) {
  bool used = false;
  {
    std::lock_guard<std::mutex> lock(impl().mu);
    if (impl().active && !impl().finished) return;  // already deciding for this capture
    used = impl().active || impl().finished || impl().idle_setting;
  }
  // A new capture (a second flopline::Session) starts from nothing; the old state stays
  // for a timer thread that may still look at it.
  if (used) impl_.store(new Impl, std::memory_order_release);
  g_window_open = true;
  if (!setting.gated()) {
    Impl& idle = impl();
    std::lock_guard<std::mutex> lock(idle.mu);
    idle.idle_setting = setting;
    idle.idle_origin = origin_ns;
    idle.idle_started = now_ns();
    idle.recording = std::move(recording);
    return;
  }
  Impl& s = impl();
  {
    std::lock_guard<std::mutex> lock(s.mu);
    s.machine.emplace(setting, origin_ns);
    s.description = capture::describe(setting);
    s.recording = std::move(recording);
    s.decided(s.machine->tick(now_ns()));
  }
  if (setting.range == capture::CaptureRangeKind::kCudaProfilerApi && subscriber != nullptr) {
    // Both: a program may call the driver's directly; the runtime's calls the driver's.
    cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                        CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000);
    cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API,
                        CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000);
    cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                        CUPTI_DRIVER_TRACE_CBID_cuProfilerStart);
    cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API,
                        CUPTI_DRIVER_TRACE_CBID_cuProfilerStop);
    s.watching_profiler = true;
  }
  if (setting.range == capture::CaptureRangeKind::kNvtx && subscriber != nullptr) {
    for (CUpti_CallbackId cbid : kNvtxCbids) {
      cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_NVTX, cbid);
    }
    s.watching_nvtx = true;
  }
  s.active = true;
  s.apply();
  if (setting.delay_ns > 0 || setting.duration_ns > 0) {
    // Detached, as the periodic writer: the process may end while it waits; finish()
    // stops it from switching anything.
    std::thread([&s] { s.timer_loop(); }).detach();
  }
}

bool CaptureWindowControl::active() const {
  return impl().active.load(std::memory_order_relaxed);
}

void CaptureWindowControl::on_api_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                           const CUpti_CallbackData* data) {
  Impl& s = impl();
  if (!s.watching_profiler.load(std::memory_order_relaxed) || data == nullptr) return;
  bool start = false;
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API) {
    if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000) {
      start = true;
    } else if (cbid != CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000) {
      return;
    }
    if (data->callbackSite == CUPTI_API_EXIT) {
      if (t_runtime_profiler_depth > 0) --t_runtime_profiler_depth;
      return;
    }
    ++t_runtime_profiler_depth;
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    if (cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart) {
      start = true;
    } else if (cbid != CUPTI_DRIVER_TRACE_CBID_cuProfilerStop) {
      return;
    }
    if (data->callbackSite != CUPTI_API_ENTER || t_runtime_profiler_depth > 0) return;
  } else {
    return;
  }
  // At the call's entry: a start opens the window before it returns to the program, a
  // stop closes it before anything after it.
  const char* call = domain == CUPTI_CB_DOMAIN_RUNTIME_API
                         ? (start ? "cudaProfilerStart" : "cudaProfilerStop")
                         : (start ? "cuProfilerStart" : "cuProfilerStop");
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.finished) return;
    const TimeNs now = now_ns();
    s.decided(start ? s.machine->profiler_start(now, this_thread_id(), call)
                    : s.machine->profiler_stop(now, this_thread_id(), call));
  }
  s.apply();
}

void CaptureWindowControl::on_nvtx_callback(CUpti_CallbackId cbid, const CUpti_NvtxData* data) {
  Impl& s = impl();
  if (!s.watching_nvtx.load(std::memory_order_relaxed) || data == nullptr) return;
  const void* params = data->functionParams;
  const void* ret = data->functionReturnValue;
  if (params == nullptr) return;
  const std::uint32_t tid = this_thread_id();
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.finished) return;
    capture::CaptureWindow& m = *s.machine;
    const TimeNs now = now_ns();
    auto range_id = [ret]() -> std::uint64_t {
      return ret != nullptr ? *static_cast<const nvtxRangeId_t*>(ret) : 0;
    };
    switch (cbid) {
      case CUPTI_CBID_NVTX_nvtxDomainCreateA:
      case CUPTI_CBID_NVTX_nvtxDomainCreateW: {
        if (ret == nullptr) return;
        const auto handle =
            reinterpret_cast<std::uintptr_t>(*static_cast<const nvtxDomainHandle_t*>(ret));
        const char* a = static_cast<const nvtxDomainCreateA_params*>(params)->name;
        std::string name = cbid == CUPTI_CBID_NVTX_nvtxDomainCreateA
                               ? std::string(a != nullptr ? a : "")
                               : utf8(static_cast<const DomainCreateWParams*>(params)->name);
        if (handle != 0) s.domain_names[handle] = std::move(name);
        return;
      }
      case CUPTI_CBID_NVTX_nvtxDomainRegisterStringA:
      case CUPTI_CBID_NVTX_nvtxDomainRegisterStringW: {
        if (ret == nullptr) return;
        const auto handle =
            reinterpret_cast<std::uintptr_t>(*static_cast<const nvtxStringHandle_t*>(ret));
        const char* a = static_cast<const nvtxDomainRegisterStringA_params*>(params)->string;
        // The W form's parameter is declared as char* but holds the wide string.
        std::string text = cbid == CUPTI_CBID_NVTX_nvtxDomainRegisterStringA
                               ? std::string(a != nullptr ? a : "")
                               : utf8(reinterpret_cast<const wchar_t*>(a));
        if (handle != 0) s.registered[handle] = std::move(text);
        return;
      }
      case CUPTI_CBID_NVTX_nvtxRangePushA: {
        const char* msg = static_cast<const nvtxRangePushA_params*>(params)->message;
        s.decided(m.nvtx_push(now, tid, 0, std::string_view(), msg != nullptr ? msg : ""));
        break;
      }
      case CUPTI_CBID_NVTX_nvtxRangePushW:
        s.decided(m.nvtx_push(now, tid, 0, std::string_view(),
                              utf8(static_cast<const nvtxRangePushW_params*>(params)->message)));
        break;
      case CUPTI_CBID_NVTX_nvtxRangePushEx:
        s.decided(m.nvtx_push(
            now, tid, 0, std::string_view(),
            s.message(static_cast<const nvtxRangePushEx_params*>(params)->eventAttrib)));
        break;
      case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
        const auto* p = static_cast<const nvtxDomainRangePushEx_params*>(params);
        s.decided(m.nvtx_push(now, tid, reinterpret_cast<std::uintptr_t>(p->domain),
                              s.domain_name(p->domain), s.message(p->core.eventAttrib)));
        break;
      }
      case CUPTI_CBID_NVTX_nvtxRangePop:
        s.decided(m.nvtx_pop(now, tid, 0));
        break;
      case CUPTI_CBID_NVTX_nvtxDomainRangePop: {
        const auto* p = static_cast<const nvtxDomainRangePop_params*>(params);
        s.decided(m.nvtx_pop(now, tid, reinterpret_cast<std::uintptr_t>(p->domain)));
        break;
      }
      case CUPTI_CBID_NVTX_nvtxRangeStartA: {
        const char* msg = static_cast<const nvtxRangeStartA_params*>(params)->message;
        s.decided(
            m.nvtx_start(now, tid, range_id(), std::string_view(), msg != nullptr ? msg : ""));
        break;
      }
      case CUPTI_CBID_NVTX_nvtxRangeStartW:
        s.decided(m.nvtx_start(now, tid, range_id(), std::string_view(),
                               utf8(static_cast<const nvtxRangeStartW_params*>(params)->message)));
        break;
      case CUPTI_CBID_NVTX_nvtxRangeStartEx:
        s.decided(m.nvtx_start(
            now, tid, range_id(), std::string_view(),
            s.message(static_cast<const nvtxRangeStartEx_params*>(params)->eventAttrib)));
        break;
      case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx: {
        const auto* p = static_cast<const nvtxDomainRangeStartEx_params*>(params);
        s.decided(m.nvtx_start(now, tid, range_id(), s.domain_name(p->domain),
                               s.message(p->core.eventAttrib)));
        break;
      }
      case CUPTI_CBID_NVTX_nvtxRangeEnd:
        s.decided(m.nvtx_end(now, tid, static_cast<const nvtxRangeEnd_params*>(params)->id));
        break;
      case CUPTI_CBID_NVTX_nvtxDomainRangeEnd:
        s.decided(
            m.nvtx_end(now, tid, static_cast<const nvtxDomainRangeEnd_params*>(params)->core.id));
        break;
      default:
        return;
    }
  }
  s.apply();
}

CaptureWindowControl::CommandReply CaptureWindowControl::command(bool start) {
  Impl& s = impl();
  CommandReply reply;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (!s.machine && s.idle_setting && !s.finished) {
      // Recording has been on since the capture started: that is window 1.
      s.machine.emplace(*s.idle_setting, s.idle_origin);
      s.description = capture::describe(*s.idle_setting);
      s.decided(s.machine->tick(s.idle_started));
      s.active = true;
    }
    if (!s.machine || s.finished) {
      reply.result = capture::CommandResult::kFinished;
      reply.detail = "not recording (the capture has ended)";
      return reply;
    }
    const capture::CaptureWindow::CommandOutcome r =
        s.machine->command(now_ns(), start, start ? "flopline start" : "flopline stop");
    s.decided(r.changes);
    reply.result = r.result;
    const capture::CaptureWindow& m = *s.machine;
    const std::string current =
        m.windows().empty() ? std::string() : "window " + std::to_string(m.windows().back().index);
    switch (r.result) {
      case capture::CommandResult::kApplied:
        if (!r.changes.empty()) {
          reply.detail = "window " + std::to_string(r.changes.back().index) +
                         (r.changes.back().opened ? " opened" : " closed");
        } else {
          reply.detail = start
                             ? "window opens when the delay ends"
                             : "recording was off already (" +
                                   (m.windows().empty()
                                        ? std::string("no window yet")
                                        : current + " closed by " + m.windows().back().closed_by) +
                                   ")";
        }
        break;
      case capture::CommandResult::kAlreadyStarted:
        reply.detail = m.is_open() ? "already started (" + current + " is open)"
                                   : "already started (stop, then start, opens the next window)";
        break;
      case capture::CommandResult::kLimitReached:
        reply.detail =
            "no more windows (--capture-range-end=" +
            (m.setting().max_windows == 1 ? std::string("stop")
                                          : "repeat:" + std::to_string(m.setting().max_windows)) +
            ")";
        break;
      case capture::CommandResult::kNotCommanded:
        reply.detail =
            std::string("not on demand (") + capture::to_string(m.setting().range) + " windows)";
        break;
      default:
        reply.detail = capture::to_string(r.result);
        break;
    }
  }
  s.apply();
  return reply;
}

void CaptureWindowControl::finish() {
  Impl& s = impl();
  std::lock_guard<std::mutex> lock(s.mu);
  if (!s.active) {
    s.finished = true;  // no command starts a machine after this
    return;
  }
  if (s.finished) return;
  s.machine->finish(now_ns());
  s.finished = true;
  s.watching_nvtx = false;
  s.watching_profiler = false;
  s.wake.notify_all();
}

std::string CaptureWindowControl::description() const {
  std::lock_guard<std::mutex> lock(impl().mu);
  return impl().machine ? impl().description : std::string();
}

std::vector<capture::CaptureWindowRecord> CaptureWindowControl::windows() const {
  std::lock_guard<std::mutex> lock(impl().mu);
  return impl().machine ? impl().machine->windows() : std::vector<capture::CaptureWindowRecord>();
}

void CaptureWindowControl::reset_after_fork() {
  // As CuptiSource: the old state's mutexes may be held by threads that are gone.
  impl_.store(new Impl, std::memory_order_release);
  g_window_open = true;
}

}  // namespace flopline::cupti
