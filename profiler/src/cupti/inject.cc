// libflopline_inject.so: records an unmodified program. `flopline run` (docs/CAPTURE.md)
// puts it in three places:
//
//   CUDA_INJECTION64_PATH  the driver loads it during cuInit and calls
//                          InitializeInjection(): capture starts there.
//   NVTX_INJECTION64_PATH  NVTX loads it at the program's first NVTX call and calls
//                          InitializeInjectionNvtx2(): capture starts (so ranges opened
//                          before CUDA starts are seen) and the call is handed to CUPTI.
//   LD_PRELOAD             loads it (and the libcupti it links) when the process starts,
//                          so the two paths above find this one copy, and any libcupti
//                          the program brings later (PyTorch's) resolves to the same one.
//                          Its constructor does nothing: a process that never uses CUDA
//                          or NVTX never starts a capture.
//
// The trace is written (flushed from CUPTI, decoded, written) at normal exit and at
// exit() from any thread (atexit), after cudaDeviceReset, and on SIGINT, SIGTERM and
// the crash signals before the signal's own action; one file per process that did GPU
// work (a kernel, copy or set): a launcher or compile worker that only loaded CUDA
// writes none. Each write is noted in the run's manifest once the file is on disk. A child
// forked from a capturing process writes nothing of its parent's; a child forked
// before CUDA started captures on its own when CUDA starts there.
#include <execinfo.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "control_watcher.h"
#include "cupti_source.h"
#include "flopline/capture/capture_config.h"
#include "flopline/capture/output_manifest.h"
#include "flopline/capture/self_timing.h"
#include "flopline/capture/window_files.h"
#include "periodic_writer.h"
#include "trace_output.h"

#define FLOPLINE_EXPORT extern "C" __attribute__((visibility("default")))

