// On-demand recording (docs/CAPTURE.md, "On demand"): `flopline start` and `flopline
// stop`, run from another shell, switch the recording of a run started by `flopline
// launch` (or `flopline run`) on and off in every process of it. No network: each run
// has a control directory, RUNS/ID/, made by `flopline run`/`launch` and named to its
// processes by FLOPLINE_CONTROL_DIR:
//
//   run        what the run is: "KEY<TAB>VALUE" lines (id, pid, start, range, ...)
//   commands   the commands, appended under flock(): "SEQ<TAB>start|stop<TAB>NS<TAB>PID"
//   proc-PID   one per recording process, made when its capture starts: "PID<TAB>TICKS<TAB>RANK"
//   acks       each process's answer to each command: "PID<TAB>SEQ<TAB>RESULT<TAB>DETAIL"
//   ended      made when `flopline run`/`launch` returns
//
// A watcher thread in each recording process (src/cupti/control_watcher.cc) polls
// `commands` and feeds CaptureWindow::command(); a process that starts after a command
// takes the last one. Plain C++ (no CUDA): parsing, the run lookup and the command
// decisions are tested on synthetic directories.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flopline/capture/capture_config.h"

namespace flopline::capture {

// Where runs keep their control directories: FLOPLINE_RUNS_DIR, else
// $TMPDIR/flopline-runs-UID, else /tmp/flopline-runs-UID.
std::string runs_directory(const GetEnv& getenv, unsigned uid);

struct RunInfo {
  std::string id;                 // FLOPLINE_RUN_ID
  std::int64_t pid = 0;           // the `flopline run`/`launch` process
  std::uint64_t start_ticks = 0;  // its start time (/proc/PID/stat), against pid reuse; 0 = unknown
  std::string how;                // "run" or "launch"
  std::string capture_range;      // "none", "ondemand", "cudaProfilerApi", "nvtx"
  std::int64_t started_unix_ns = 0;  // wall clock
  std::string command;               // the program's command line, for messages
};
std::string format_run_info(const RunInfo& info);
// Nothing when the id or the pid is missing.
std::optional<RunInfo> parse_run_info(std::string_view text);

enum class ControlVerb : std::uint8_t { kStart, kStop };
const char* to_string(ControlVerb verb);

struct ControlCommand {
  std::uint64_t seq = 0;  // 1, 2, ... in the order written
  ControlVerb verb = ControlVerb::kStart;
  std::int64_t unix_ns = 0;
  std::int64_t from_pid = 0;  // the `flopline start`/`stop` process
};
std::string format_command(const ControlCommand& c);
// Complete lines only (a line still being written waits); malformed lines are skipped.
// `consumed`: the bytes up to the end of the last complete line.
std::vector<ControlCommand> parse_commands(std::string_view text, std::size_t* consumed = nullptr);

struct RunProcess {
  std::int64_t pid = 0;
  std::uint64_t start_ticks = 0;
  std::string rank;  // "" when no rank variable is set
};
std::string format_process(const RunProcess& p);
std::optional<RunProcess> parse_process(std::string_view text);

struct ControlAck {
  std::int64_t pid = 0;
  std::uint64_t seq = 0;
  std::string result;  // to_string(CommandResult): "applied", "already started", ...
  std::string detail;  // "window 2 opened"
};
std::string format_ack(const ControlAck& a);
std::vector<ControlAck> parse_acks(std::string_view text);

// The switch before any command: on for a run without a trigger (it records from the
// start), off for an ondemand one; nothing for ranges that commands do not switch.
std::optional<bool> initial_switch(std::string_view capture_range);
// The switch after `commands`: the last one's verb, else `initial`.
bool switch_after(bool initial, const std::vector<ControlCommand>& commands);

// A run as `flopline start` finds it.
struct RunEntry {
  std::string dir;
  RunInfo info;
  bool live = false;  // its `flopline run`/`launch` is still running
  std::vector<RunProcess> processes;
  std::vector<bool> processes_live;  // beside `processes`
  std::vector<ControlCommand> commands;
};

// Which run a selector names: "" = the one live run; all digits = a pid, of the
// `flopline run`/`launch` process or of any recording process of the run (a live run
// before an ended one); otherwise a run id, or a prefix of exactly one. Nothing, with
// `error` set, when none or several fit. `runs_dir` is named in errors.
const RunEntry* find_run(const std::vector<RunEntry>& runs, std::string_view selector,
                         const std::string& runs_dir, std::string* error);

// Whether `verb` may be sent to `run` now; the error otherwise ("run X has ended",
// "... is already started", "... records cudaProfilerApi windows ...").
bool check_command(const RunEntry& run, ControlVerb verb, std::string* error);

// --- files -----------------------------------------------------------------------------

// The start time of process `pid` in clock ticks since boot (/proc/PID/stat), nothing
// when there is no such process.
std::optional<std::uint64_t> process_start_ticks(std::int64_t pid);
// Whether `pid` runs and, when `start_ticks` is not 0, is the process that started then.
using ProcessProbe = std::function<bool(std::int64_t pid, std::uint64_t start_ticks)>;
bool process_alive(std::int64_t pid, std::uint64_t start_ticks);

// Makes `runs_dir` (0700; it must be a directory of this user, not a link) and
// runs_dir/ID with its `run` file. The run's directory, or nothing with `error` set.
std::optional<std::string> create_run_dir(const std::string& runs_dir, const RunInfo& info,
                                          std::string* error);
void mark_run_ended(const std::string& run_dir);
// Removes the directories of runs that are not live and were last changed more than
// `max_age_s` ago (what on-demand control leaves behind).
void prune_runs(const std::string& runs_dir, const ProcessProbe& probe, std::int64_t max_age_s);

std::optional<RunEntry> read_run(const std::string& run_dir, const ProcessProbe& probe);
// Every run under `runs_dir`, most recently started first.
std::vector<RunEntry> list_runs(const std::string& runs_dir, const ProcessProbe& probe);

// Appends a command with the next sequence number; that number, or nothing with `error`.
std::optional<std::uint64_t> append_command(const std::string& run_dir, ControlVerb verb,
                                            std::int64_t from_pid, std::int64_t unix_ns,
                                            std::string* error);
bool register_process(const std::string& run_dir, const RunProcess& p);
bool append_ack(const std::string& run_dir, const ControlAck& a);
std::vector<ControlAck> read_acks(const std::string& run_dir);
// The bytes of `path` from `offset` on ("" when it cannot be read).
std::string read_file_from(const std::string& path, std::uint64_t offset);

}  // namespace flopline::capture
