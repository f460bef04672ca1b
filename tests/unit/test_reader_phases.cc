// Each Chrome-trace phase turned into the model, on small hand-written traces whose
// expected result is worked out in the comments.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "flopline/trace/chrome_reader.h"
#include "reader_test_util.h"

namespace flopline::trace {
namespace {

using test::has_warning;
using test::skipped_for;
ReadResult read(std::string_view text) {
  return test::read_ok(text);
}

struct Seen {
  std::string name;
  TimeNs start, dur;
  std::uint32_t track;
  bool operator==(const Seen&) const = default;
};

// All slices as (name, start, dur, track), sorted by start then name.
std::vector<Seen> slices(const Trace& t) {
  std::vector<Seen> out;
  for (std::uint32_t i = 0; i < t.tracks.size(); ++i) {
    for (const auto& row : t.tracks[i].rows) {
      for (const Slice& s : row) out.push_back(Seen{std::string(t.str(s.name)), s.start, s.dur, i});
    }
  }
  std::sort(out.begin(), out.end(), [](const Seen& a, const Seen& b) {
    return a.start != b.start ? a.start < b.start : a.name < b.name;
  });
  return out;
}

TEST(ReaderPhases, CompleteEvents) {
  ReadResult r = read(R"([{"ph":"X","ts":1,"dur":2,"name":"a"},{"ph":"X","ts":5,"name":"no dur"},)"
                      R"({"ph":"X","ts":9,"dur":-4,"name":"neg"}])");
  const auto s = slices(r.trace);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].dur, 2000);
  EXPECT_EQ(s[1].dur, 0);
  EXPECT_EQ(s[2].dur, 0);
  EXPECT_TRUE(has_warning(r, "1 X events with a negative dur"));
  EXPECT_EQ(r.trace.report.events_loaded, 3u);
}

TEST(ReaderPhases, BeginEndStacksPerThread) {
  // Thread 1: A[1,10] holds B[2,4]; the E at 4 is named "x" (mismatch, closes B).
  // Thread 2: C opens at 3 and never closes: closed at the last timestamp, 12.
  // The E on thread 3 has no B.
  ReadResult r =
      read(R"([{"ph":"B","ts":1,"name":"A","tid":1},{"ph":"B","ts":2,"name":"B","tid":1},)"
           R"({"ph":"B","ts":3,"name":"C","tid":2},{"ph":"E","ts":4,"name":"x","tid":1},)"
           R"({"ph":"E","ts":10,"tid":1,"args":{"r":1}},{"ph":"E","ts":11,"tid":3},)"
           R"({"ph":"i","ts":12,"name":"last","tid":1}])");
  const auto s = slices(r.trace);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].name, "A");
  EXPECT_EQ(s[0].dur, 9000);
  EXPECT_EQ(s[1].name, "B");
  EXPECT_EQ(s[1].dur, 2000);
  EXPECT_EQ(s[2].name, "C");
  EXPECT_EQ(s[2].dur, 9000);
  EXPECT_TRUE(has_warning(r, "1 B events never closed"));
  EXPECT_TRUE(has_warning(r, "1 E events whose name differs"));
  EXPECT_EQ(skipped_for(r, "E with no open B on its thread"), 1u);
  // B and E of a pair both count as loaded: 2 + 2 + 1 (C) + 1 instant.
  EXPECT_EQ(r.trace.report.events_loaded, 6u);
  // A had no args; its E's args are kept.
  bool a_has_args = false;
  for (const Track& t : r.trace.tracks) {
    for (const auto& row : t.rows) {
      for (const Slice& sl : row) a_has_args |= r.trace.str(sl.name) == "A" && sl.args != kNoArgs;
    }
  }
  EXPECT_TRUE(a_has_args);
}

TEST(ReaderPhases, InstantScopes) {
  ReadResult r = read(R"([{"ph":"i","ts":1,"name":"t","pid":4,"tid":5,"s":"t"},)"
                      R"({"ph":"I","ts":2,"name":"p","pid":4,"tid":5,"s":"p"},)"
                      R"({"ph":"i","ts":3,"name":"g","pid":4,"tid":5,"s":"g"},)"
                      R"({"ph":"i","ts":4,"name":"default","pid":4,"tid":5}])");
  for (const Track& t : r.trace.tracks) {
    for (const Instant& i : t.instants) {
      const std::string_view name = r.trace.str(i.name);
      if (name == "t" || name == "default") {
        EXPECT_EQ(t.tid, 5);
        EXPECT_EQ(i.scope, InstantScope::kThread);
      } else {
        EXPECT_EQ(t.tid, 0) << name;  // process and global instants: the pid's tid-0 track
        EXPECT_EQ(i.scope, name == "p" ? InstantScope::kProcess : InstantScope::kGlobal);
      }
    }
  }
  EXPECT_EQ(r.trace.instant_count(), 4u);
}

