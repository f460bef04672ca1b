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
#include <string>
#include <string_view>
#include <vector>

#include "flopline/capture/capture_window.h"
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

}  // namespace flopline::capture
