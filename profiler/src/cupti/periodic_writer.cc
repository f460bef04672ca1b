#include "periodic_writer.h"

#include <cupti.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "capture_window_control.h"
#include "cupti_source.h"
#include "flopline/capture/self_timing.h"
#include "flopline/capture/streaming_decoder.h"
#include "flopline/capture/window_files.h"
#include "flopline/trace/incremental_trace.h"

namespace flopline::cupti {

namespace {

thread_local bool t_appending = false;

// Marks this thread as holding the append lock for as long as it lives.
struct Appending {
  Appending() { t_appending = true; }
  ~Appending() { t_appending = false; }
  Appending(const Appending&) = delete;
  Appending& operator=(const Appending&) = delete;
};

}  // namespace

bool PeriodicWriter::appending_on_this_thread() {
  return t_appending;
}
namespace {

// Records of work that ended this long before an append may still be on their way
// from the GPU; they wait for the next append.
constexpr std::int64_t kSettleNs = 500'000'000;
// An append comes early once this many records arrived since the last one.
constexpr std::uint64_t kRecordsPerAppend = 2'000'000;
constexpr auto kPoll = std::chrono::milliseconds(100);

trace::TimeNs now_ns() {
  std::uint64_t now = 0;
  cuptiGetTimestamp(&now);
  return static_cast<trace::TimeNs>(now);
}

}  // namespace

struct PeriodicWriter::Impl {
  PeriodicWriterOptions options;
  std::mutex append_mu;  // held for a whole append; stop() and finish() take it
  std::mutex mu;
  std::condition_variable wake;
  std::atomic<bool> loop_stopped{false};
  bool running = false;
  bool finished = false;
  std::string failed;  // why the file could not be written ("" while it can)
  std::unique_ptr<capture::StreamingDecoder> decoder;
  std::unique_ptr<trace::IncrementalTraceFile> file;
  std::uint64_t records_at_last = 0;
  std::uint64_t kernels = 0;
  std::uint64_t dropped = 0;
  trace::TimeNs upto = INT64_MIN;
  trace::TimeNs first_event = INT64_MAX;
  // One file per window (options.window_files): its files, one after the other.
  std::unique_ptr<capture::WindowFileWriter> window_files;

  void loop();
  // One append, append_mu held: takes the capture's records, writes what is final at
  // `upto` (kEndOfRun: everything, then the metadata). False when the file could not
  // be written.
  bool append(trace::TimeNs at, bool last, bool create,
              const std::vector<std::pair<std::string, std::string>>* info);
};

bool PeriodicWriter::Impl::append(trace::TimeNs at, bool last, bool create,
                                  const std::vector<std::pair<std::string, std::string>>* info) {
  const capture::SelfTimer timer(capture::SelfPart::kAppend);
  if (finished || !failed.empty()) return failed.empty();
  CuptiSource& source = CuptiSource::instance();
  records_at_last = source.stats().records;
  capture::RecordBatch fresh = source.take(last);
  const std::uint64_t fresh_kernels = fresh.kernels.size();
  kernels += fresh_kernels;
  const std::optional<trace::TimeNs> time_base = fresh.time_base;
  decoder->add(std::move(fresh));
  // Nothing is written before the process did GPU work (a launcher writes no trace).
  if (!decoder->gpu_work_seen() && !create) return true;
  upto = last ? capture::kEndOfRun : std::max(upto, at);
  trace::Trace t = decoder->take(upto);
  if (window_files) {
    // NVTX ranges still open do not hold a window's file: their ends, after the window
    // closed, are not recorded (docs/CAPTURE.md, "On demand").
    const capture::HeldRecords held = decoder->held();
    const bool holds_open = held.open() - held.markers - held.marker_data > 0;
    // The end of the run gives its own metadata (with what recording cost); a file
    // finished while the program runs asks for it.
    auto metadata = [&](trace::Trace& m) {
      add_capture_metadata(m, static_cast<std::uint32_t>(getpid()),
                           info != nullptr ? *info
                           : options.info  ? options.info()
                                           : std::vector<std::pair<std::string, std::string>>{});
    };
    std::string error;
    const bool ok =
        window_files->append(t, CaptureWindowControl::instance().windows(), upto, holds_open, last,
                             fresh_kernels, time_base.value_or(0), metadata, &error);
    if (!ok) failed = error;
    if (last) finished = true;
    return ok;
  }
  if (t.slice_count() + t.instant_count() + t.counter_point_count() > 0)
    first_event = std::min(first_event, t.time_bounds().first);
  if (!file) {
    // Times relative to the run's start (the same for every process of a `flopline run`),
    // as a trace written at once gives them; absolute without one.
    file = std::make_unique<trace::IncrementalTraceFile>(options.path(), time_base.value_or(0));
  }
  std::string error;
  if (!file->append_all(t, &error)) {
    failed = error;
    return false;
  }
  if (last) {
    if (info != nullptr) add_capture_metadata(t, static_cast<std::uint32_t>(getpid()), *info);
    dropped = t.report.dropped_records;
    if (!file->finish(t, &error)) {
      failed = error;
      return false;
    }
    finished = true;
  }
  if (file->started() && options.appended && !last && first_event != INT64_MAX) {
    options.appended(file->path(), file->events(), upto - first_event);
  }
  return true;
}

void PeriodicWriter::Impl::loop() {
  using Clock = std::chrono::steady_clock;
  auto last_end = Clock::now();
  std::int64_t last_took_ns = 0;
  std::unique_lock<std::mutex> lock(mu);
  while (!loop_stopped) {
    wake.wait_for(lock, kPoll);
    if (loop_stopped) break;
    const std::int64_t since_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - last_end).count();
    const bool due = since_ns >= capture::next_append_wait_ns(options.interval_ns, last_took_ns);
    const bool full =
        since_ns >= capture::next_append_wait_ns(0, last_took_ns) &&
        CuptiSource::instance().stats().records - records_at_last >= kRecordsPerAppend;
    if (!due && !full) continue;
    lock.unlock();
    const auto begin = Clock::now();
    {
      std::lock_guard<std::mutex> append_lock(append_mu);
      const Appending appending;
      if (!loop_stopped) {
        CuptiSource::instance().flush_completed();
        append(now_ns() - kSettleNs, false, false, nullptr);
      }
    }
    last_end = Clock::now();
    last_took_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(last_end - begin).count();
    lock.lock();
  }
}