TEST(ReaderPhases, Counters) {
  ReadResult r =
      read(R"([{"ph":"C","ts":1,"name":"mem","id":7,"args":{"used":10,"free":"20","tag":"x"}},)"
           R"({"ph":"C","ts":2,"name":"mem","id":7,"args":{"used":11}},)"
           R"({"ph":"C","ts":3,"name":"cpu","args":{"load":0.5}},)"
           R"({"ph":"C","ts":4,"name":"none","args":{"tag":"x"}}])");
  ASSERT_EQ(r.trace.counters.size(), 3u);
  std::vector<std::string> keys;
  for (const CounterSeries& c : r.trace.counters) {
    keys.push_back(std::string(r.trace.str(c.name)) + "/" + std::string(r.trace.str(c.key)) + "/" +
                   std::to_string(c.points.size()));
  }
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys, (std::vector<std::string>{"cpu/load/1", "mem[7]/free/1", "mem[7]/used/2"}));
  EXPECT_EQ(skipped_for(r, "counter (C) with no numeric args"), 1u);
}

TEST(ReaderPhases, MetadataAppliedAndCounted) {
  ReadResult r =
      read(R"([{"ph":"M","name":"process_name","pid":3,"args":{"name":"trainer"}},)"
           R"({"ph":"M","name":"process_labels","pid":3,"args":{"labels":"CPU"}},)"
           R"({"ph":"M","name":"process_sort_index","pid":3,"args":{"sort_index":-5}},)"
           R"({"ph":"M","name":"thread_name","pid":3,"tid":"9","args":{"name":"main"}},)"
           R"({"ph":"M","name":"thread_sort_index","pid":3,"tid":9,"args":{"sort_index":2}},)"
           R"({"ph":"M","name":"num_cpus","pid":3,"args":{"number":8}},)"
           R"({"ph":"M","name":"process_name","pid":3,"args":{"name":"trainer"}},)"
           R"({"ph":"X","ts":1,"name":"a","pid":3,"tid":9}])");
  EXPECT_EQ(r.trace.report.events_metadata, 7u);
  ASSERT_EQ(r.trace.processes.size(), 1u);
  const Process& p = r.trace.processes[0];
  EXPECT_EQ(r.trace.str(p.name), "trainer");
  EXPECT_EQ(r.trace.str(p.labels), "CPU");
  EXPECT_EQ(p.sort_index, -5);
  ASSERT_EQ(r.trace.tracks.size(), 1u);
  EXPECT_EQ(r.trace.str(r.trace.tracks[0].name), "main");
  EXPECT_EQ(r.trace.tracks[0].sort_index, 2);
  EXPECT_EQ(r.trace.tracks[0].slice_count(), 1u);
}

TEST(ReaderPhases, GpuCategoriesMarkStreams) {
  ReadResult r =
      read(R"([{"ph":"X","ts":1,"dur":1,"name":"k","cat":"kernel","pid":0,"tid":7},)"
           R"({"ph":"X","ts":1,"dur":1,"name":"c","cat":"gpu_memcpy","pid":0,"tid":8},)"
           R"({"ph":"X","ts":1,"dur":1,"name":"op","cat":"cpu_op","pid":10,"tid":10},)"
           R"({"ph":"f","ts":1,"id":1,"name":"ac2g","cat":"ac2g","pid":0,"tid":7,"bp":"e"}])");
  for (const Track& t : r.trace.tracks) {
    const bool gpu = r.trace.processes[t.process].pid == 0;
    EXPECT_EQ(t.kind == TrackKind::kGpuStream, gpu) << t.tid;
    EXPECT_EQ(r.trace.processes[t.process].is_gpu, gpu);
  }
  EXPECT_EQ(r.trace.tracks.size(), 3u);  // the flow end shares the kernel's stream track
}

