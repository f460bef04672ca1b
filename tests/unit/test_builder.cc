// The trace model core: string interning, row layout of slices, track keys, flows.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "flopline/trace/builder.h"

namespace flopline::trace {
namespace {

Slice make(TimeNs start, TimeNs dur, StringId name = 1) {
  return Slice{start, dur, name, 0};
}

// Every row sorted by start and free of overlaps; the total count unchanged.
void expect_rows_valid(const std::vector<std::vector<Slice>>& rows, std::size_t expected_total) {
  std::size_t total = 0;
  for (const auto& row : rows) {
    total += row.size();
    for (std::size_t i = 1; i < row.size(); ++i) {
      EXPECT_LE(row[i - 1].end(), row[i].start) << "overlap in a row";
    }
  }
  EXPECT_EQ(total, expected_total);
}

TEST(StringTable, InternsOnceAndKeepsAnyBytes) {
  StringTable t;
  EXPECT_EQ(t.intern(""), 0u);
  const std::string nul("a\0b", 3);
  const StringId a = t.intern("kernel");
  const StringId b = t.intern(nul);
  EXPECT_EQ(t.intern("kernel"), a);
  EXPECT_EQ(t.intern(nul), b);
  EXPECT_NE(a, b);
  EXPECT_EQ(t.view(b), nul);
  EXPECT_EQ(t.find("kernel"), a);
  EXPECT_EQ(t.find("absent"), kNone);
}

TEST(StringTable, ViewsStayValidWhileGrowing) {
  StringTable t;
  const std::string big(300000, 'x');  // above the chunk threshold
  const StringId first = t.intern("first");
  const std::string_view first_view = t.view(first);
  const StringId big_id = t.intern(big);
  for (int i = 0; i < 200000; ++i) t.intern("name" + std::to_string(i));
  EXPECT_EQ(first_view.data(), t.view(first).data());
  EXPECT_EQ(t.view(first), "first");
  EXPECT_EQ(t.view(big_id), big);
  EXPECT_EQ(t.intern("name123"), t.find("name123"));
  EXPECT_EQ(t.size(), 200003u);
}

TEST(AssignRows, NestedSlicesTakeTheirDepth) {
  std::vector<Slice> s = {make(10, 5), make(0, 100), make(10, 80), make(50, 10), make(200, 1)};
  std::vector<std::vector<Slice>> rows;
  EXPECT_EQ(assign_rows(s, rows), 3u);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].size(), 2u);  // [0,100) and [200,201)
  EXPECT_EQ(rows[1].size(), 1u);  // [10,90)
  EXPECT_EQ(rows[2].size(), 2u);  // [10,15) and [50,60)
  expect_rows_valid(rows, 5);
}

TEST(AssignRows, OverlapsThatDoNotNestGoToExtraRows) {
  // Kernels under programmatic dependent launch: each starts before the last ends.
  std::vector<Slice> s = {make(0, 10), make(5, 10), make(8, 10), make(12, 10), make(30, 5)};
  std::vector<std::vector<Slice>> rows;
  const std::uint32_t nesting = assign_rows(s, rows);
  EXPECT_EQ(nesting, 1u);
  EXPECT_GE(rows.size(), 3u);
  expect_rows_valid(rows, 5);
}

TEST(AssignRows, OfIdenticalIntervalsTheFirstAddedIsOuter) {
  std::vector<Slice> s = {make(0, 10, 9), make(0, 10, 2)};
  std::vector<std::vector<Slice>> rows;
  ASSERT_EQ(assign_rows(s, rows), 2u);
  EXPECT_EQ(rows[0][0].name, 9u);
  EXPECT_EQ(rows[1][0].name, 2u);
}

TEST(AssignRows, ZeroDurationAndIdenticalSlicesAreKept) {
  std::vector<Slice> s = {make(5, 0), make(5, 0), make(5, 10), make(5, 10), make(15, 0)};
  std::vector<std::vector<Slice>> rows;
  assign_rows(s, rows);
  expect_rows_valid(rows, 5);
}

TEST(AssignRows, RandomIntervalsNoneDroppedAndRowsDisjoint) {
  std::mt19937_64 rng(42);
  for (int round = 0; round < 20; ++round) {
    std::vector<Slice> s;
    const int n = 1 + static_cast<int>(rng() % 2000);
    for (int i = 0; i < n; ++i) {
      s.push_back(
          make(static_cast<TimeNs>(rng() % 10000) - 5000, static_cast<TimeNs>(rng() % 300)));
    }
    std::vector<std::vector<Slice>> rows;
    const std::uint32_t nesting = assign_rows(s, rows);
    expect_rows_valid(rows, static_cast<std::size_t>(n));
    // A slice at depth d > 0 lies inside some slice of depth d - 1.
    for (std::uint32_t d = 1; d < nesting; ++d) {
      for (const Slice& child : rows[d]) {
        const auto& parents = rows[d - 1];
        auto it = std::upper_bound(parents.begin(), parents.end(), child.start,
                                   [](TimeNs t, const Slice& p) { return t < p.start; });
        ASSERT_NE(it, parents.begin());
        --it;
        EXPECT_LE(it->start, child.start);
        EXPECT_GE(it->end(), child.end());
      }
    }
  }
}

