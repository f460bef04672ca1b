// What flopline's callback costs the program's launching thread, without a GPU: drives
// cupti::on_api_callback (the subscriber's callback of the injection library) the way
// CUPTI does for one cudaLaunchKernel (runtime enter, driver cuLaunchKernel enter and
// exit, runtime exit) and compares it with an empty callback (what the bare-CUPTI floor
// of bench_train_overhead.py runs) and with the two CUPTI timestamps it takes.
//
//   bench_call_callback [LAUNCHES]      (default 2,000,000; prints ns per launch)
//
// Full call chunks go to a sink that queues them for another thread, as CuptiSource's
// does, so the hand-over and the allocation of a fresh chunk are in the figure.
#include <cupti.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>

#include "call_recorder.h"
#include "cupti_source.h"

namespace {

using Callback = void (*)(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*);

__attribute__((noinline)) void CUPTIAPI empty_callback(void*, CUpti_CallbackDomain,
                                                       CUpti_CallbackId, const void*) {
  asm volatile("");
}

// Queues full chunks under a lock for a consumer thread that frees them.
class ChunkQueue {
 public:
  ChunkQueue() : consumer_([this] { consume(); }) {}
  ~ChunkQueue() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_one();
    consumer_.join();
  }
  void push(flopline::cupti::CallChunk&& chunk) {
    std::lock_guard<std::mutex> lock(mu_);
    chunks_.push_back(std::move(chunk));
    cv_.notify_one();
  }

 private:
  void consume() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return done_ || !chunks_.empty(); });
      if (chunks_.empty()) return;
      chunks_.clear();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<flopline::cupti::CallChunk> chunks_;
  bool done_ = false;
  std::thread consumer_;
};

// One launch as CUPTI reports it: runtime enter, driver enter, driver exit, runtime exit.
double ns_per_launch(Callback through, long launches) {
  // Called through a pointer the compiler cannot see, as CUPTI calls it.
  Callback volatile callback_slot = through;
  const Callback callback = callback_slot;
  std::int32_t ok = 0;
  CUpti_CallbackData data{};
  data.functionReturnValue = &ok;
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < launches; ++i) {
    data.correlationId = static_cast<std::uint32_t>(i);
    data.callbackSite = CUPTI_API_ENTER;
    callback(nullptr, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
             &data);
    callback(nullptr, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &data);
    data.callbackSite = CUPTI_API_EXIT;
    callback(nullptr, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &data);
    callback(nullptr, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
             &data);
  }
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(launches);
}

double ns_per_timestamp_pair(long launches) {
  std::uint64_t t = 0, sum = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < launches; ++i) {
    cuptiGetTimestamp(&t);
    sum += t;
    cuptiGetTimestamp(&t);
    sum += t;
  }
  const auto t1 = std::chrono::steady_clock::now();
  if (sum == 1) std::printf(" ");  // keeps the reads
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(launches);
}

// The fastest of five runs: the cost without the machine's noise.
template <typename F>
double fastest(F run) {
  double best = run();
  for (int i = 0; i < 4; ++i) best = std::min(best, run());
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  long launches = 2'000'000;
  if (argc > 2 || (argc == 2 && (launches = std::strtol(argv[1], nullptr, 10)) <= 0)) {
    std::fprintf(stderr, "usage: bench_call_callback [LAUNCHES]   (a positive count)\n");
    return 2;
  }
  using flopline::cupti::on_api_callback;
  ChunkQueue queue;
  flopline::cupti::set_call_sink([&](flopline::cupti::CallChunk&& c) { queue.push(std::move(c)); });

  const double empty = fastest([&] { return ns_per_launch(empty_callback, launches); });
  flopline::cupti::set_calls_recording(false);
  const double idle = fastest([&] { return ns_per_launch(on_api_callback, launches); });
  flopline::cupti::set_calls_recording(true);
  const double recording = fastest([&] { return ns_per_launch(on_api_callback, launches); });
  flopline::cupti::set_calls_recording(false);
  const double stamps = fastest([&] { return ns_per_timestamp_pair(launches); });

  std::printf("launches %ld, 4 callbacks each, fastest of 5 runs, ns per launch\n", launches);
  std::printf("%-44s %8.1f\n", "empty callback (the floor's)", empty);
  std::printf("%-44s %8.1f\n", "flopline's callback, not recording", idle);
  std::printf("%-44s %8.1f\n", "flopline's callback, recording the call", recording);
  std::printf("%-44s %8.1f\n", "  of which two cuptiGetTimestamp", stamps);
  std::printf("%-44s %8.1f\n", "flopline's added ns per launch", recording - empty);
  // The thread's last records reach the sink at thread exit, after the queue is gone.
  flopline::cupti::set_call_sink(nullptr);
  return 0;
}