TEST(ReaderPhases, FlowsV1ChainsAndBinding) {
  // s(1) -> t(5) -> f(9): two arrows. The f has no bp: it binds to the next slice.
  // Kineto-style: f before s in the file, bp e: one arrow to the enclosing kernel.
  ReadResult r = read(
      R"([{"ph":"X","ts":0,"dur":3,"name":"post","tid":1},{"ph":"X","ts":4,"dur":3,"name":"mid","tid":2},)"
      R"({"ph":"X","ts":10,"dur":1,"name":"run","tid":3},)"
      R"({"ph":"s","ts":1,"id":"0x10","cat":"task","name":"f","tid":1},)"
      R"({"ph":"t","ts":5,"id":"0x10","cat":"task","name":"f","tid":2},)"
      R"({"ph":"f","ts":9,"id":"0x10","cat":"task","name":"f","tid":3},)"
      R"({"ph":"X","ts":20,"dur":5,"name":"kernel","cat":"kernel","pid":0,"tid":7},)"
      R"({"ph":"f","ts":21,"id":16,"cat":"ac2g","name":"ac2g","pid":0,"tid":7,"bp":"e"},)"
      R"({"ph":"X","ts":15,"dur":2,"name":"launch","pid":1,"tid":1},)"
      R"({"ph":"s","ts":16,"id":16,"cat":"ac2g","name":"ac2g","pid":1,"tid":1},)"
      R"({"ph":"f","ts":30,"id":99,"cat":"ac2g","name":"ac2g","pid":0,"tid":7,"bp":"e"}])");
  ASSERT_EQ(r.trace.flows.size(), 3u);
  std::vector<std::string> arrows;
  for (const Flow& f : r.trace.flows) {
    ASSERT_TRUE(f.joined());
    arrows.push_back(
        std::string(r.trace.str(r.trace.tracks[f.from.slice.track].at(f.from.slice).name)) + "->" +
        std::string(r.trace.str(r.trace.tracks[f.to.slice.track].at(f.to.slice).name)) +
        (f.to.enclosing ? "" : " (next)"));
  }
  std::sort(arrows.begin(), arrows.end());
  EXPECT_EQ(arrows, (std::vector<std::string>{"launch->kernel", "mid->run (next)", "post->mid"}));
  EXPECT_EQ(skipped_for(r, "flow step or end (t/f) with no start"), 1u);
  // s, t, f, s, f loaded; the orphan f skipped.
  EXPECT_EQ(r.trace.report.events_loaded, 5u + 5u);
}

TEST(ReaderPhases, FlowIdsReusedWhilePendingAreFirstInFirstOut) {
  ReadResult r = read(
      R"([{"ph":"X","ts":0,"dur":10,"name":"a","tid":1},{"ph":"X","ts":20,"dur":10,"name":"b","tid":2},)"
      R"({"ph":"s","ts":1,"id":5,"cat":"c","tid":1},{"ph":"s","ts":2,"id":5,"cat":"c","tid":1},)"
      R"({"ph":"f","ts":21,"id":5,"cat":"c","tid":2,"bp":"e"},{"ph":"f","ts":22,"id":5,"cat":"c","tid":2,"bp":"e"},)"
      R"({"ph":"s","ts":3,"id":5,"cat":"other","tid":1}])");
  ASSERT_EQ(r.trace.flows.size(), 2u);
  std::vector<TimeNs> from;
  for (const Flow& f : r.trace.flows) from.push_back(f.from.ts);
  std::sort(from.begin(), from.end());
  EXPECT_EQ(from, (std::vector<TimeNs>{1000, 2000}));
  EXPECT_EQ(skipped_for(r, "flow start (s) with no step or end"),
            1u);  // different cat, different flow
}

TEST(ReaderPhases, FlowsWithId2) {
  ReadResult r = read(
      R"([{"ph":"X","ts":0,"dur":10,"name":"a","pid":1},{"ph":"X","ts":0,"dur":10,"name":"b","pid":2},)"
      R"({"ph":"s","ts":1,"id2":{"local":"0x1"},"cat":"c","pid":1},)"
      R"({"ph":"f","ts":2,"id2":{"local":"0x1"},"cat":"c","pid":2,"bp":"e"},)"
      R"({"ph":"s","ts":3,"id2":{"global":"0x1"},"cat":"c","pid":1},)"
      R"({"ph":"f","ts":4,"id2":{"global":"0x1"},"cat":"c","pid":2,"bp":"e"}])");
  // Local ids are per process: only the global pair crosses from pid 1 to pid 2.
  ASSERT_EQ(r.trace.flows.size(), 1u);
  EXPECT_EQ(r.trace.flows[0].from.ts, 3000);
  EXPECT_EQ(skipped_for(r, "flow start (s) with no step or end"), 1u);
  EXPECT_EQ(skipped_for(r, "flow step or end (t/f) with no start"), 1u);
}

TEST(ReaderPhases, FlowsV2OnSlices) {
  ReadResult r =
      read(R"([{"ph":"X","ts":0,"dur":5,"name":"out","tid":1,"bind_id":"0xff","flow_out":true},)"
           R"({"ph":"B","ts":10,"name":"in","tid":2,"bind_id":"0xff","flow_in":true},)"
           R"({"ph":"E","ts":12,"tid":2}])");
  ASSERT_EQ(r.trace.flows.size(), 1u);
  const Flow& f = r.trace.flows[0];
  ASSERT_TRUE(f.joined());
  EXPECT_EQ(f.id, 0xffu);
  EXPECT_EQ(r.trace.str(r.trace.tracks[f.to.slice.track].at(f.to.slice).name), "in");
}

