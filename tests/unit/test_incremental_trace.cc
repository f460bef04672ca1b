// The trace file written while a program runs: after every append the file on disk is
// a readable trace holding exactly the events that ended up to then (the same file a
// kill right after that append leaves), in plain JSON and as concatenated gzip members.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "flopline/trace/builder.h"
#include "flopline/trace/chrome_reader.h"
#include "flopline/trace/incremental_trace.h"

namespace flopline::trace {
namespace {

// Three slices on a CPU thread (ending at 2,000,020, 2,000,040 and 2,000,060 ns), one
// still-open range, a counter point and a flow between the first two.
Trace sample() {
  Trace t;
  TraceBuilder b(t);
  const std::uint32_t p = b.process(42);
  const std::uint32_t th = b.track(p, 7);
  const TimeNs base = 2000000;
  const StringId cat = t.strings.intern("kernel");
  b.add_slice(th, Slice{base + 10, 10, t.strings.intern("first"), cat, kNoArgs, kNone});
  b.add_slice(th, Slice{base + 30, 10, t.strings.intern("second"), cat, kNoArgs, kNone});
  b.add_slice(th, Slice{base + 50, 10, t.strings.intern("third"), cat, kNoArgs, kNone});
  b.add_slice(th, Slice{base, 100, t.strings.intern("open range"),
                        t.strings.intern("user_annotation"), kNoArgs, kNone});
  b.add_counter_point(
      b.counter_series(p, t.strings.intern("GPU metrics"), t.strings.intern("SM active %"),
                       t.strings.intern("gpu_metrics")),
      base + 35, 50.0);
  Flow f;
  f.id = 9;
  f.name = f.cat = t.strings.intern("ac2g");
  f.from = {th, base + 12, true, {}};
  f.to = {th, base + 31, true, {}};
  b.add_flow(f);
  b.finalize();
  return t;
}

std::size_t slices_named(const Trace& t, std::string_view name) {
  std::size_t n = 0;
  for (const Track& tr : t.tracks) {
    for (const auto& row : tr.rows) {
      for (const Slice& s : row) n += t.str(s.name) == name;
    }
  }
  return n;
}

std::string fresh_path(const std::string& name) {
  const auto p = std::filesystem::temp_directory_path() /
                 ("flopline-incr-" + std::to_string(getpid()) + "-" + name);
  std::filesystem::remove(p);
  return p.string();
}

// Reads `path` as it is on disk now (what a kill at this moment leaves).
Trace read_now(const std::string& path) {
  ReadResult r = read_chrome_trace_file(path);
  EXPECT_TRUE(r.ok()) << path << ": " << (r.error ? r.error->message() : "");
  return std::move(r.trace);
}

void check_appends(const std::string& path) {
  const Trace t = sample();
  const std::function<bool(const Slice&)> closed = [&t](const Slice& s) {
    return t.str(s.name) != "open range";
  };
  IncrementalTraceFile file(path);
  std::string error;
  ASSERT_TRUE(file.append(t, 2000000 + 5, closed, &error)) << error;  // nothing has ended yet
  EXPECT_FALSE(file.started());
  EXPECT_FALSE(std::filesystem::exists(path));

  ASSERT_TRUE(file.append(t, 2000000 + 25, closed, &error)) << error;
  Trace now = read_now(path);
  EXPECT_EQ(slices_named(now, "first"), 1u);
  EXPECT_EQ(slices_named(now, "second"), 0u);
  EXPECT_EQ(now.counter_point_count(), 0u);
  EXPECT_EQ(now.flows.size(), 0u);  // its far end is not in yet

  ASSERT_TRUE(file.append(t, 2000000 + 45, closed, &error)) << error;
  now = read_now(path);
  EXPECT_EQ(slices_named(now, "first"), 1u);  // never written twice
  EXPECT_EQ(slices_named(now, "second"), 1u);
  EXPECT_EQ(slices_named(now, "third"), 0u);
  EXPECT_EQ(now.counter_point_count(), 1u);
  ASSERT_EQ(now.flows.size(), 1u);
  EXPECT_TRUE(now.flows[0].joined());

  ASSERT_TRUE(file.append(t, 2000000 + 1000, closed, &error)) << error;
  now = read_now(path);
  EXPECT_EQ(slices_named(now, "third"), 1u);
  EXPECT_EQ(slices_named(now, "open range"), 0u);  // refused by `keep` while open
  EXPECT_EQ(now.slice_count(), 3u);
  EXPECT_EQ(file.events(), 3u + 1u + 2u);  // slices, the counter point, the flow's two ends
  // Times survive as absolute nanoseconds.
  for (const Track& tr : now.tracks) {
    for (const auto& row : tr.rows) {
      for (const Slice& s : row) {
        if (now.str(s.name) == "first") {
          EXPECT_EQ(s.start, 2000010);
          EXPECT_EQ(s.dur, 10);
        }
      }
    }
  }
  std::filesystem::remove(path);
}

TEST(IncrementalTrace, EveryAppendLeavesAReadableTraceOfWhatEnded) {
  check_appends(fresh_path("t.json"));
}

TEST(IncrementalTrace, GzipMembersConcatenateIntoOneReadableFile) {
  check_appends(fresh_path("t.json.gz"));
}

TEST(IncrementalTrace, AFileThatCannotBeCreatedSaysWhy) {
  const Trace t = sample();
  IncrementalTraceFile file("/nonexistent-dir-for-flopline/t.json");
  std::string error;
  EXPECT_FALSE(file.append(t, 2000000 + 1000, {}, &error));
  EXPECT_NE(error.find("/nonexistent-dir-for-flopline/t.json"), std::string::npos) << error;
}

}  // namespace
}  // namespace flopline::trace
