// Flow lookup and "jump along flow"; search with next/previous and wraparound.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "core/flows.h"
#include "core/search.h"
#include "core/selection.h"
#include "viewer_test_util.h"

namespace flopline::viewer {
namespace {

using testing::read_json;
using testing::trace_json;
using testing::x_event;

std::string flow(char ph, int id, int pid, int tid, std::string_view ts) {
  std::string e = "{\"ph\":\"" + std::string(1, ph) + "\",\"id\":" + std::to_string(id) +
                  ",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) +
                  ",\"ts\":" + std::string(ts) + ",\"cat\":\"ac2g\",\"name\":\"ac2g\"";
  if (ph == 'f') e += ",\"bp\":\"e\"";
  return e + "}";
}

// Two launches on a CPU thread, each with its kernel on stream 7 (Kineto's ac2g).
std::string kineto_like() {
  return trace_json({
      x_event("cudaLaunchKernel", "cuda_runtime", 10, 10, "100", "5"),
      flow('s', 1, 10, 10, "100"),
      x_event("matmul", "kernel", 0, 7, "110", "20"),
      flow('f', 1, 0, 7, "110"),
      x_event("cudaLaunchKernel", "cuda_runtime", 10, 10, "200", "5"),
      flow('s', 2, 10, 10, "200"),
      x_event("Softmax", "kernel", 0, 7, "210", "20"),
      flow('f', 2, 0, 7, "210"),
  });
}

SliceHandle find(const std::vector<const trace::Trace*>& list, std::uint32_t ti,
                 std::string_view name, std::int64_t start) {
  const trace::Trace& t = *list[ti];
  for (std::uint32_t k = 0; k < t.tracks.size(); ++k) {
    for (std::uint32_t r = 0; r < t.tracks[k].rows.size(); ++r) {
      const auto& row = t.tracks[k].rows[r];
      for (std::uint32_t i = 0; i < row.size(); ++i) {
        if (t.str(row[i].name) == name && row[i].start == start) return SliceHandle{ti, {k, r, i}};
      }
    }
  }
  return {};
}

TEST(Flows, LaunchLeadsToItsKernelAndBack) {
  trace::Trace t = read_json(kineto_like());
  const auto list = testing::list_of({&t});
  const FlowIndex idx = FlowIndex::build(list);
  ASSERT_EQ(idx.size(), 2u);
  const SliceHandle launch2 = find(list, 0, "cudaLaunchKernel", 200'000);
  const SliceHandle softmax = find(list, 0, "Softmax", 210'000);
  ASSERT_TRUE(launch2.valid());
  ASSERT_TRUE(softmax.valid());
  const auto out = idx.outgoing(launch2);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].to == softmax);
  EXPECT_EQ(t.str(out[0].name), "ac2g");
  EXPECT_TRUE(idx.outgoing(softmax).empty());
  const auto in = idx.incoming(softmax);
  ASSERT_EQ(in.size(), 1u);
  EXPECT_TRUE(in[0].from == launch2);

  Selection sel;
  sel.select(launch2, idx);
  EXPECT_EQ(sel.flows.size(), 1u);
  auto target = sel.next_flow_target();
  ASSERT_TRUE(target);
  EXPECT_TRUE(*target == softmax);
  sel.select(*target, idx);
  target = sel.next_flow_target();
  ASSERT_TRUE(target);
  EXPECT_TRUE(*target == launch2);  // and back
  sel.clear_all();
  EXPECT_FALSE(sel.has_slice());
  EXPECT_FALSE(sel.next_flow_target());

  // The model's flow list can go once indexed: the index keeps working.
  EXPECT_GT(release_model_flows(t), 0u);
  EXPECT_TRUE(t.flows.empty());
  EXPECT_EQ(idx.outgoing(launch2).size(), 1u);
}

TEST(Flows, TwoTracesNeverCrossLink) {
  const trace::Trace a = read_json(kineto_like());
  const trace::Trace b = read_json(kineto_like());
  const auto list = testing::list_of({&a, &b});
  const FlowIndex idx = FlowIndex::build(list);
  EXPECT_EQ(idx.size(), 4u);
  const SliceHandle launch_b = find(list, 1, "cudaLaunchKernel", 100'000);
  const auto out = idx.outgoing(launch_b);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to.trace, 1u);
}

TEST(Flows, IndexMatchesABruteForceOverManyFlows) {
  // Launches on two threads and kernels on three streams, some slices with several
  // flows; flows in file order by launch (as Kineto writes them, kernels in any order),
  // then shuffled (so every track's run needs sorting).
  for (const bool shuffled : {false, true}) {
    std::mt19937 rng(3);
    std::vector<std::string> ev;
    for (int i = 0; i < 400; ++i) {
      const int tid = 10 + i % 2;
      const int stream = 7 + i % 3;
      ev.push_back(x_event("launch", "cuda_runtime", 10, tid, std::to_string(i * 10), "5"));
      ev.push_back(x_event("kernel", "kernel", 0, stream, std::to_string(i * 10 + 3), "2"));
    }
    std::vector<std::pair<int, int>> pairs;
    for (int f = 0; f < 600; ++f)
      pairs.emplace_back(static_cast<int>(rng() % 400), static_cast<int>(rng() % 400));
    if (shuffled) {
      std::shuffle(pairs.begin(), pairs.end(), rng);
    } else {
      std::stable_sort(pairs.begin(), pairs.end());
    }
    for (std::size_t f = 0; f < pairs.size(); ++f) {
      const auto [from, to] = pairs[f];
      const int id = static_cast<int>(f) + 1;
      ev.push_back(flow('s', id, 10, 10 + from % 2, std::to_string(from * 10 + 1)));
      ev.push_back(flow('f', id, 0, 7 + to % 3, std::to_string(to * 10 + 4)));
    }
    const trace::Trace t = read_json(trace_json(ev));
    const auto list = testing::list_of({&t});
    const FlowIndex idx = FlowIndex::build(list);
    ASSERT_EQ(idx.size(), 600u);
    for (std::uint32_t k = 0; k < t.tracks.size(); ++k) {
      for (std::uint32_t i = 0; i < t.tracks[k].rows[0].size(); ++i) {
        const SliceHandle h{0, {k, 0, i}};
        std::size_t out = 0, in = 0;
        for (const trace::Flow& f : t.flows) {
          out += (SliceHandle{0, f.from.slice} == h) ? 1 : 0;
          in += (SliceHandle{0, f.to.slice} == h) ? 1 : 0;
        }
        const auto got_out = idx.outgoing(h);
        const auto got_in = idx.incoming(h);
        ASSERT_EQ(got_out.size(), out) << shuffled;
        ASSERT_EQ(got_in.size(), in) << shuffled;
        for (const FlowLink& l : got_out) ASSERT_TRUE(l.from == h);
        for (const FlowLink& l : got_in) ASSERT_TRUE(l.to == h);
      }
    }
  }
}

TEST(Flows, AppendingTheIndexOfAddedFiles) {
  const trace::Trace a = read_json(kineto_like());
  const trace::Trace b = read_json(kineto_like());
  const auto both = testing::list_of({&a, &b});
  const FlowIndex whole = FlowIndex::build(both);
  FlowIndex first = FlowIndex::build(testing::list_of({&a}));
  first.append(FlowIndex::build(testing::list_of({&b})), 1);
  ASSERT_EQ(first.size(), whole.size());
  // Appended in front of what is there (offset 0 for the new, shifted old): re-sorted.
  FlowIndex second = FlowIndex::build(testing::list_of({&b}));
  FlowIndex shifted;
  shifted.append(std::move(second), 1);
  shifted.append(FlowIndex::build(testing::list_of({&a})), 0);
  for (std::uint32_t ti = 0; ti < 2; ++ti) {
    for (const auto& [name, start] :
         {std::pair<const char*, std::int64_t>{"cudaLaunchKernel", 100'000},
          {"cudaLaunchKernel", 200'000},
          {"matmul", 110'000},
          {"Softmax", 210'000}}) {
      const SliceHandle h = find(both, ti, name, start);
      ASSERT_TRUE(h.valid());
      for (const FlowIndex* idx : {&first, &shifted}) {
        const auto got = idx->links_of(h);
        const auto want = whole.links_of(h);
        ASSERT_EQ(got.size(), want.size()) << name;
        for (std::size_t i = 0; i < got.size(); ++i) {
          EXPECT_TRUE(got[i].from == want[i].from);
          EXPECT_TRUE(got[i].to == want[i].to);
        }
      }
    }
  }
}

TEST(Selection, RangeFromDragInEitherDirection) {
  EXPECT_EQ(range_from_drag(500.2, 100.7), (TimeRange{100, 501}));
  EXPECT_EQ(range_from_drag(100, 500), (TimeRange{100, 500}));
}

TEST(Search, CaseInsensitiveSortedByTime) {
  const trace::Trace t = read_json(kineto_like());
  const auto list = testing::list_of({&t});
  SliceSearch s;
  s.run(list, "LAUNCH");
  ASSERT_EQ(s.count(), 2u);
  EXPECT_EQ(s.matches()[0].start_ns, 100'000);
  EXPECT_EQ(s.matches()[1].start_ns, 200'000);
  s.run(list, "max");
  ASSERT_EQ(s.count(), 1u);
  EXPECT_EQ(t.str(slice_of(list, s.matches()[0].slice).name), "Softmax");
  s.run(list, "nothing like it");
  EXPECT_EQ(s.count(), 0u);
  EXPECT_FALSE(s.next_after(0));
  s.run(list, "");
  EXPECT_EQ(s.count(), 0u);
  EXPECT_TRUE(contains_case_insensitive("aten::MM", "mm"));
  EXPECT_FALSE(contains_case_insensitive("ab", "abc"));
}

TEST(Search, NextAndPreviousWrapAround) {
  const trace::Trace t = read_json(kineto_like());
  const auto list = testing::list_of({&t});
  SliceSearch s;
  s.run(list, "a");  // cudaLaunchKernel x2, matmul, Softmax: 4 matches at 100, 110, 200, 210 us
  ASSERT_EQ(s.count(), 4u);
  EXPECT_EQ(*s.next_after(0), 0u);
  EXPECT_EQ(*s.next_after(110'000), 2u);       // strictly after
  EXPECT_EQ(*s.next_after(210'000), 0u);       // wraps to the first
  EXPECT_EQ(*s.previous_before(110'000), 0u);  // strictly before
  EXPECT_EQ(*s.previous_before(100'000), 3u);  // wraps to the last
  EXPECT_EQ(*s.step(3, +1), 0u);
  EXPECT_EQ(*s.step(0, -1), 3u);
  EXPECT_EQ(*s.step(1, +1), 2u);
}

}  // namespace
}  // namespace flopline::viewer