TEST(ReaderPhases, NestableAsync) {
  // Outer [1,10] holds inner [2,5] (same id, a stack); n at 3 is an instant. Another
  // id opens at 4 and never ends: closed at the last timestamp, 11. The e at 11 of
  // pid 2 matches nothing: ids are per process.
  ReadResult r = read(R"([{"ph":"b","ts":1,"id":"0x1","cat":"net","name":"outer","pid":1},)"
                      R"({"ph":"b","ts":2,"id":"0x1","cat":"net","name":"inner","pid":1},)"
                      R"({"ph":"n","ts":3,"id":"0x1","cat":"net","name":"mark","pid":1},)"
                      R"({"ph":"b","ts":4,"id":"0x2","cat":"net","name":"open","pid":1},)"
                      R"({"ph":"e","ts":10,"id":"0x1","cat":"net","name":"outer","pid":1},)"
                      R"({"ph":"e","ts":5,"id":"0x1","cat":"net","name":"inner","pid":1},)"
                      R"({"ph":"e","ts":11,"id":"0x1","cat":"net","name":"outer","pid":2}])");
  const auto s = slices(r.trace);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0], (Seen{"outer", 1000, 9000, s[0].track}));
  EXPECT_EQ(s[1], (Seen{"inner", 2000, 3000, s[0].track}));
  EXPECT_EQ(s[2].name, "open");
  EXPECT_EQ(s[2].dur, 7000);  // closed at 11, the last timestamp seen
  const Track& t = r.trace.tracks[s[0].track];
  EXPECT_EQ(t.kind, TrackKind::kAsync);
  EXPECT_EQ(r.trace.str(t.name), "net");
  ASSERT_EQ(t.instants.size(), 1u);
  EXPECT_EQ(t.instants[0].phase, 'n');
  EXPECT_TRUE(has_warning(r, "1 async spans never closed"));
  EXPECT_EQ(skipped_for(r, "async end (e/F) with no open begin"), 1u);
}

TEST(ReaderPhases, LegacyAsyncAcrossProcesses) {
  ReadResult r =
      read(R"([{"ph":"F","ts":7,"id":"a","cat":"r","name":"job","pid":3},)"
           R"({"ph":"S","ts":1,"id":"a","cat":"r","name":"job","pid":2},)"
           R"({"ph":"T","ts":4,"id":"a","cat":"r","name":"job","pid":2,"args":{"step":"s1"}}])");
  const auto s = slices(r.trace);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].start, 1000);
  EXPECT_EQ(s[0].dur, 6000);
  EXPECT_EQ(r.trace.processes[r.trace.tracks[s[0].track].process].pid, 2);
  EXPECT_EQ(r.trace.instant_count(), 1u);
}

TEST(ReaderPhases, ObjectsSamplesMarksAndUnknown) {
  ReadResult r =
      read(R"([{"ph":"N","ts":1,"id":"0x1","name":"obj","pid":1,"tid":4},)"
           R"({"ph":"O","ts":2,"id":"0x1","name":"obj","pid":1,"tid":4,"args":{"snapshot":[1,2]}},)"
           R"({"ph":"D","ts":3,"id":"0x1","name":"obj","pid":1,"tid":4},)"
           R"({"ph":"P","ts":4,"name":"sample","pid":1,"tid":4},)"
           R"({"ph":"R","ts":5,"name":"mark","pid":1,"tid":4},)"
           R"({"ph":"c","ts":6,"name":"sync","pid":1,"tid":4},)"
           R"({"ph":"Z","ts":7,"pid":1},{"ph":"XX","ts":7,"pid":1},{"ts":8}])");
  std::string phases;
  for (const Track& t : r.trace.tracks) {
    for (const Instant& i : t.instants) {
      phases += i.phase;
      EXPECT_EQ(t.tid, (i.phase == 'P' || i.phase == 'R') ? 4 : 0);
    }
  }
  std::sort(phases.begin(), phases.end());
  EXPECT_EQ(phases, "DNOPR");
  EXPECT_EQ(skipped_for(r, "clock sync (c) not used"), 1u);
  EXPECT_EQ(skipped_for(r, "unknown phase 'Z'"), 1u);
  EXPECT_EQ(skipped_for(r, "unknown phase"), 1u);
  EXPECT_EQ(skipped_for(r, "no \"ph\" (phase)"), 1u);
  EXPECT_EQ(r.trace.report.events_total, 9u);
  EXPECT_EQ(r.trace.report.events_loaded, 5u);
}

TEST(ReaderPhases, MissingTimestamp) {
  ReadResult r = read(
      R"([{"ph":"X","name":"a"},{"ph":"X","ts":"soon","name":"b"},{"ph":"X","ts":1,"name":"c"}])");
  EXPECT_EQ(skipped_for(r, "\"ts\" missing or not a number"), 2u);
  EXPECT_EQ(r.trace.slice_count(), 1u);
}

}  // namespace
}  // namespace flopline::trace