PeriodicWriter::PeriodicWriter() : impl_(new Impl) {}

PeriodicWriter& PeriodicWriter::instance() {
  static PeriodicWriter* w = new PeriodicWriter;  // never destroyed
  return *w;
}

void PeriodicWriter::start(PeriodicWriterOptions options) {
  Impl& s = *impl_;
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.running || options.interval_ns <= 0) return;
  s.options = std::move(options);
  capture::StreamingOptions so;
  so.kinds = s.options.kinds;
  so.decode.profiler_steps = s.options.profiler_steps;
  s.decoder = std::make_unique<capture::StreamingDecoder>(so);
  if (s.options.window_files) {
    capture::WindowFileWriter::Hooks hooks;
    hooks.path = s.options.window_path;
    hooks.appended = s.options.appended;
    hooks.finished = [finished = s.options.finished](const capture::WindowFile& f) {
      if (!finished) return;
      CaptureWriteResult r;
      r.path = f.path;
      r.ok = f.ok;
      r.error = f.error;
      r.events = f.events;
      r.kernels = f.kernels;
      r.dropped_records = f.dropped_records;
      finished(r);
    };
    s.window_files = std::make_unique<capture::WindowFileWriter>(std::move(hooks));
  }
  s.running = true;
  // Detached: a process may end (exit, _exit, a signal) while it sleeps; stop() makes
  // sure no append is in progress or starts after it.
  std::thread([&s] { s.loop(); }).detach();
}

bool PeriodicWriter::streaming() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->running;
}

void PeriodicWriter::stop() {
  Impl& s = *impl_;
  s.loop_stopped = true;
  s.wake.notify_all();
  std::lock_guard<std::mutex> lock(s.append_mu);  // an append in progress finishes first
}

void PeriodicWriter::append_now(bool create) {
  Impl& s = *impl_;
  if (!streaming()) return;
  std::lock_guard<std::mutex> lock(s.append_mu);
  const Appending appending;
  s.append(now_ns(), false, create, nullptr);
}

CaptureWriteResult PeriodicWriter::finish(
    const std::vector<std::pair<std::string, std::string>>& info, bool always) {
  Impl& s = *impl_;
  stop();
  std::lock_guard<std::mutex> lock(s.append_mu);
  CaptureWriteResult result;
  if (!s.decoder) return result;
  if (s.options.window_files) {
    // Each window's file was reported as it was finished; a failure is said here.
    if (!s.finished && s.failed.empty()) s.append(capture::kEndOfRun, true, always, &info);
    s.finished = true;
    result.path = s.window_files ? s.window_files->last_finished().path : std::string();
    result.error = s.failed;
    return result;
  }
  if (!s.finished && s.failed.empty()) {
    const bool wrote_before = s.file != nullptr;
    s.append(capture::kEndOfRun, true, always, &info);
    if (!wrote_before && s.file == nullptr) return result;  // no GPU work: no trace
  }
  result.path = s.file ? s.file->path() : std::string();
  result.ok = s.failed.empty() && s.finished;
  result.error = s.failed;
  result.events = s.file ? s.file->events() : 0;
  result.kernels = s.kernels;
  result.dropped_records = s.dropped;
  return result;
}

std::string PeriodicWriter::window_file_path(std::uint32_t index) const {
  std::function<std::string(std::uint32_t)> path;
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    if (!impl_->running || !impl_->options.window_files) return {};
    path = impl_->options.window_path;
  }
  return path ? path(index) : std::string();
}

std::string PeriodicWriter::path() const {
  std::lock_guard<std::mutex> lock(impl_->append_mu);
  return impl_->file && impl_->file->started() ? impl_->file->path() : std::string();
}

}  // namespace flopline::cupti
