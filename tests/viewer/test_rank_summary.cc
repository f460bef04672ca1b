// The rank summary's model: bars, waits and the collectives with the longest waits over
// two synthetic ranks loaded as the viewer loads them, checked against figures worked
// out by hand and against time_breakdown and collective_waits run on the same files read
// apart (args kept, flows kept); and where a click takes the timeline.
#include <gtest/gtest.h>

#include <array>
#include <filesystem>
#include <fstream>

#include "core/load_job.h"
#include "core/rank_summary.h"
#include "viewer_test_util.h"

namespace flopline::viewer {
namespace {

namespace fs = std::filesystem;

constexpr const char* kNccl =
    "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";

std::string allreduce_args() {
  return R"({"collective":"AllReduce","collective message bytes":1048576,)"
         R"("collective communicator":"0xabc","collective ranks":2})";
}

// One rank on GPU `rank` (pid = device), stream 7, times in us: gemm [0,40), a copy
// [40,50), three all-reduces arriving at `arrive[k]` and ending at 100, 140, 170, and a
// second gemm [100,120).
std::string rank_trace(int rank, const std::array<int, 3>& arrive) {
  std::vector<std::string> ev = {
      testing::x_event("gemm", "kernel", rank, 7, "0", "40"),
      testing::x_event("Memcpy HtoD", "gpu_memcpy", rank, 7, "40", "10"),
      testing::x_event("gemm", "kernel", rank, 7, "100", "20"),
  };
  const int ends[3] = {100, 140, 170};
  for (int k = 0; k < 3; ++k) {
    ev.push_back(testing::x_event(kNccl, "kernel", rank, 7, std::to_string(arrive[k]),
                                  std::to_string(ends[k] - arrive[k]), allreduce_args()));
  }
  return testing::trace_json(ev, R"("distributedInfo":{"backend":"nccl","rank":)" +
                                     std::to_string(rank) + R"(,"world_size":2},)");
}

class RankSummaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("flopline_rank_summary_" +
            std::to_string(::testing::UnitTest::GetInstance()->current_test_info()->line()));
    fs::create_directories(dir_);
    // Rank 0 arrives first at the first and third, rank 1 first at the second.
    write("rank0.json", rank_trace(0, {60, 130, 150}));
    write("rank1.json", rank_trace(1, {80, 125, 160}));
    result_ = load_files(paths_);
    ASSERT_TRUE(result_.errors.empty());
    ASSERT_EQ(result_.files.size(), 2u);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    paths_.push_back(p.string());
  }

  fs::path dir_;
  std::vector<std::string> paths_;
  LoadResult result_;
};

TEST_F(RankSummaryTest, BarsAreTheTimeBreakdownOfEachRank) {
  const RankSummary& s = result_.rank_summary;
  ASSERT_EQ(s.bars.size(), 2u);
  EXPECT_TRUE(s.has_ranks());
  // By hand, in us over the window [0, 170): rank 0 computes 40 + 20, copies 10, is in
  // all-reduces outside compute 40 + 10 + 20 and idle the rest; rank 1 arrives later at
  // the first and third (20 + 15 + 10 in all-reduces).
  const std::int64_t us = 1000;
  const trace::DeviceBreakdown& r0 = s.bars[0].breakdown;
  const trace::DeviceBreakdown& r1 = s.bars[1].breakdown;
  EXPECT_EQ(r0.window_ns(), 170 * us);
  EXPECT_EQ(r0.compute_ns, 60 * us);
  EXPECT_EQ(r0.memory_ns, 10 * us);
  EXPECT_EQ(r0.communication_ns, 70 * us);
  EXPECT_EQ(r0.idle_ns, 30 * us);
  EXPECT_EQ(r1.communication_ns, 45 * us);
  EXPECT_EQ(r1.idle_ns, 55 * us);
  EXPECT_EQ(s.bars[0].rank, 0);
  EXPECT_EQ(s.bars[1].label, "rank 1 GPU 1");
  // The shares are the bar: each part of the window, adding up to all of it.
  const BreakdownShares& sh = s.bars[1].shares;
  EXPECT_DOUBLE_EQ(sh.compute, 60.0 / 170);
  EXPECT_DOUBLE_EQ(sh.communication, 45.0 / 170);
  EXPECT_DOUBLE_EQ(sh.memory, 10.0 / 170);
  EXPECT_DOUBLE_EQ(sh.idle, 55.0 / 170);
  EXPECT_NEAR(sh.compute + sh.communication + sh.memory + sh.idle, 1.0, 1e-12);

  // The same files read apart, with args and flows kept, as `flopline stats` reads them.
  for (std::size_t i = 0; i < 2; ++i) {
    trace::ReadResult r = trace::read_chrome_trace_file(paths_[i]);
    ASSERT_TRUE(r.ok());
    const std::vector<trace::DeviceBreakdown> want = trace::time_breakdown(r.trace);
    ASSERT_EQ(want.size(), 1u);
    const trace::DeviceBreakdown& got = s.bars[i].breakdown;
    EXPECT_EQ(got.device, want[0].device);
    EXPECT_EQ(got.window_begin, want[0].window_begin);
    EXPECT_EQ(got.window_end, want[0].window_end);
    EXPECT_EQ(got.compute_ns, want[0].compute_ns);
    EXPECT_EQ(got.communication_ns, want[0].communication_ns);
    EXPECT_EQ(got.memory_ns, want[0].memory_ns);
    EXPECT_EQ(got.idle_ns, want[0].idle_ns);
    EXPECT_EQ(got.idle_host_ns, want[0].idle_host_ns);
    EXPECT_EQ(got.communication_hidden_ns, want[0].communication_hidden_ns);
    EXPECT_EQ(got.kernels, want[0].kernels);
  }
}

