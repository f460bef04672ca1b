// Capture windows in the trace: an instant per start and end on the thread that caused
// it, the setting and the count in the "flopline" metadata, the list at the top level,
// all surviving a write and a read.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "flopline/capture/record_decoder.h"
#include "flopline/trace/chrome_reader.h"
#include "flopline/trace/chrome_writer.h"
#include "flopline/trace/json_value.h"

namespace flopline::capture {
namespace {

RecordBatch batch_with_windows() {
  RecordBatch b;
  b.process_id = 4000;
  KernelRecord k;
  k.name = "step_kernel";
  k.start = 1500;
  k.end = 1600;
  k.correlation_id = 1;
  b.kernels.push_back(k);
  b.capture_range = "cudaProfilerApi, repeat";
  CaptureWindowRecord first;
  first.index = 1;
  first.start = 1000;
  first.end = 2000;
  first.open = false;
  first.opened_by = "cudaProfilerStart";
  first.closed_by = "cudaProfilerStop";
  first.open_thread = 4001;
  first.close_thread = 4002;
  b.capture_windows.push_back(first);
  CaptureWindowRecord second;
  second.index = 2;
  second.start = 3000;
  second.opened_by = "cudaProfilerStart";
  second.open_thread = 4001;  // still open: no end yet
  b.capture_windows.push_back(second);
  return b;
}

struct Seen {
  std::string name;
  trace::TimeNs ts;
  std::int64_t tid;
  std::string args;
};

std::vector<Seen> window_instants(const trace::Trace& t) {
  std::vector<Seen> out;
  for (const trace::Track& track : t.tracks) {
    for (const trace::Instant& i : track.instants) {
      const std::string name(t.str(i.name));
      if (name.rfind("capture window", 0) != 0) continue;
      EXPECT_EQ(t.str(i.cat), "flopline");
      EXPECT_EQ(i.scope, trace::InstantScope::kProcess);
      out.push_back({name, i.ts, track.tid, std::string(t.args.json(i.args))});
    }
  }
  std::sort(out.begin(), out.end(), [](const Seen& a, const Seen& b) { return a.ts < b.ts; });
  return out;
}

// `threads`: whether instants are still on their threads' tracks (a reader puts
// process-scoped instants on the process's own track).
void check(const trace::Trace& t, bool threads) {
  const std::vector<Seen> seen = window_instants(t);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].name, "capture window start");
  EXPECT_EQ(seen[0].ts, 1000);
  if (threads) {
    EXPECT_EQ(seen[0].tid, 4001);
  }
  EXPECT_EQ(trace::json_int(*trace::json_member(seen[0].args, "capture window")), 1);
  EXPECT_EQ(trace::json_string(*trace::json_member(seen[0].args, "reason")), "cudaProfilerStart");
  EXPECT_EQ(seen[1].name, "capture window end");
  EXPECT_EQ(seen[1].ts, 2000);
  if (threads) {
    EXPECT_EQ(seen[1].tid, 4002);
  }
  EXPECT_EQ(trace::json_string(*trace::json_member(seen[1].args, "reason")), "cudaProfilerStop");
  EXPECT_EQ(seen[2].name, "capture window start");
  EXPECT_EQ(trace::json_int(*trace::json_member(seen[2].args, "capture window")), 2);

  auto info = [&](const std::string& key) -> std::string {
    for (const auto& [k, v] : t.info) {
      if (k == key) return v;
    }
    return "(none)";
  };
  EXPECT_EQ(info("capture range"), "cudaProfilerApi, repeat");
  EXPECT_EQ(info("capture windows"), "2");

  std::string list;
  for (const auto& [k, v] : t.extra_top_level) {
    if (k == "captureWindows") list = v;
  }
  ASSERT_FALSE(list.empty());
  EXPECT_NE(list.find(R"("index":1)"), std::string::npos) << list;
  EXPECT_NE(list.find(R"("startNs":1000)"), std::string::npos) << list;
  EXPECT_NE(list.find(R"("endNs":2000)"), std::string::npos) << list;
  EXPECT_NE(list.find(R"("closedBy":"cudaProfilerStop")"), std::string::npos) << list;
  EXPECT_NE(list.find(R"("endNs":null)"), std::string::npos) << list;  // the open one
}

TEST(CaptureWindowTrace, InstantsAndMetadata) {
  check(decode_to_trace(batch_with_windows()), true);
}

TEST(CaptureWindowTrace, SurviveWritingAndReading) {
  const std::string path = ::testing::TempDir() + "flopline_capture_windows.json";
  const trace::WriteResult w =
      trace::write_chrome_trace(decode_to_trace(batch_with_windows()), path);
  ASSERT_TRUE(w.ok) << w.error;
  trace::ReadResult r = trace::read_chrome_trace_file(path);
  ASSERT_TRUE(r.ok());
  check(r.trace, false);
  std::remove(path.c_str());
}

TEST(CaptureWindowTrace, AWholeRunSaysNothingAboutWindows) {
  RecordBatch b = batch_with_windows();
  b.capture_range.clear();
  b.capture_windows.clear();
  const trace::Trace t = decode_to_trace(b);
  EXPECT_TRUE(window_instants(t).empty());
  for (const auto& [k, v] : t.info) EXPECT_NE(k.rfind("capture", 0), 0u) << k;
  for (const auto& [k, v] : t.extra_top_level) EXPECT_NE(k, "captureWindows");
}

TEST(CaptureWindowTrace, NoWindowOpenedIsSaid) {
  RecordBatch b = batch_with_windows();
  b.capture_windows.clear();
  const trace::Trace t = decode_to_trace(b);
  EXPECT_TRUE(window_instants(t).empty());
  bool said = false;
  for (const auto& [k, v] : t.info) said = said || (k == "capture windows" && v == "0");
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace flopline::capture
