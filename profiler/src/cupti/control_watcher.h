// On-demand recording in a recording process (docs/CAPTURE.md, "On demand"): a thread
// that watches the run's control directory (FLOPLINE_CONTROL_DIR, run_control.h) for
// the commands `flopline start` and `flopline stop` append, hands each to
// CaptureWindowControl::command(), and answers it in the directory's `acks`. It notes
// the process in the directory first (proc-PID), so the commands can name it by pid and
// wait for its answer, and takes the last command given before it started (a rank
// that starts CUDA after `flopline start` records at once).
//
// It polls: one stat() of the command file every 100 ms, which works on any file system
// and costs nothing the program would notice.
#pragma once

#include <optional>
#include <string>

namespace flopline::cupti {

// Starts the watcher for this process, once per process (a second call does nothing).
// `say` reports a problem on stderr (the control directory is gone or unwritable).
void start_control_watcher(const std::string& control_dir, const std::optional<std::string>& rank,
                           void (*say)(const std::string&));

}  // namespace flopline::cupti
