#include "control_watcher.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "capture_window_control.h"
#include "flopline/capture/run_control.h"
#include "periodic_writer.h"

namespace flopline::cupti {
namespace {

constexpr auto kPoll = std::chrono::milliseconds(100);

// The process whose watcher runs: a forked child has none (the thread stayed in the
// parent) and starts its own when it starts a capture.
std::atomic<pid_t> g_watching_pid{0};

void answer(const std::string& dir, const capture::ControlCommand& c) {
  const bool start = c.verb == capture::ControlVerb::kStart;
  CaptureWindowControl::CommandReply r = CaptureWindowControl::instance().command(start);
  if (!start && r.result == capture::CommandResult::kApplied) {
    // Under flopline launch the window has a file of its own: say which, now.
    const std::vector<capture::CaptureWindowRecord> windows =
        CaptureWindowControl::instance().windows();
    if (!windows.empty() && !windows.back().open) {
      const std::string file = PeriodicWriter::instance().window_file_path(windows.back().index);
      if (!file.empty()) r.detail += "; its trace: " + file + " (once its last records are in)";
    }
  }
  capture::append_ack(dir, {getpid(), c.seq, capture::to_string(r.result), r.detail});
}

void watch(const std::string& dir, std::uint64_t offset) {
  const std::string path = dir + "/commands";
  for (;;) {
    std::this_thread::sleep_for(kPoll);
    if (g_watching_pid.load() != getpid()) return;
    struct stat st {};
    if (stat(path.c_str(), &st) != 0 || static_cast<std::uint64_t>(st.st_size) <= offset) continue;
    const std::string text = capture::read_file_from(path, offset);
    std::size_t consumed = 0;
    for (const capture::ControlCommand& c : capture::parse_commands(text, &consumed)) {
      answer(dir, c);
    }
    offset += consumed;
  }
}

}  // namespace

void start_control_watcher(const std::string& control_dir, const std::optional<std::string>& rank,
                           void (*say)(const std::string&)) {
  const pid_t pid = getpid();
  if (control_dir.empty() || g_watching_pid.exchange(pid) == pid) return;
  capture::RunProcess self;
  self.pid = pid;
  self.start_ticks = capture::process_start_ticks(pid).value_or(0);
  self.rank = rank.value_or("");
  if (!capture::register_process(control_dir, self)) {
    say("cannot note this process in " + control_dir +
        "; flopline start and stop will not reach it");
    g_watching_pid = 0;
    return;
  }
  // Commands given before this process started recording: the last one is the state
  // the run is in.
  const std::string text = capture::read_file_from(control_dir + "/commands", 0);
  std::size_t consumed = 0;
  const std::vector<capture::ControlCommand> before = capture::parse_commands(text, &consumed);
  if (!before.empty()) answer(control_dir, before.back());
  // Detached, as the periodic writer: the process may end while it sleeps, and a command
  // after the end is refused by the window control (finished).
  std::thread([control_dir, consumed] { watch(control_dir, consumed); }).detach();
}

}  // namespace flopline::cupti
