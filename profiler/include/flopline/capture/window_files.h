// One file per capture window (docs/CAPTURE.md, "On demand"): a process of an ondemand
// run (`flopline launch`) writes each window's events to a file of its own, finished
// while the program runs on, so the user has the window's trace after `flopline stop`
// without waiting for the program to end.
//
// The periodic writer appends a window's events to its file as they become final and
// finishes the file (metadata and all) at the first append that window_file_complete()
// says holds the last of them. Outside windows nothing is recorded, so every event that
// becomes final between a window's opening and that append is the window's, apart from
// GPU records that come later than the grace (they are counted and left out).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "flopline/capture/capture_window.h"
#include "flopline/trace/incremental_trace.h"
#include "flopline/trace/model.h"

namespace flopline::capture {

// How long after a window closed the file waits for records still on their way from the
// GPU (the streaming decoder's pending limit) before it is finished without them.
inline constexpr TimeNs kWindowFileGraceNs = 10'000'000'000;

// The window a file started now belongs to: the newest window, unless it is
// `last_finished` (its file is done: later events of it have no file) or there is none;
// then 0.
std::uint32_t window_for_new_file(const std::vector<CaptureWindowRecord>& windows,
                                  std::uint32_t last_finished);

// Whether the file of window `index` holds everything of it after an append that wrote
// the events final at `upto`: the window has closed at or before `upto` (its end instant
// is in), and the decoder holds nothing open any more (`decoder_holds_open` false), or
// `grace_ns` has passed since the close, or a later window has opened (its events need
// their own file).
bool window_file_complete(const std::vector<CaptureWindowRecord>& windows, std::uint32_t index,
                          TimeNs upto, bool decoder_holds_open,
                          TimeNs grace_ns = kWindowFileGraceNs);

// The path of window `index`'s file: "t.json" -> "t-window3.json" (before .json.gz too).
std::string window_file_path(const std::string& path, std::uint32_t index);

// Whether `path` names a window's file: it ends in "-windowN" before ".json" or
// ".json.gz" (or at the end). Such files keep their names at the end of a run.
bool is_window_file_path(std::string_view path);

// Makes `t`'s capture-window metadata (the top-level captureWindows list and the
// "capture windows" count) describe window `index` alone, the one its file holds.
void keep_only_capture_window(trace::Trace& t, std::uint32_t index);

// A window's file once finished.
struct WindowFile {
  std::uint32_t window = 0;
  std::string path;
  bool ok = false;
  std::string error;  // why it could not be written
  std::uint64_t events = 0;
  std::uint64_t kernels = 0;  // kernel records taken while it was open
  std::uint64_t dropped_records = 0;
};

// The files of the windows, one after the other, from the appends of a streaming
// capture (the periodic writer acts on it; the decisions are the functions above).
class WindowFileWriter {
 public:
  struct Hooks {
    std::function<std::string(std::uint32_t)> path;  // window N's file (claimed by the caller)
    // After an append that left the file open: its path, its events, how far they
    // reach after its first event (ns).
    std::function<void(const std::string&, std::uint64_t, TimeNs)> appended;
    std::function<void(const WindowFile&)> finished;
  };
  explicit WindowFileWriter(Hooks hooks, TimeNs grace_ns = kWindowFileGraceNs);
  ~WindowFileWriter();
  WindowFileWriter(const WindowFileWriter&) = delete;
  WindowFileWriter& operator=(const WindowFileWriter&) = delete;

  // One append: `t` holds the events final at `upto` (`last`: the end of the run,
  // everything); `windows` the capture's windows now; `holds_open` whether records of
  // events still open are held (NVTX ranges aside); `kernels` the kernel records this
  // append took; `time_base` the run's (times are written relative to it). Writes `t`
  // to the open window's file, or starts the newest window's, and finishes the file
  // once its window is complete, with `metadata` adding the process's "flopline"
  // metadata first. Events with no file to go to (late records of a finished window,
  // before the next opens) are counted and said in the next file. False, with `error`,
  // when a file could not be written; nothing is written after that.
  bool append(trace::Trace& t, const std::vector<CaptureWindowRecord>& windows, TimeNs upto,
              bool holds_open, bool last, std::uint64_t kernels, TimeNs time_base,
              const std::function<void(trace::Trace&)>& metadata, std::string* error);

  // The file last finished (window 0 when none).
  const WindowFile& last_finished() const { return last_; }
  std::uint64_t events_without_file() const { return events_without_file_; }

 private:
  Hooks hooks_;
  TimeNs grace_ns_;
  std::unique_ptr<trace::IncrementalTraceFile> file_;
  std::uint32_t file_window_ = 0;
  std::uint64_t file_kernels_ = 0;
  TimeNs first_event_ = INT64_MAX;
  WindowFile last_;
  std::uint64_t events_without_file_ = 0;
  bool failed_ = false;
};

}  // namespace flopline::capture
