#include "control_command.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

namespace flopline::cli {
namespace {

using capture::ControlVerb;

std::int64_t unix_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string process_words(const capture::RunProcess& p) {
  std::string s = concat("process ", std::to_string(p.pid));
  if (!p.rank.empty()) s += concat(" (rank ", p.rank, ")");
  return s;
}

int run_control(ControlVerb verb, std::span<const std::string> args, std::ostream& out,
                std::ostream& err) {
  const char* name = capture::to_string(verb);
  const std::string who = concat("flopline ", name);
  auto parsed = parse_control_args(args);
  if (!parsed.ok()) {
    err << usage_error(name, parsed.error);
    return kExitUsage;
  }
  const ControlOptions& opt = *parsed.value;
  if (opt.help) {
    out << control_usage(verb);
    return kExitOk;
  }
  const std::string runs_dir = capture::runs_directory(
      [](const char* n) -> const char* { return std::getenv(n); }, getuid());
  const std::vector<capture::RunEntry> runs = capture::list_runs(runs_dir, capture::process_alive);
  std::string error;
  const capture::RunEntry* run = capture::find_run(runs, opt.run, runs_dir, &error);
  if (run == nullptr || !capture::check_command(*run, verb, &error)) {
    err << who << ": " << error << "\n";
    return kExitFailure;
  }
  const std::optional<std::uint64_t> seq =
      capture::append_command(run->dir, verb, getpid(), unix_now_ns(), &error);
  if (!seq) {
    err << who << ": cannot write the command: " << error << "\n";
    return kExitFailure;
  }
  const std::string dir = run->dir;
  const std::string id = run->info.id;
  // Each recording process answers from its watcher thread (it looks every 100 ms).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(opt.wait_ns);
  std::optional<capture::RunEntry> now;
  std::vector<capture::ControlAck> answers;
  for (;;) {
    now = capture::read_run(dir, capture::process_alive);
    answers.clear();
    for (capture::ControlAck& a : capture::read_acks(dir)) {
      if (a.seq == *seq) answers.push_back(std::move(a));
    }
    bool waiting = false;
    for (std::size_t i = 0; now && i < now->processes.size(); ++i) {
      const bool answered = std::any_of(answers.begin(), answers.end(), [&](const auto& a) {
        return a.pid == now->processes[i].pid;
      });
      waiting = waiting || (now->processes_live[i] && !answered);
    }
    if (!waiting || !now || !now->live || std::chrono::steady_clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  out << who << ": run " << id << " (" << run->info.how << ", pid " << run->info.pid
      << "): " << (verb == ControlVerb::kStart ? "recording on" : "recording off") << "\n";
  std::size_t applied = 0, refused = 0, recording = 0;
  for (std::size_t i = 0; now && i < now->processes.size(); ++i) {
    const capture::RunProcess& p = now->processes[i];
    const auto a = std::find_if(answers.begin(), answers.end(),
                                [&](const capture::ControlAck& x) { return x.pid == p.pid; });
    if (a != answers.end()) {
      out << "  " << process_words(p) << ": " << (a->detail.empty() ? a->result : a->detail)
          << "\n";
      ++(a->result == "applied" ? applied : refused);
      ++recording;
    } else if (now->processes_live[i]) {
      out << "  " << process_words(p) << ": no answer yet (it takes the command when its "
          << "watcher next looks)\n";
      ++recording;
    }
  }
  if (recording == 0) {
    out << "  no process of the run records yet: each takes the command when it starts CUDA\n";
  }
  if (refused > 0 && applied == 0) {
    err << who << ": no process of run " << id << " took the command\n";
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

Parsed<ControlOptions> parse_control_args(std::span<const std::string> args) {
  static constexpr OptionSpec kSpecs[] = {{"--wait", true}, {"--help", false, "-h"}};
  auto split = split_args(args, kSpecs);
  if (!split.ok()) return Parsed<ControlOptions>::fail(split.error);
  ControlOptions o;
  for (const auto& [opt, value] : split.value->options) {
    if (opt == "--help") {
      o.help = true;
    } else if (opt == "--wait") {
      std::string error;
      const auto ns = capture::parse_capture_seconds(value, true, &error);
      if (!ns) return Parsed<ControlOptions>::fail(concat("--wait: ", error));
      o.wait_ns = *ns;
    }
  }
  if (split.value->positional.size() > 1) {
    return Parsed<ControlOptions>::fail("one run at a time: give one id or pid");
  }
  if (!split.value->positional.empty()) o.run = split.value->positional[0];
  return Parsed<ControlOptions>{std::move(o), {}};
}

std::string control_usage(ControlVerb verb) {
  const bool start = verb == ControlVerb::kStart;
  return concat(
      "usage: flopline ", capture::to_string(verb), " [RUN] [--wait T]\n", "\n",
      start ? "Switches recording on in a running 'flopline launch' (or a 'flopline run'\n"
              "stopped by 'flopline stop'): every process of the run opens a capture window.\n"
            : "Switches recording off in a running 'flopline launch' or 'flopline run'\n"
              "(without --capture-range): every process of the run closes its window.\n",
      "Under flopline launch each process writes a file per window, finished a flush\n"
      "interval or two after the window closed; under flopline run, one trace at its\n"
      "end holding all its windows.\n"
      "\n"
      "  RUN       the run's id (or the start of it, printed by flopline launch), or the\n"
      "            pid of flopline launch/run or of any process of it that records;\n"
      "            default: the one run that is live\n"
      "  --wait T  how long to wait for every process to answer (default 10s; 0: do not\n"
      "            wait). A process that has not answered takes the command later\n"
      "  -h, --help  show this help\n"
      "\n"
      "Runs are found under FLOPLINE_RUNS_DIR, else $TMPDIR/flopline-runs-UID (/tmp when\n"
      "TMPDIR is unset): the same as where flopline launch started.\n"
      "\n"
      "Exit status: 0 when the command was sent (each process's answer is listed); 1 when\n"
      "no run fits, the run has ended, is already ",
      start ? "started" : "stopped",
      ",\n"
      "records cudaProfilerApi or nvtx windows, or no process took the command; 2 for a\n"
      "bad command line.\n");
}

int run_start_command(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  return run_control(ControlVerb::kStart, args, out, err);
}

int run_stop_command(std::span<const std::string> args, std::ostream& out, std::ostream& err) {
  return run_control(ControlVerb::kStop, args, out, err);
}

}  // namespace flopline::cli