TEST(TraceBuilder, StringAndNumberIdsAreOneThread) {
  Trace t;
  TraceBuilder b(t);
  const auto p1 = b.process(7);
  const auto p2 = b.process("7");
  EXPECT_EQ(p1, p2);
  EXPECT_EQ(b.track(p1, 25738), b.track(p1, "25738"));
  EXPECT_EQ(b.track(p1, -1), b.track(p1, "-1"));
  const auto stream = b.track(p1, "stream 7");
  EXPECT_NE(stream, b.track(p1, 7));
  EXPECT_EQ(t.str(t.tracks[stream].tid_label), "stream 7");
  const auto spans = b.process("Spans");
  EXPECT_NE(spans, p1);
  EXPECT_EQ(t.str(t.processes[spans].pid_label), "Spans");
  EXPECT_EQ(b.process(""), b.process(0));
}

TEST(TraceBuilder, NewStreamTrackMarksItsProcess) {
  Trace t;
  TraceBuilder b(t);
  const auto p = b.process(3);
  const auto s = b.track(p, 7, TrackKind::kGpuStream);
  EXPECT_EQ(t.tracks[s].kind, TrackKind::kGpuStream);
  EXPECT_TRUE(t.processes[p].is_gpu);
  EXPECT_EQ(t.processes[p].device, 3);
}

TEST(TraceBuilder, GpuStreamMarksProcessAndKeepsOneTrack) {
  Trace t;
  TraceBuilder b(t);
  const auto p = b.process(0);
  const auto a = b.track(p, 7);
  const auto g = b.track(p, 7, TrackKind::kGpuStream);
  EXPECT_EQ(a, g);
  EXPECT_EQ(t.tracks[g].kind, TrackKind::kGpuStream);
  EXPECT_TRUE(t.processes[p].is_gpu);
  EXPECT_EQ(t.processes[p].device, 0);
  const auto async = b.track(p, 7, TrackKind::kAsync);
  EXPECT_NE(async, g);
}

TEST(TraceBuilder, FlowsBindToEnclosingOrNextSlice) {
  Trace t;
  TraceBuilder b(t);
  const auto cpu = b.track(b.process(100), 1);
  const auto gpu = b.track(b.process(0), 7, TrackKind::kGpuStream);
  const StringId launch = t.strings.intern("cudaLaunchKernel");
  const StringId op = t.strings.intern("aten::mm");
  const StringId kernel = t.strings.intern("gemm");
  b.add_slice(cpu, Slice{1000, 500, op, 0});
  b.add_slice(cpu, Slice{1100, 50, launch, 0});
  b.add_slice(gpu, Slice{2000, 300, kernel, 0});
  Flow f;
  f.id = 1;
  f.from = FlowEnd{cpu, 1100, true, {}};
  f.to = FlowEnd{gpu, 2000, true, {}};
  b.add_flow(f);
  Flow next = f;  // a v1 flow end without bp binds to the next slice
  next.to = FlowEnd{gpu, 1500, false, {}};
  b.add_flow(next);
  Flow lost = f;  // nothing at that time: stays unbound, never invented
  lost.to = FlowEnd{gpu, 9000, true, {}};
  b.add_flow(lost);
  b.finalize();
  ASSERT_EQ(t.flows.size(), 3u);
  ASSERT_TRUE(t.flows[0].joined());
  EXPECT_EQ(t.str(t.tracks[cpu].at(t.flows[0].from.slice).name), "cudaLaunchKernel");  // deepest
  EXPECT_EQ(t.str(t.tracks[gpu].at(t.flows[0].to.slice).name), "gemm");
  ASSERT_TRUE(t.flows[1].joined());
  EXPECT_EQ(t.tracks[gpu].at(t.flows[1].to.slice).start, 2000);
  EXPECT_FALSE(t.flows[2].joined());
}

TEST(TraceBuilder, FinalizeSortsInstantsCountersAndBounds) {
  Trace t;
  TraceBuilder b(t);
  const auto p = b.process(1);
  const auto tr = b.track(p, 1);
  b.add_instant(tr, Instant{300, 1, 0});
  b.add_instant(tr, Instant{100, 2, 0});
  const auto series = b.counter_series(p, t.strings.intern("mem"), t.strings.intern("value"), 0);
  EXPECT_EQ(series, b.counter_series(p, t.strings.intern("mem"), t.strings.intern("value"), 0));
  b.add_counter_point(series, 50, 2.0);
  b.add_counter_point(series, -20, 1.0);
  b.add_slice(tr, Slice{10, 1000, 3, 0});
  b.finalize();
  EXPECT_EQ(t.tracks[tr].instants.front().ts, 100);
  EXPECT_EQ(t.counters[series].points.front().ts, -20);
  EXPECT_EQ(t.time_bounds(), (std::pair<TimeNs, TimeNs>{-20, 1010}));
  EXPECT_EQ(t.slice_count(), 1u);
  EXPECT_EQ(t.instant_count(), 2u);
  EXPECT_EQ(t.counter_point_count(), 2u);
}

TEST(TraceReport, SkipCountsByReason) {
  TraceReport r;
  r.skip("orphan E");
  r.skip("orphan E", 2);
  r.skip("unknown phase 'Z'");
  EXPECT_EQ(r.events_skipped, 4u);
  ASSERT_EQ(r.skip_reasons.size(), 2u);
  EXPECT_EQ(r.skip_reasons[0].second, 3u);
}

}  // namespace
}  // namespace flopline::trace
