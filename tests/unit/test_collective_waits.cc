// Collectives matched across ranks (communicator and order) and each rank's wait for
// the last to arrive; the rank a trace names; what the capture writes for ranks
// (distributedInfo, a shared time base).
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "flopline/capture/capture_config.h"
#include "flopline/capture/record_decoder.h"
#include "flopline/trace/chrome_reader.h"
#include "flopline/trace/chrome_writer.h"
#include "flopline/trace/collective_waits.h"
#include "flopline/trace/json_value.h"

namespace flopline::trace {
namespace {

CollectiveInstance at(TimeNs start, TimeNs end, std::string comm = "0xaa",
                      Collective c = Collective::kAllReduce, std::uint64_t bytes = 1000) {
  CollectiveInstance i;
  i.communicator = std::move(comm);
  i.collective = c;
  i.message_bytes = bytes;
  i.start = start;
  i.end = end;
  return i;
}

// Three ranks, three all-reduces: rank 2 arrives last at the first two (100 and 50 ns
// after rank 0), rank 0 at the third. Every kernel ends at the same time on all ranks.
TEST(CollectiveWaits, EachRankWaitsForTheLastToArrive) {
  std::vector<RankCollectives> ranks = {
      {"r0.json", 0, {at(1000, 2000), at(3000, 4000), at(5060, 6000)}},
      {"r1.json", 1, {at(1040, 2000), at(3020, 4000), at(5000, 6000)}},
      {"r2.json", 2, {at(1100, 2000), at(3050, 4000), at(5010, 6000)}},
  };
  const CollectiveWaits w = collective_waits(ranks);
  EXPECT_EQ(w.collectives, 3u);
  EXPECT_EQ(w.unmatched, 0u);
  ASSERT_EQ(w.ranks.size(), 3u);
  EXPECT_EQ(w.ranks[0].wait_ns, 100 + 50 + 0);
  EXPECT_EQ(w.ranks[1].wait_ns, 60 + 30 + 60);
  EXPECT_EQ(w.ranks[2].wait_ns, 0 + 0 + 50);
  EXPECT_EQ(w.ranks[0].kernel_ns, 1000 + 1000 + 940);
  EXPECT_EQ(w.ranks[2].last_arrivals, 2u);
  EXPECT_EQ(w.ranks[0].last_arrivals, 1u);
  ASSERT_TRUE(w.waited_for);
  EXPECT_EQ(*w.waited_for, 2u);
}

TEST(CollectiveWaits, KeepMatchedListsEachCollectiveWithItsArrivals) {
  std::vector<RankCollectives> ranks = {
      {"r0.json", 0, {at(1000, 2000), at(3000, 4000)}},
      {"r1.json", 1, {at(1040, 2000), at(3100, 3150)}},  // its second kernel is short
  };
  EXPECT_TRUE(collective_waits(ranks).matched.empty());  // only when asked for
  const CollectiveWaits w = collective_waits(ranks, true);
  ASSERT_EQ(w.matched.size(), 2u);
  const MatchedCollective& first = w.matched[0];
  EXPECT_EQ(first.communicator, "0xaa");
  EXPECT_EQ(first.order, 0u);
  EXPECT_EQ(first.last_rank, 1u);
  ASSERT_EQ(first.arrivals.size(), 2u);
  EXPECT_EQ(first.arrivals[0].rank, 0u);
  EXPECT_EQ(first.arrivals[0].start, 1000);
  EXPECT_EQ(first.arrivals[0].end, 2000);
  EXPECT_EQ(first.arrivals[0].wait_ns, 40);
  EXPECT_EQ(first.arrivals[1].wait_ns, 0);
  EXPECT_EQ(w.matched[1].order, 1u);
  EXPECT_EQ(w.matched[1].arrivals[0].wait_ns, 100);
  // The per-collective waits add up to the per-rank totals.
  for (std::size_t r = 0; r < 2; ++r) {
    std::int64_t sum = 0;
    for (const MatchedCollective& m : w.matched) sum += m.arrivals[r].wait_ns;
    EXPECT_EQ(sum, w.ranks[r].wait_ns);
  }
}

// Windows (--range, --steps) choose which collectives are summed, never what is
// matched. A collective counts, for every rank, when its last arrival is inside the last
// rank's window: rank 1's window starts after the first collective's last arrival
// (1300), and rank 0's window ends before its own late arrival at the third (5200), so
// only the second counts; rank 0's window need not hold its own kernels (a host that
// runs ahead of its GPU ends a step's range before the step's collective starts).
TEST(CollectiveWaits, WindowsChooseCollectivesByTheirLastArrival) {
  std::vector<RankCollectives> ranks = {
      {"r0.json", 0, {at(1000, 2000), at(3000, 4000), at(5200, 6000)}},
      {"r1.json", 1, {at(1300, 2000), at(3100, 4000), at(5000, 6000)}},
  };
  ranks[0].window_begin = 0;
  ranks[0].window_end = 2900;  // before its own second kernel, which still counts
  ranks[1].window_begin = 2500;
  const CollectiveWaits w = collective_waits(ranks, true);
  EXPECT_EQ(w.unmatched, 0u);
  // The second: rank 1 last, at 3100, inside its window. The third: rank 0 last, at 5200,
  // outside rank 0's window: not counted. The first: rank 1 last at 1300, outside.
  EXPECT_EQ(w.collectives, 1u);
  ASSERT_EQ(w.matched.size(), 1u);
  EXPECT_EQ(w.matched[0].order, 1u);
  EXPECT_EQ(w.ranks[0].matched, 1u);
  EXPECT_EQ(w.ranks[0].wait_ns, 100);
  EXPECT_EQ(w.ranks[0].kernel_ns, 1000);
  EXPECT_EQ(w.ranks[1].wait_ns, 0);
  EXPECT_EQ(w.ranks[1].last_arrivals, 1u);
  EXPECT_EQ(w.ranks[0].last_arrivals, 0u);
  ASSERT_TRUE(w.waited_for);
  EXPECT_EQ(*w.waited_for, 1u);
}

TEST(CollectiveWaits, CommunicatorsAreMatchedApartAndBrokenOrderStopsTheMatch) {
  std::vector<RankCollectives> ranks = {
      // Two communicators interleaved differently on the two ranks: matched by their own
      // order, not the global one.
      {"a",
       0,
       {at(100, 200, "0x1"), at(150, 300, "0x2", Collective::kAllGather, 64), at(400, 500, "0x1"),
        at(600, 700, "0x1", Collective::kBroadcast)}},
      {"b",
       1,
       {at(120, 300, "0x2", Collective::kAllGather, 64), at(130, 200, "0x1"), at(410, 500, "0x1"),
        at(610, 700, "0x1", Collective::kAllReduce)}},
  };
  const CollectiveWaits w = collective_waits(ranks);
  // 0x1: two matched, the third differs (Broadcast against AllReduce): 2 left out.
  // 0x2: one matched.
  EXPECT_EQ(w.collectives, 3u);
  EXPECT_EQ(w.unmatched, 2u);
  EXPECT_EQ(w.ranks[0].matched, 3u);
  EXPECT_EQ(w.ranks[0].wait_ns, 30 + 0 + 10);  // 0x1: 130-100, 410-400; 0x2: rank 0 last
  EXPECT_EQ(w.ranks[1].wait_ns, 0 + 0 + 30);   // 0x2: 150-120
}

TEST(CollectiveWaits, WhatCannotBeMatchedIsCounted) {
  std::vector<RankCollectives> ranks = {
      {"a", 0, {at(100, 200, ""), at(300, 400, "0x9"), at(500, 600, "0x1"), at(700, 800, "0x1")}},
      {"b", 1, {at(110, 200, "0x1")}},  // a shorter trace
  };
  const CollectiveWaits w = collective_waits(ranks);
  // No communicator (1), a communicator on one rank only (1), 0x1's second on rank 0 (1).
  EXPECT_EQ(w.collectives, 1u);
  EXPECT_EQ(w.unmatched, 3u);
}

TEST(CollectiveWaits, AWaitLongerThanTheKernelMeansTheClocksDisagree) {
  std::vector<RankCollectives> ranks = {
      {"host a", 0, {at(0, 100)}},
      {"host b", 1, {at(5000, 5100)}},  // another host's clock, 5 us ahead
  };
  const CollectiveWaits w = collective_waits(ranks);
  EXPECT_EQ(w.ranks[0].wait_ns, 100);  // cut to its kernel
  EXPECT_EQ(w.ranks[0].clock_suspect, 1u);
}

// Windows opened at slightly different moments: rank 0 recorded two all-reduces before
// rank 1 started recording. Each rank's k-th kernel of the communicator is not the same
// collective; the kernels that overlap in time are.
TEST(CollectiveWaits, WindowsCutAtDifferentCollectivesAreAlignedByTime) {
  std::vector<RankCollectives> ranks = {
      {"r0", 0, {at(100, 200), at(300, 400), at(500, 600), at(700, 800)}},
      {"r1", 1, {at(520, 600), at(690, 800)}},
  };
  // Not recorded in windows: the order as it is (the k-th with the k-th), the clocks
  // doubted.
  EXPECT_GT(collective_waits(ranks).ranks[0].clock_suspect, 0u);
  for (RankCollectives& r : ranks) {
    r.windowed = true;
    r.host = "node1";
  }
  // On two hosts, the order as it is too.
  ranks[1].host = "node2";
  EXPECT_EQ(collective_waits(ranks).unmatched, 2u);
  EXPECT_GT(collective_waits(ranks).ranks[0].clock_suspect, 0u);
  ranks[1].host = "node1";
  const CollectiveWaits w = collective_waits(ranks, true);
  EXPECT_EQ(w.collectives, 2u);
  EXPECT_EQ(w.unmatched, 2u);         // rank 0's first two
  EXPECT_EQ(w.ranks[0].wait_ns, 20);  // 520 - 500; rank 0 last at the second
  EXPECT_EQ(w.ranks[1].wait_ns, 10);  // 700 - 690
  EXPECT_EQ(w.ranks[0].clock_suspect + w.ranks[1].clock_suspect, 0u);
  ASSERT_EQ(w.matched.size(), 2u);
  EXPECT_EQ(w.matched[0].arrivals[0].start, 500);
  // Whole traces whose first kernels overlap keep the order as it is.
  std::vector<RankCollectives> whole = {
      {"r0", 0, {at(100, 200), at(300, 400)}},
      {"r1", 1, {at(150, 200), at(330, 400)}},
  };
  EXPECT_EQ(collective_waits(whole).collectives, 2u);
  EXPECT_EQ(collective_waits(whole).ranks[0].wait_ns, 50 + 30);
}

// The files of two windows of one run, two ranks each: window 1's files are matched with
// each other, window 2's with each other, never across.
TEST(CollectiveWaits, FilesOfOneWindowAreMatchedWithEachOtherOnly) {
  std::vector<RankCollectives> ranks = {
      {"r0-w1", 0, {at(100, 200), at(300, 400)}},
      {"r1-w1", 1, {at(110, 200), at(330, 400)}},
      {"r0-w2", 0, {at(5000, 5100)}},
      {"r1-w2", 1, {at(5040, 5100)}},
  };
  ranks[0].group = ranks[1].group = "window 1 of the run";
  ranks[2].group = ranks[3].group = "window 2 of the run";
  const CollectiveWaits w = collective_waits(ranks);
  EXPECT_EQ(w.collectives, 3u);
  EXPECT_EQ(w.unmatched, 0u);
  EXPECT_EQ(w.ranks[0].wait_ns, 10 + 30);
  EXPECT_EQ(w.ranks[2].wait_ns, 40);
  EXPECT_EQ(w.ranks[3].matched, 1u);
}

Trace read_text(const std::string& json) {
  ReadResult r = read_chrome_trace_text(json, "test.json");
  EXPECT_TRUE(r.ok());
  return std::move(r.trace);
}

TEST(TraceRank, FromDistributedInfoThenFloplinesMetadata) {
  EXPECT_EQ(
      trace_rank(read_text(R"({"distributedInfo":{"backend":"nccl","rank":3},"traceEvents":[]})")),
      3);
  EXPECT_EQ(trace_rank(read_text(R"({"flopline":{"rank":"5"},"traceEvents":[]})")), 5);
  EXPECT_FALSE(trace_rank(read_text(R"({"flopline":{"rank":"five"},"traceEvents":[]})")));
  EXPECT_FALSE(trace_rank(read_text(R"({"traceEvents":[]})")));
}

capture::RecordBatch one_nccl_kernel() {
  capture::RecordBatch b;
  b.process_id = 77;
  capture::ApiRecord a;
  a.domain = capture::ApiDomain::kDriver;
  a.name = "cuLaunchKernelEx";
  a.start = 1'000'000'100;
  a.end = 1'000'000'200;
  a.process_id = 77;
  a.thread_id = 77;
  a.correlation_id = 5;
  b.api_calls.push_back(a);
  capture::KernelRecord k;
  k.name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
  k.start = 1'000'001'000;
  k.end = 1'000'002'000;
  k.correlation_id = 5;
  b.kernels.push_back(k);
  capture::NcclCallRecord c;
  c.start = 1'000'000'000;
  c.thread_id = 77;
  c.message_bytes = 4096;
  c.communicator = 0xfeedULL;
  b.nccl_calls.push_back(c);
  return b;
}

// What HTA needs to tell ranks apart, and Kineto's key for it.
TEST(RankTraces, DistributedInfoCommunicatorAndASharedTimeBase) {
  capture::RecordBatch b = one_nccl_kernel();
  b.rank = 1;
  b.world_size = 2;
  const Trace t = capture::decode_to_trace(b);
  std::string info;
  for (const auto& [k, v] : t.extra_top_level) {
    if (k == "distributedInfo") info = v;
  }
  EXPECT_EQ(info, R"({"backend":"nccl","rank":1,"world_size":2})");
  EXPECT_EQ(trace_rank(t), 1);
  const auto instances = collective_instances(t);
  ASSERT_EQ(instances.size(), 1u);
  EXPECT_EQ(instances[0].communicator, "0x000000000000feed");
  EXPECT_EQ(instances[0].message_bytes, 4096u);

  // The run's start as base: events keep their absolute times, ts counts from it.
  WriteOptions o;
  o.time_base = 999'000'000;
  std::string text;
  render_chrome_trace(t, text, o);
  // As written, in the form HTA's rank pattern needs.
  EXPECT_NE(text.find(R"("distributedInfo":{"backend": "nccl", "rank": 1, "world_size": 2})"),
            std::string::npos);
  EXPECT_NE(text.find(R"("baseTimeNanoseconds":999000000)"), std::string::npos);
  const Trace back = read_text(text);
  EXPECT_EQ(collective_instances(back).at(0).start, 1'000'001'000);
  // A base after the earliest event is not taken.
  o.time_base = 1'000'000'500;
  text.clear();
  render_chrome_trace(t, text, o);
  EXPECT_NE(text.find(R"("baseTimeNanoseconds":1000000100)"), std::string::npos)
      << text.substr(0, 400);
  // Without a numeric rank there is no distributedInfo.
  b.rank.reset();
  const Trace none = capture::decode_to_trace(b);
  for (const auto& [k, v] : none.extra_top_level) EXPECT_NE(k, "distributedInfo");
}

TEST(RankTraces, RankAndTimeBaseFromTheEnvironment) {
  std::map<std::string, std::string> env;
  const capture::GetEnv get = [&](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  };
  EXPECT_FALSE(capture::numeric_rank(get));
  env["RANK"] = "3";
  EXPECT_EQ(capture::numeric_rank(get), 3u);
  env["RANK"] = "node-3";  // a name is a rank for file names, not for distributedInfo
  EXPECT_FALSE(capture::numeric_rank(get));
  EXPECT_FALSE(capture::run_time_base(get));
  env["FLOPLINE_TIME_BASE_NS"] = "1795854675969847596";
  EXPECT_EQ(capture::run_time_base(get), 1795854675969847596);
  for (const char* bad : {"0", "-5", "12x", "99999999999999999999999"}) {
    env["FLOPLINE_TIME_BASE_NS"] = bad;
    EXPECT_FALSE(capture::run_time_base(get)) << bad;
  }
}

}  // namespace
}  // namespace flopline::trace