namespace flopline::cupti {
namespace {

struct InjectState {
  std::mutex init_mu;
  bool initialized = false;
  pid_t owner = 0;  // the process that started this capture
  capture::CaptureEnv env;
  std::mutex write_mu;  // one write at a time (exit, reset and a signal may race)
  std::atomic<bool> signal_write_started{false};
  struct sigaction previous[NSIG] = {};
  bool handled[NSIG] = {};
};

InjectState& state() {
  static InjectState* s = new InjectState;  // never destroyed: used at exit and in signals
  return *s;
}

bool is_directory(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

void say(const std::string& line) {
  if (state().env.quiet) return;
  std::fprintf(stderr, "flopline: %s\n", line.c_str());
}

bool recorded_gpu_work(const capture::RecordBatch& b) {
  return !b.kernels.empty() || !b.memcpys.empty() || !b.memsets.empty();
}

// The path this process writes: its name under the run's rules, claimed in the manifest;
// with `window` > 0, that window's file beside it ("t-window2.json").
std::string output_path(std::uint32_t window = 0) {
  InjectState& s = state();
  const std::int64_t pid = getpid();
  const bool in_run = s.env.run_pid > 0;
  const bool command_process = in_run && static_cast<std::int64_t>(getppid()) == s.env.run_pid;
  std::string path = capture::run_output_path(s.env.output, pid, s.env.rank, command_process,
                                              in_run, is_directory);
  if (window > 0) path = capture::window_file_path(path, window);
  return capture::claim_output_path(s.env.manifest, path, pid);
}

// The "flopline" metadata this process's trace carries beside what decoding notes.
std::vector<std::pair<std::string, std::string>> trace_info(bool stop) {
  InjectState& s = state();
  std::vector<std::pair<std::string, std::string>> info = {
      {"kinds", capture::activity_kinds_to_string(s.env.kinds)},
      {"max memory MB", std::to_string(s.env.max_memory_bytes >> 20)}};
  if (!s.env.run_id.empty()) info.emplace_back("run id", s.env.run_id);
  if (s.env.rank) info.emplace_back("rank", *s.env.rank);
  if (stop && s.env.self_timing) {
    // What recording cost until now, by part, in the trace and on stderr.
    std::string one_line;
    for (const std::string& line : capture::format_self_timing(capture::self_timing_totals(),
                                                               capture::self_timer_cost_ns())) {
      say("self timing: " + line);
      one_line += (one_line.empty() ? "" : "; ") + line;
    }
    info.emplace_back("self timing", one_line);
  }
  return info;
}

// Notes a write in the run's manifest and on stderr.
void report(const CaptureWriteResult& r) {
  InjectState& s = state();
  const std::int64_t pid = getpid();
  if (!r.ok) {
    capture::note_failed(s.env.manifest, pid, r.path, r.error);
    say(r.error);
    return;
  }
  capture::note_written(
      s.env.manifest, pid, r.path,
      std::to_string(r.events) + " events, " + std::to_string(r.kernels) + " kernels");
  say("wrote " + r.path + " (" + std::to_string(r.kernels) + " kernels, " +
      std::to_string(r.events) + " events)");
  if (r.dropped_records > 0) {
    say(std::to_string(r.dropped_records) +
        " activity records were dropped (memory cap FLOPLINE_MAX_MEMORY_MB=" +
        std::to_string(s.env.max_memory_bytes >> 20) + "); the trace says so in its metadata");
  }
}

// FLOPLINE_WRITE_DEBUG=1: each step of a write on stderr, with the process, the thread
// and the reason, to find where a final write that never finished stopped.
void write_debug(const char* step, bool stop) {
  static const bool on = std::getenv("FLOPLINE_WRITE_DEBUG") != nullptr;
  if (!on) return;
  std::fprintf(stderr, "flopline: write (pid %d, tid %ld, %s): %s\n", static_cast<int>(getpid()),
               static_cast<long>(syscall(SYS_gettid)), stop ? "final" : "during the run", step);
}

// Flushes CUPTI, decodes and writes this process's trace. `stop` disables recording
// first (exit and signals: nothing after this point is wanted). A process that did no
// GPU work (a launcher, a compile worker) writes nothing unless `always`. With the
// periodic writer streaming, a write before the end appends what has ended, and the end
// finishes the file it appended to.
void write_trace(bool stop, bool always = false) {
  InjectState& s = state();
  if (!s.initialized || getpid() != s.owner) return;  // not capturing, or a forked child
  write_debug("waiting for any other write", stop);
  std::lock_guard<std::mutex> lock(s.write_mu);
  CuptiSource& source = CuptiSource::instance();
  PeriodicWriter& writer = PeriodicWriter::instance();
  if (writer.streaming()) {
    if (!stop) {
      source.flush();
      writer.append_now(always);
      return;
    }
    write_debug("stopping the periodic appends", stop);
    writer.stop();  // no periodic append after this one
    write_debug("stopping the capture", stop);
    source.stop();
    write_debug("finishing the file", stop);
    const CaptureWriteResult r = writer.finish(trace_info(stop), always);
    write_debug(r.ok ? "finished" : r.error.empty() ? "nothing to finish" : "failed", stop);
    if (r.ok || !r.error.empty()) report(r);
    return;
  }
  if (stop) {
    source.stop();
  } else {
    source.flush();
  }
  const capture::RecordBatch batch = source.snapshot();
  if (!always && !recorded_gpu_work(batch)) return;
  capture::DecodeOptions decode;
  decode.profiler_steps = s.env.profiler_steps;
  report(write_capture(batch, output_path(), trace_info(stop), decode));
}

// The final write, once per process, whichever way it ends (exit, _exit, a signal).
std::atomic<bool> g_final_write_started{false};
std::atomic<bool> g_final_write_done{false};
std::atomic<long> g_final_writer_tid{0};
// The capturing process. Read before anything else in final_write(): a vfork child
// shares this process's memory and must change none of it.
std::atomic<pid_t> g_capturing_pid{0};

// How long a second ending (exit on one thread while a signal's write runs on another)
// waits for the first one's write before it lets the process end without it.
constexpr int kFinalWriteWaitMs = 60'000;

void final_write() {
  if (g_capturing_pid.load() != getpid()) return;
  const long tid = syscall(SYS_gettid);
  if (g_final_write_started.exchange(true)) {
    if (g_final_writer_tid.load() == tid) {
      write_debug("already started on this thread (a signal during the write)", true);
      return;
    }
    // Returning now would let this thread end the process (exit_group) while the other
    // one is still writing: the file would stop at its last append. Wait for it instead.
    write_debug("already started on another thread: waiting for it to finish", true);
    for (int waited = 0; !g_final_write_done.load(); ++waited) {
      if (waited == kFinalWriteWaitMs) {
        static const char kText[] =
            "flopline: the trace write on another thread did not finish within 60 s; "
            "the process ends without it (the file holds what was appended before)\n";
        (void)!::write(STDERR_FILENO, kText, sizeof kText - 1);
        return;
      }
      struct timespec ms = {0, 1'000'000};
      nanosleep(&ms, nullptr);  // async-signal-safe: this may run in a signal handler
    }
    write_debug("the other thread's write finished", true);
    return;
  }
  g_final_writer_tid = tid;
  write_trace(true);
  g_final_write_done = true;
}

void on_exit_write() {
  final_write();
}

bool is_handler(const struct sigaction& sa) {
  if (sa.sa_flags & SA_SIGINFO) return sa.sa_sigaction != nullptr;
  return sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN;
}

void on_signal(int sig, siginfo_t* info, void* context) {
  InjectState& s = state();
  const struct sigaction& prev = s.previous[sig];
  const bool interrupt = sig == SIGINT || sig == SIGTERM;
  if (interrupt && is_handler(prev)) {
    // The program handles it (Python's SIGINT -> KeyboardInterrupt): let it, and write
    // at its exit as usual.
    if (prev.sa_flags & SA_SIGINFO) {
      prev.sa_sigaction(sig, info, context);
    } else {
      prev.sa_handler(sig);
    }
    return;
  }
  if (interrupt && prev.sa_handler == SIG_IGN && !(prev.sa_flags & SA_SIGINFO)) return;
  if (!interrupt && PeriodicWriter::appending_on_this_thread()) {
    // A fault in flopline's own append: the write would wait for the lock this thread
    // holds, and the other threads would run on to an exit that skips the write (the
    // file silently left at its last append). Say so, with where, and let the signal
    // end the process as it would have without flopline.
    static const char kText[] =
        "flopline: fatal signal while appending to the trace; the file holds the appends "
        "before this one. Where:\n";
    (void)!::write(STDERR_FILENO, kText, sizeof kText - 1);
    void* frames[48];
    backtrace_symbols_fd(frames, backtrace(frames, 48), STDERR_FILENO);
    sigaction(sig, &prev, nullptr);
    raise(sig);
    return;
  }
  // The signal ends the process: write first, once. Not async-signal-safe in general,
  // but the crash this is for (abort(), a fault, a kill) rarely holds the locks the
  // write needs; the alarm ends the process if it ever does.
  if (!s.signal_write_started.exchange(true)) {
    alarm(60);
    final_write();
    alarm(0);
  }
  sigaction(sig, &prev, nullptr);
  raise(sig);  // delivered with the previous disposition once this handler returns
}

void install_signal_handlers() {
  InjectState& s = state();
  // The first backtrace() loads its unwinder, which allocates: done here, not in a handler.
  void* frame[1];
  backtrace(frame, 1);
  for (int sig : {SIGINT, SIGTERM, SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) {
    struct sigaction sa {};
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, &s.previous[sig]) == 0) s.handled[sig] = true;
  }
}

void after_fork_in_child() {
  // The parent's records are the parent's to write. CUDA cannot start in a child forked
  // from a process that uses it, so this process will not capture.
  CuptiSource::instance().reset_after_fork();
  capture::reset_self_timing();
  InjectState& s = state();
  s.signal_write_started = false;
  g_final_write_started = false;
  g_final_write_done = false;
  g_final_writer_tid = 0;
}

// Starts the capture once per process. Returns false when CUPTI refused.
bool start_capture() {
  InjectState& s = state();
  std::lock_guard<std::mutex> lock(s.init_mu);
  if (s.initialized && s.owner == getpid()) return true;
  s.env = capture::read_capture_env([](const char* n) { return std::getenv(n); });
  for (const std::string& w : s.env.warnings) say(w);
  capture::set_self_timing(s.env.self_timing);
  SourceOptions options = source_options(s.env);
  // The delay counts from the run's start, the same instant for every process of it.
  options.window_origin_ns = capture::run_time_base([](const char* n) { return std::getenv(n); });
  std::string error;
  CuptiSource& source = CuptiSource::instance();
  if (!source.start(options, &error)) {
    say("capture not started: " + error);
    return false;
  }
  source.set_device_reset_hook([] { write_trace(false); });
  // `flopline start` and `flopline stop` reach this process through the run's directory.
  start_control_watcher(s.env.control_dir, s.env.rank, say);
  const bool first_in_process = !s.initialized;
  s.initialized = true;
  s.owner = getpid();
  g_capturing_pid = s.owner;
  if (s.env.flush_interval_ns > 0) {
    PeriodicWriterOptions w;
    w.interval_ns = s.env.flush_interval_ns;
    w.kinds = s.env.kinds;
    w.profiler_steps = s.env.profiler_steps;
    w.path = [] { return output_path(); };
    // An ondemand run (`flopline launch`) writes each window to a file of its own, there
    // as soon as the window's events are in.
    if (s.env.windows.range == capture::CaptureRangeKind::kOnDemand) {
      w.window_files = true;
      w.window_path = [](std::uint32_t window) { return output_path(window); };
      w.info = [] { return trace_info(false); };
      w.finished = report;
    }
    w.appended = [](const std::string& path, std::uint64_t events, std::int64_t reach_ns) {
      char detail[96];
      std::snprintf(detail, sizeof detail, "up to %.1f s after its first event (%llu events)",
                    reach_ns / 1e9, static_cast<unsigned long long>(events));
      capture::note_partial(state().env.manifest, getpid(), path, detail);
    };
    PeriodicWriter::instance().start(std::move(w));
  }
  if (first_in_process) {
    // Registered now, after the CUDA runtime registered its own teardown, so it runs
    // before that teardown.
    std::atexit(on_exit_write);
    pthread_atfork(nullptr, nullptr, after_fork_in_child);
    install_signal_handlers();
  }
  return true;
}

}  // namespace
}  // namespace flopline::cupti

