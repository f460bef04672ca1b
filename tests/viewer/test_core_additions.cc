// The trace-core additions the viewer needs: ArgStore locations and its packed
// entries (8 bytes, long lengths on the side), and compute_stats' clipped range.
#include <gtest/gtest.h>

#include "flopline/trace/analysis.h"
#include "flopline/trace/args.h"
#include "flopline/trace/chrome_reader.h"
#include "viewer_test_util.h"

namespace flopline::viewer {
namespace {

TEST(ArgStore, TextAndLocationsSideBySide) {
  trace::ArgStore store;
  const trace::ArgsId a = store.add_json(R"({"a":1})");
  const trace::ArgsId b = store.add_location(123'456'789'012ull, 77);
  const trace::ArgsId c = store.add_json("{}");
  EXPECT_EQ(store.json(a), R"({"a":1})");
  EXPECT_FALSE(store.is_location(a));
  EXPECT_TRUE(store.is_location(b));
  EXPECT_EQ(store.json(b), "{}");  // the text is in the file
  EXPECT_EQ(store.location(b), (std::pair<std::uint64_t, std::uint32_t>{123'456'789'012ull, 77}));
  EXPECT_EQ(store.json(c), "{}");
  EXPECT_FALSE(store.is_location(trace::kNoArgs));
  EXPECT_EQ(store.resident_bytes(), 9u + 3 * 8u);  // 8 bytes an entry
}

TEST(ArgStore, ObjectsOfEightMegabytesAndMore) {
  trace::ArgStore store;
  const std::string big = "{\"x\":\"" + std::string((8u << 20) + 5, 'y') + "\"}";
  const std::string exact =
      "{\"x\":\"" + std::string((8u << 20) - 1 - 8, 'z') + "\"}";  // 2^23 - 1 bytes
  ASSERT_EQ(exact.size(), (8u << 20) - 1);
  const trace::ArgsId small1 = store.add_json(R"({"s":1})");
  const trace::ArgsId b1 = store.add_json(big);
  const trace::ArgsId e1 = store.add_json(exact);
  const trace::ArgsId loc = store.add_location(5, (9u << 20));
  const trace::ArgsId small2 = store.add_json(R"({"s":2})");
  EXPECT_EQ(store.json(b1), big);
  EXPECT_EQ(store.json(e1), exact);
  EXPECT_EQ(store.location(loc).second, 9u << 20);
  EXPECT_EQ(store.json(small1), R"({"s":1})");
  EXPECT_EQ(store.json(small2), R"({"s":2})");
}

TEST(Reader, OnDemandArgsKeepTextOnlyWhereAnalysisNeedsIt) {
  const std::string json = testing::trace_json({
      testing::x_event("k", "kernel", 0, 7, "0", "1", R"({"grid":[1,1,1]})"),
      testing::x_event("op", "gpu_user_annotation", 0, 7, "0", "2",
                       R"({"flops":1e9,"precision":"tf32"})"),
      // The rank summary's waits read an NCCL kernel's collective from its args.
      testing::x_event("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                       "kernel", 0, 8, "0", "3",
                       R"({"collective":"AllReduce","collective message bytes":64})"),
  });
  const trace::Trace t = testing::read_json(json, trace::ArgsMode::kOnDemand);
  int located = 0, kept = 0, nccl = 0;
  for (const trace::Track& track : t.tracks) {
    for (const auto& row : track.rows) {
      for (const trace::Slice& s : row) {
        ASSERT_NE(s.args, trace::kNoArgs);
        if (t.args.is_location(s.args)) {
          ++located;
          const auto [offset, length] = t.args.location(s.args);
          EXPECT_EQ(json.substr(offset, length), R"({"grid":[1,1,1]})");
        } else if (t.str(s.name).starts_with("nccl")) {
          ++nccl;
          EXPECT_EQ(t.args.json(s.args),
                    R"({"collective":"AllReduce","collective message bytes":64})");
        } else {
          ++kept;
          EXPECT_EQ(t.args.json(s.args), R"({"precision":"tf32"})");  // flops lives in metrics
        }
      }
    }
  }
  EXPECT_EQ(located, 1);
  EXPECT_EQ(kept, 1);
  EXPECT_EQ(nccl, 1);
  // Lax text is made strict (as kKeep stores it: compact).
  EXPECT_EQ(trace::args_text_from_source(" {\"a\": nan, \"b\": [1,],}"), "{\"a\":null,\"b\":[1]}");
  EXPECT_EQ(trace::args_text_from_source("{\"a\": 1}"), "{\"a\": 1}");  // strict text: as written
  EXPECT_EQ(trace::args_text_from_source("[1]"), "{}");
}

TEST(Stats, ClippedRangeCountsOverlapsWithTheirShare) {
  const trace::Trace t = testing::read_json(testing::trace_json(
      {testing::x_event("a", "c", 1, 1, "0", "10", R"({"flops":1000,"bytes":100})"),
       testing::x_event("a", "c", 1, 1, "20", "10"), testing::x_event("b", "c", 1, 1, "40", "0")}));
  trace::StatsQuery q;
  q.by = trace::GroupBy::kName;
  q.categories = {"c"};
  q.range_begin = 5'000;
  q.range_end = 40'001;
  q.clip_to_range = true;
  const trace::StatsResult r = trace::compute_stats(t, q);
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.rows[0].name, "a");
  EXPECT_EQ(r.rows[0].count, 2u);
  EXPECT_EQ(r.rows[0].total_ns, 5'000 + 10'000);
  EXPECT_DOUBLE_EQ(*r.rows[0].flops, 500.0);
  EXPECT_DOUBLE_EQ(*r.rows[0].bytes, 50.0);
  EXPECT_EQ(r.rows[1].name, "b");  // zero-length, inside the range
  EXPECT_EQ(r.rows[1].count, 1u);
  // Touching the range's ends does not count.
  q.range_begin = 10'000;
  q.range_end = 20'000;
  EXPECT_TRUE(trace::compute_stats(t, q).rows.empty());
  // Without clipping: whole slices that start inside.
  q.clip_to_range = false;
  q.range_begin = 5'000;
  q.range_end = 40'001;
  const trace::StatsResult whole = trace::compute_stats(t, q);
  ASSERT_EQ(whole.rows.size(), 2u);
  EXPECT_EQ(whole.rows[0].total_ns, 10'000);
}

}  // namespace
}  // namespace flopline::viewer