TEST_F(RankSummaryTest, WaitsAndTheRankTheOthersWaitFor) {
  const RankSummary& s = result_.rank_summary;
  ASSERT_TRUE(s.waits);
  EXPECT_EQ(s.waits->collectives, 3u);
  ASSERT_EQ(s.wait_rows.size(), 2u);
  // Rank 0 waits 20 + 10 us, rank 1 5 us; rank 1 arrives last twice.
  EXPECT_EQ(s.wait_rows[0].waits.wait_ns, 30'000);
  EXPECT_EQ(s.wait_rows[1].waits.wait_ns, 5'000);
  EXPECT_FALSE(s.wait_rows[0].waited_for);
  EXPECT_TRUE(s.wait_rows[1].waited_for);
  EXPECT_EQ(s.wait_rows[1].label, "rank 1");

  // collective_waits over the files read apart gives the same per rank.
  std::vector<trace::RankCollectives> ranks;
  for (const std::string& p : paths_) {
    trace::ReadResult r = trace::read_chrome_trace_file(p);
    ASSERT_TRUE(r.ok());
    ranks.push_back({p, trace::trace_rank(r.trace), trace::collective_instances(r.trace)});
  }
  const trace::CollectiveWaits want = trace::collective_waits(ranks);
  ASSERT_EQ(want.ranks.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(s.wait_rows[i].waits.wait_ns, want.ranks[i].wait_ns);
    EXPECT_EQ(s.wait_rows[i].waits.kernel_ns, want.ranks[i].kernel_ns);
    EXPECT_EQ(s.wait_rows[i].waits.last_arrivals, want.ranks[i].last_arrivals);
  }
  EXPECT_EQ(s.waits->waited_for, want.waited_for);

  // The longest waits first: the first all-reduce (20 us, rank 0), the third (10 us), the
  // second (5 us, rank 1).
  ASSERT_EQ(s.longest.size(), 3u);
  EXPECT_EQ(s.longest[0].label, "AllReduce #0");
  EXPECT_EQ(s.longest[0].longest_wait_ns, 20'000);
  EXPECT_EQ(s.longest[0].longest_waiter, 0u);
  EXPECT_EQ(s.longest[0].last_to_arrive, 1u);
  EXPECT_EQ(s.longest[0].begin_ns, 60'000);
  EXPECT_EQ(s.longest[0].end_ns, 100'000);
  EXPECT_EQ(s.longest[0].message_bytes, 1048576u);
  EXPECT_EQ(s.longest[1].label, "AllReduce #2");
  EXPECT_EQ(s.longest[2].longest_wait_ns, 5'000);
  EXPECT_EQ(s.longest[2].longest_waiter, 1u);
  EXPECT_EQ(s.longest[2].total_wait_ns, 5'000);

  // A limit keeps the longest.
  std::vector<const RankInputs*> inputs;
  for (const auto& f : result_.files) inputs.push_back(&f->ranks);
  const std::vector<std::string> labels = {"a", "b"};
  const RankSummary two = build_rank_summary(inputs, labels, 2);
  ASSERT_EQ(two.longest.size(), 2u);
  EXPECT_EQ(two.longest[1].longest_wait_ns, 10'000);
}

TEST_F(RankSummaryTest, ClicksJumpToTheRankAndToTheWaitingKernel) {
  const RankSummary& s = result_.rank_summary;
  const std::vector<const trace::Trace*> traces = result_.trace_list();
  const JumpTarget bar = jump_to_bar(s.bars[1], traces, result_.layout);
  EXPECT_EQ(bar.begin_ns, s.bars[1].breakdown.window_begin);
  EXPECT_EQ(bar.end_ns, s.bars[1].breakdown.window_end);
  ASSERT_NE(bar.layout_process, trace::kNone);
  const LayoutProcess& p = result_.layout.processes()[bar.layout_process];
  EXPECT_EQ(p.trace, 1u);
  EXPECT_TRUE(p.is_gpu);

  const JumpTarget c = jump_to_collective(s, s.longest[0], traces, result_.layout);
  ASSERT_TRUE(c.slice.valid());
  EXPECT_EQ(c.slice.trace, 0u);  // rank 0 waited
  const trace::Slice& k = slice_of(traces, c.slice);
  EXPECT_EQ(traces[0]->str(k.name), kNccl);
  EXPECT_EQ(k.start, 60'000);
  EXPECT_LT(c.begin_ns, 60'000);  // context on both sides
  EXPECT_GT(c.end_ns, 100'000);
  ASSERT_NE(c.layout_process, trace::kNone);
  EXPECT_EQ(result_.layout.processes()[c.layout_process].trace, 0u);
  EXPECT_FALSE(gpu_slice_at(traces, 0, 60'000, 99'000).valid());
}

TEST(RankSummary, BarSegmentsTileTheBar) {
  trace::DeviceBreakdown b;
  b.window_begin = 0;
  b.window_end = 1000;
  b.compute_ns = 333;
  b.communication_ns = 0;
  b.memory_ns = 100;
  b.idle_ns = 567;
  const BreakdownShares sh = shares_of(b);
  const auto segs = bar_segments(sh, 10.0f, 300.0f);
  EXPECT_EQ(segs[0].x0, 10.0f);
  EXPECT_EQ(segs[3].x1, 310.0f);
  for (int i = 1; i < kBarParts; ++i) EXPECT_EQ(segs[i].x0, segs[i - 1].x1);  // no gap
  EXPECT_NEAR(segs[0].x1 - segs[0].x0, 99.9f, 1e-3);
  EXPECT_EQ(segs[1].x1, segs[1].x0);  // no communication: an empty part
  EXPECT_EQ(bar_part_at(sh, 10.0f, 300.0f, 10.0f), 0);
  EXPECT_EQ(bar_part_at(sh, 10.0f, 300.0f, 115.0f), 2);
  EXPECT_EQ(bar_part_at(sh, 10.0f, 300.0f, 309.0f), 3);
  EXPECT_EQ(bar_part_at(sh, 10.0f, 300.0f, 9.0f), -1);
  EXPECT_EQ(bar_part_at(sh, 10.0f, 300.0f, 310.0f), -1);
  EXPECT_EQ(bar_part_ns(b, 2), 100);
  EXPECT_STREQ(bar_part_name(1), "communication");
}

TEST(RankSummary, OneTraceWithOneGpuIsNoRankSummary) {
  const trace::Trace t = testing::read_json(
      testing::trace_json({testing::x_event("gemm", "kernel", 0, 7, "0", "10")}));
  const RankInputs in = rank_inputs(t);
  const RankInputs* list[] = {&in};
  const RankSummary s = build_rank_summary(list, {});
  EXPECT_EQ(s.bars.size(), 1u);
  EXPECT_FALSE(s.waits);
  EXPECT_FALSE(s.has_ranks());
  // An empty window has no shares rather than a division by zero.
  const BreakdownShares none = shares_of(trace::DeviceBreakdown{});
  EXPECT_EQ(none.compute + none.communication + none.memory + none.idle, 0.0);
}

}  // namespace
}  // namespace flopline::viewer
