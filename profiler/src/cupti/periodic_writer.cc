#include "periodic_writer.h"

#include <cupti.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "cupti_source.h"
#include "flopline/capture/capture_config.h"
#include "flopline/capture/record_decoder.h"
#include "flopline/capture/self_timing.h"
#include "flopline/trace/incremental_trace.h"

namespace flopline::cupti {
namespace {

// Records of work that ended this long before an append may still be on their way
// from the GPU; they wait for the next append.
constexpr std::int64_t kSettleNs = 500'000'000;
// An append comes early once this many records arrived since the last one.
constexpr std::uint64_t kRecordsPerAppend = 2'000'000;
constexpr auto kPoll = std::chrono::milliseconds(100);

bool did_gpu_work(const capture::RecordBatch& b) {
  return !b.kernels.empty() || !b.memcpys.empty() || !b.memsets.empty();
}

}  // namespace

struct PeriodicWriter::Impl {
  PeriodicWriterOptions options;
  std::mutex append_mu;  // held for a whole append; stop() takes it
  std::mutex mu;
  std::condition_variable wake;
  std::atomic<bool> stopped{false};
  bool running = false;
  std::unique_ptr<trace::IncrementalTraceFile> file;
  std::uint64_t records_at_last = 0;

  void loop();
  void append_now();
};

void PeriodicWriter::Impl::append_now() {
  std::lock_guard<std::mutex> lock(append_mu);
  const capture::SelfTimer timer(capture::SelfPart::kAppend);
  if (stopped) return;
  CuptiSource& source = CuptiSource::instance();
  source.flush_completed();
  records_at_last = source.stats().records;
  const capture::RecordBatch batch = source.snapshot();
  if (!did_gpu_work(batch)) return;
  std::uint64_t now = 0;
  cuptiGetTimestamp(&now);
  const trace::Trace t = capture::decode_to_trace(batch);
  if (!file) file = std::make_unique<trace::IncrementalTraceFile>(options.path());
  // A range still open (its end not seen) and the GPU extent it has so far wait.
  const std::function<bool(const trace::Slice&)> closed = [&t](const trace::Slice& s) {
    return s.args == trace::kNoArgs ||
           t.args.json(s.args).find("\"unclosed\":true") == std::string_view::npos;
  };
  std::string error;
  const trace::TimeNs upto = static_cast<trace::TimeNs>(now) - kSettleNs;
  if (!file->append(t, upto, closed, &error)) {
    stopped = true;  // the final write at exit reports the same problem, if it remains
    return;
  }
  if (file->started() && options.appended) {
    options.appended(file->path(), file->events(), upto - t.time_bounds().first);
  }
}

void PeriodicWriter::Impl::loop() {
  using Clock = std::chrono::steady_clock;
  auto last_end = Clock::now();
  std::int64_t last_took_ns = 0;
  std::unique_lock<std::mutex> lock(mu);
  while (!stopped) {
    wake.wait_for(lock, kPoll);
    if (stopped) break;
    const std::int64_t since_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - last_end).count();
    const bool due = since_ns >= capture::next_append_wait_ns(options.interval_ns, last_took_ns);
    const bool full =
        since_ns >= capture::next_append_wait_ns(0, last_took_ns) &&
        CuptiSource::instance().stats().records - records_at_last >= kRecordsPerAppend;
    if (!due && !full) continue;
    lock.unlock();
    const auto begin = Clock::now();
    append_now();
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
  s.running = true;
  // Detached: a process may end (exit, _exit, a signal) while it sleeps; stop() makes
  // sure no append is in progress or starts after it.
  std::thread([&s] { s.loop(); }).detach();
}

void PeriodicWriter::stop() {
  Impl& s = *impl_;
  s.stopped = true;
  s.wake.notify_all();
  std::lock_guard<std::mutex> lock(s.append_mu);  // an append in progress finishes first
}

std::string PeriodicWriter::path() const {
  std::lock_guard<std::mutex> lock(impl_->append_mu);
  return impl_->file && impl_->file->started() ? impl_->file->path() : std::string();
}

}  // namespace flopline::cupti