// CUDA_INJECTION64_PATH entry point. Idempotent; 1 means success to the driver.
FLOPLINE_EXPORT int InitializeInjection(void) {
  return flopline::cupti::start_capture() ? 1 : 0;
}

// NVTX_INJECTION64_PATH entry point: start capturing (NVTX ranges may come before
// CUDA starts), then let CUPTI install its NVTX handlers.
FLOPLINE_EXPORT int InitializeInjectionNvtx2(void* get_export_table) {
  flopline::cupti::start_capture();
  return flopline::cupti::CuptiSource::forward_nvtx_injection(get_export_table);
}

// Lets flopline::Session see that this library already captures in this process.
FLOPLINE_EXPORT int flopline_injection_active(void) {
  flopline::cupti::InjectState& s = flopline::cupti::state();
  return s.initialized && s.owner == getpid() ? 1 : 0;
}

// Lets a program loaded with the injection write its trace now (tests, long jobs).
FLOPLINE_EXPORT void flopline_injection_write(void) {
  flopline::cupti::write_trace(false, true);
}

// _exit and _Exit skip atexit handlers: Python's os._exit (how fork-started
// multiprocessing workers end), and launchers and servers that skip their teardown on
// purpose. The library is preloaded, so these definitions come before libc's: they write
// the trace, from whichever thread calls them, then end the process as libc would. In a
// child forked from a capturing process write_trace returns at once (vfork too).
FLOPLINE_EXPORT void _exit(int status) {
  flopline::cupti::final_write();
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}

FLOPLINE_EXPORT void _Exit(int status) {
  flopline::cupti::final_write();
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}

// LD_PRELOAD: nothing to do at load (see the file comment).
__attribute__((constructor)) static void flopline_inject_loaded() {}
