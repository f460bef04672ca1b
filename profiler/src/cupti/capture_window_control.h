// Capture windows on a live process (docs/CAPTURE.md, "Capture ranges"): feeds
// capture::CaptureWindow (capture_window.h, the decisions) from CUPTI's callbacks
// (cudaProfilerStart/Stop in the runtime and driver domains, NVTX ranges) and a timer
// thread (delay, duration), and turns CuptiSource's recording on and off as it decides.
//
// Outside a window no activity kind is enabled and the recorded calls' callbacks are
// off, so the program pays what CUPTI costs with nothing enabled, plus, with
// --capture-range=nvtx, one callback per NVTX range call (the ranges are how windows
// open).
//
// Other parts that must only work inside windows (the counter profiler) ask
// capture_window_open(), or register a listener.
#pragma once

#include <cupti.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "flopline/capture/capture_window.h"

namespace flopline::cupti {

// True while recording is on: no capture range, delay or duration was asked for, or a
// window is open (and recording was switched on for it). One relaxed atomic load: cheap
// enough for every launch callback.
bool capture_window_open();

// Called after recording was switched on (true) or off (false) for a window, on the
// thread that switched it, with no lock of the window control held. One listener;
// nullptr removes it.
using CaptureWindowListener = std::function<void(bool open)>;
void set_capture_window_listener(CaptureWindowListener listener);

class CaptureWindowControl {
 public:
  static CaptureWindowControl& instance();

  // Starts deciding. `origin_ns`: where the delay counts from (the run's start, on the
  // capture clock). `recording(on)` switches CuptiSource's recording; it is called with
  // false at once when the first window is not open at the start. Enables the callbacks
  // the range needs on `subscriber`.
  void start(const capture::CaptureWindowSetting& setting, capture::TimeNs origin_ns,
             CUpti_SubscriberHandle subscriber, std::function<void(bool)> recording);
  bool active() const;

  // The subscriber's callbacks, routed here by cupti_source.cc; each returns at once
  // unless it is one of the calls windows watch.
  void on_api_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                       const CUpti_CallbackData* data);
  void on_nvtx_callback(CUpti_CallbackId cbid, const CUpti_NvtxData* data);

  // `flopline start` (true) or `flopline stop` from the run's control directory
  // (control_watcher.cc), on the watcher's thread: switches an ondemand capture, or one
  // without a trigger (whose machine starts here, its first window opened at the
  // capture's start). `detail` says what happened in words for the answer.
  struct CommandReply {
    capture::CommandResult result = capture::CommandResult::kApplied;
    std::string detail;
  };
  CommandReply command(bool start);

  // The program ends: a window still open closes ("program end"), nothing switches
  // recording any more.
  void finish();

  // What the trace lists: the setting in words ("" when inactive) and every window.
  std::string description() const;
  std::vector<capture::CaptureWindowRecord> windows() const;

  // In a forked child: forget the parent's state (its timer thread is not here).
  void reset_after_fork();

  CaptureWindowControl(const CaptureWindowControl&) = delete;
  CaptureWindowControl& operator=(const CaptureWindowControl&) = delete;

  struct Impl;

 private:
  CaptureWindowControl();
  ~CaptureWindowControl() = delete;  // used at exit and in signal handlers
  Impl& impl() const { return *impl_.load(std::memory_order_acquire); }
  // Replaced (the old one leaked) by a new capture after a finished one, and in a forked
  // child; callbacks on other threads may be reading it meanwhile.
  std::atomic<Impl*> impl_;
};

}  // namespace flopline::cupti
