// One file per capture window: which window a new file is for, when a window's file is
// complete, its name, and the window metadata it keeps (capture/window_files.h).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "flopline/capture/record_decoder.h"
#include "flopline/capture/streaming_decoder.h"
#include "flopline/capture/window_files.h"
#include "flopline/trace/builder.h"
#include "flopline/trace/chrome_reader.h"

namespace flopline::capture {
namespace {

CaptureWindowRecord window(std::uint32_t index, TimeNs start, TimeNs end, bool open) {
  CaptureWindowRecord w;
  w.index = index;
  w.start = start;
  w.end = end;
  w.open = open;
  w.opened_by = "flopline start";
  w.closed_by = open ? "" : "flopline stop";
  return w;
}

TEST(WindowFiles, NewFileIsForTheNewestWindowNotYetFinished) {
  EXPECT_EQ(window_for_new_file({}, 0), 0u);
  const std::vector<CaptureWindowRecord> one = {window(1, 100, 0, true)};
  EXPECT_EQ(window_for_new_file(one, 0), 1u);
  // Window 1's file is done and no other opened: late events of it have no file.
  const std::vector<CaptureWindowRecord> closed = {window(1, 100, 200, false)};
  EXPECT_EQ(window_for_new_file(closed, 1), 0u);
  const std::vector<CaptureWindowRecord> two = {window(1, 100, 200, false),
                                                window(2, 300, 0, true)};
  EXPECT_EQ(window_for_new_file(two, 1), 2u);
}

TEST(WindowFiles, CompleteOnceClosedAndNothingOpenOrGraceOver) {
  const std::vector<CaptureWindowRecord> open = {window(1, 100, 0, true)};
  EXPECT_FALSE(window_file_complete(open, 1, 10'000, false));
  const std::vector<CaptureWindowRecord> closed = {window(1, 100, 5'000, false)};
  // Its end instant is not written before an append reaches it.
  EXPECT_FALSE(window_file_complete(closed, 1, 4'999, false));
  EXPECT_TRUE(window_file_complete(closed, 1, 5'000, false));
  // Records still open wait for the grace.
  EXPECT_FALSE(window_file_complete(closed, 1, 5'000 + 999, true, 1'000));
  EXPECT_TRUE(window_file_complete(closed, 1, 5'000 + 1'000, true, 1'000));
  // A later window's events need their own file: no more waiting.
  const std::vector<CaptureWindowRecord> two = {window(1, 100, 5'000, false),
                                                window(2, 6'000, 0, true)};
  EXPECT_TRUE(window_file_complete(two, 1, 6'500, true, 1'000'000));
  // A window that is not listed is never complete.
  EXPECT_FALSE(window_file_complete(two, 3, 1'000'000, false));
}

TEST(WindowFiles, PathCarriesTheWindowBeforeTheExtension) {
  EXPECT_EQ(window_file_path("out/t.json", 3), "out/t-window3.json");
  EXPECT_EQ(window_file_path("out/t-rank1.json.gz", 1), "out/t-rank1-window1.json.gz");
  EXPECT_EQ(window_file_path("trace", 2), "trace-window2");
}

TEST(WindowFiles, WindowFilePathsAreKnownByTheirNames) {
  EXPECT_TRUE(is_window_file_path(window_file_path("out/t.json", 12)));
  EXPECT_TRUE(is_window_file_path(window_file_path("out/t-rank1.json.gz", 1)));
  EXPECT_TRUE(is_window_file_path(window_file_path("trace", 2)));
  EXPECT_FALSE(is_window_file_path("out/t.json"));
  EXPECT_FALSE(is_window_file_path("out/t-rank1.json"));
  EXPECT_FALSE(is_window_file_path("out/t-window.json"));
  EXPECT_FALSE(is_window_file_path("out/window3.json"));
}

TEST(WindowFiles, MetadataDescribesOnlyItsWindow) {
  RecordBatch b;
  b.process_id = 10;
  b.capture_range = "ondemand, repeat";
  b.capture_windows = {window(1, 100, 200, false), window(2, 300, 400, false),
                       window(3, 500, 0, true)};
  trace::Trace t = decode_to_trace(b);
  keep_only_capture_window(t, 2);
  std::string list;
  for (const auto& [k, v] : t.extra_top_level) {
    if (k == "captureWindows") list = v;
  }
  // One window object, window 2's.
  EXPECT_EQ(list.find("\"index\""), list.rfind("\"index\"")) << list;
  EXPECT_NE(list.find("\"index\":2"), std::string::npos) << list;
  EXPECT_NE(list.find("\"startNs\":300"), std::string::npos) << list;
  auto info = [&](const std::string& key) {
    for (const auto& [k, v] : t.info) {
      if (k == key) return v;
    }
    return std::string("(none)");
  };
  EXPECT_EQ(info("capture windows"), "1");
  EXPECT_EQ(info("window file"), "window 2 of the run");
}

// One append's events: a slice per name, each `at` + 10 ns long, on one thread, and
// the capture's window metadata as the decoder gives it (every window so far).
trace::Trace append_of(const std::vector<std::pair<std::string, TimeNs>>& slices,
                       const std::vector<CaptureWindowRecord>& windows) {
  RecordBatch b;
  b.process_id = 50;
  b.capture_range = "ondemand, repeat";
  b.capture_windows = windows;
  const trace::Trace decoded = decode_to_trace(b);
  trace::Trace t;
  t.info = decoded.info;
  t.extra_top_level = decoded.extra_top_level;
  trace::TraceBuilder builder(t);
  const std::uint32_t track = builder.track(builder.process(50), 51);
  for (const auto& [name, at] : slices) {
    builder.add_slice(
        track, trace::Slice{at, 10, t.strings.intern(name), t.strings.intern("user_annotation"),
                            trace::kNoArgs, trace::kNone});
  }
  builder.finalize();
  return t;
}

struct Dir {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("flopline-window-files-" + std::to_string(getpid()));
  Dir() {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~Dir() { std::filesystem::remove_all(path); }
};

std::vector<std::string> names_in(const std::string& path) {
  trace::ReadResult r = trace::read_chrome_trace_file(path);
  EXPECT_TRUE(r.ok()) << path;
  std::vector<std::string> out;
  for (const trace::Track& track : r.trace.tracks) {
    for (const auto& row : track.rows) {
      for (const trace::Slice& s : row) {
        if (r.trace.str(s.cat) == "user_annotation") out.emplace_back(r.trace.str(s.name));
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string info_of(const std::string& path, const std::string& key) {
  trace::ReadResult r = trace::read_chrome_trace_file(path);
  for (const auto& [k, v] : r.trace.info) {
    if (k == key) return v;
  }
  return "(none)";
}

// Two windows of a run through the writer: each file holds its window's events, is
// finished once its window is complete (not before), and says what came too late.
TEST(WindowFileWriter, EachWindowGetsItsFileFinishedOnceComplete) {
  const Dir dir;
  std::vector<WindowFile> finished;
  WindowFileWriter::Hooks hooks;
  hooks.path = [&](std::uint32_t w) { return window_file_path((dir.path / "t.json").string(), w); };
  hooks.finished = [&](const WindowFile& f) { finished.push_back(f); };
  WindowFileWriter writer(hooks, 1'000);
  auto meta = [](trace::Trace& t) { t.info.emplace_back("process", "test"); };
  std::string error;

  // Window 1 open: its events go to t-window1.json, not finished.
  std::vector<CaptureWindowRecord> w = {window(1, 100, 0, true)};
  trace::Trace a = append_of({{"a1", 200}, {"a2", 300}}, w);
  ASSERT_TRUE(writer.append(a, w, 400, false, false, 2, 0, meta, &error)) << error;
  EXPECT_TRUE(finished.empty());
  // Closed at 500, but the append reaches 450 only: still open.
  w = {window(1, 100, 500, false)};
  trace::Trace b = append_of({{"a3", 420}}, w);
  ASSERT_TRUE(writer.append(b, w, 450, false, false, 1, 0, meta, &error)) << error;
  EXPECT_TRUE(finished.empty());
  // Past the end with records of the window still held: waits for the grace (1000 ns).
  trace::Trace c = append_of({{"a4", 480}}, w);
  ASSERT_TRUE(writer.append(c, w, 900, true, false, 0, 0, meta, &error)) << error;
  EXPECT_TRUE(finished.empty());
  trace::Trace d = append_of({}, w);
  ASSERT_TRUE(writer.append(d, w, 1'500, true, false, 0, 0, meta, &error)) << error;
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_EQ(finished[0].window, 1u);
  EXPECT_TRUE(finished[0].ok);
  EXPECT_EQ(finished[0].kernels, 3u);
  const std::string first = (dir.path / "t-window1.json").string();
  EXPECT_EQ(finished[0].path, first);
  EXPECT_EQ(names_in(first), (std::vector<std::string>{"a1", "a2", "a3", "a4"}));
  EXPECT_EQ(info_of(first, "window file"), "window 1 of the run");
  EXPECT_EQ(info_of(first, "process"), "test");

  // A record of window 1 that comes after its file was finished has no file.
  trace::Trace late = append_of({{"late", 490}}, w);
  ASSERT_TRUE(writer.append(late, w, 1'600, false, false, 0, 0, meta, &error)) << error;
  EXPECT_EQ(writer.events_without_file(), 1u);

  // Window 2 opens and the run ends inside it: its file is finished by the last append,
  // and says what was left out.
  w = {window(1, 100, 500, false), window(2, 2'000, 0, true)};
  trace::Trace e = append_of({{"b1", 2'100}}, w);
  ASSERT_TRUE(writer.append(e, w, 2'200, false, false, 1, 0, meta, &error)) << error;
  EXPECT_EQ(finished.size(), 1u);
  w.back() = window(2, 2'000, 2'500, false);
  trace::Trace f = append_of({{"b2", 2'300}}, w);
  ASSERT_TRUE(writer.append(f, w, kEndOfRun, true, true, 1, 0, meta, &error)) << error;
  ASSERT_EQ(finished.size(), 2u);
  const std::string second = (dir.path / "t-window2.json").string();
  EXPECT_EQ(finished[1].path, second);
  EXPECT_EQ(names_in(second), (std::vector<std::string>{"b1", "b2"}));
  EXPECT_EQ(info_of(second, "window file"), "window 2 of the run");
  EXPECT_EQ(info_of(second, "events after their window's file was finished").rfind("1 (", 0), 0u);
  EXPECT_EQ(writer.last_finished().window, 2u);
  EXPECT_FALSE(std::filesystem::exists(dir.path / "t.json"));
}

// The next window's opening finishes the file at once, records still held or not.
TEST(WindowFileWriter, ANewWindowFinishesTheLastFile) {
  const Dir dir;
  std::vector<WindowFile> finished;
  WindowFileWriter::Hooks hooks;
  hooks.path = [&](std::uint32_t w) { return window_file_path((dir.path / "t.json").string(), w); };
  hooks.finished = [&](const WindowFile& f) { finished.push_back(f); };
  WindowFileWriter writer(hooks, 1'000'000);
  std::string error;
  std::vector<CaptureWindowRecord> w = {window(1, 100, 0, true)};
  trace::Trace a = append_of({{"a1", 200}}, w);
  ASSERT_TRUE(writer.append(a, w, 300, true, false, 1, 0, {}, &error)) << error;
  w = {window(1, 100, 400, false), window(2, 450, 0, true)};
  trace::Trace b = append_of({{"a2", 350}}, w);
  ASSERT_TRUE(writer.append(b, w, 500, true, false, 1, 0, {}, &error)) << error;
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_EQ(names_in(finished[0].path), (std::vector<std::string>{"a1", "a2"}));
}

}  // namespace
}  // namespace flopline::capture
