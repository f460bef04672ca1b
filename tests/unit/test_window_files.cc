// One file per capture window: which window a new file is for, when a window's file is
// complete, its name, and the window metadata it keeps (capture/window_files.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "flopline/capture/record_decoder.h"
#include "flopline/capture/window_files.h"

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

}  // namespace
}  // namespace flopline::capture
