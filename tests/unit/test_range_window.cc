// A top-level range read as a time window of its process (operator_time.h,
// window_busy_ns): on a synthetic trace where a training step's range sits on the main
// thread and the backward's kernels are launched from a second thread, as PyTorch's
// autograd does. The expected times are computed here from the launch list, by the
// rule written out in the test and a bitmap of covered nanoseconds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "flopline/trace/analysis.h"
#include "flopline/trace/chrome_reader.h"
#include "flopline/trace/operator_time.h"

namespace flopline::trace {
namespace {

struct Range {
  std::string name;
  int pid, tid;
  TimeNs start, end;
};
// A launch call on a CPU thread and the kernel it launched (joined by "correlation").
struct Launch {
  int pid, tid;
  TimeNs call_start, call_end;
  int gpu_pid, stream;
  TimeNs start, end;
};

std::string us(TimeNs ns) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%lld.%03lld", static_cast<long long>(ns / 1000),
                static_cast<long long>(ns % 1000));
  return buf;
}

std::string event(std::string_view name, std::string_view cat, int pid, int tid, TimeNs start,
                  TimeNs end, const std::string& args) {
  return R"({"ph":"X","name":")" + std::string(name) + R"(","cat":")" + std::string(cat) +
         R"(","pid":)" + std::to_string(pid) + R"(,"tid":)" + std::to_string(tid) + R"(,"ts":)" +
         us(start) + R"(,"dur":)" + us(end - start) + R"(,"args":)" + args + "}";
}

std::string trace_text(const std::vector<Range>& ranges, const std::vector<Launch>& launches) {
  std::string s = R"({"traceEvents": [)";
  bool first = true;
  auto add = [&](const std::string& e) {
    s += (first ? "\n" : ",\n") + e;
    first = false;
  };
  for (const Range& r : ranges)
    add(event(r.name, "user_annotation", r.pid, r.tid, r.start, r.end, "{}"));
  int corr = 1;
  for (const Launch& l : launches) {
    const std::string c = R"({"correlation": )" + std::to_string(corr++) + "}";
    add(event("cudaLaunchKernel", "cuda_runtime", l.pid, l.tid, l.call_start, l.call_end, c));
    add(event("kernel_" + std::to_string(corr), "kernel", l.gpu_pid, l.stream, l.start, l.end, c));
  }
  return s + "\n]}";
}

// The rule, independently: the nanoseconds covered by kernels whose launch call lies
// inside the range on any thread of the range's process, clipped to [lo, hi).
TimeNs window_by_bitmap(const Range& r, const std::vector<Launch>& launches, TimeNs lo, TimeNs hi) {
  std::vector<char> covered(static_cast<std::size_t>(hi - lo), 0);
  for (const Launch& l : launches) {
    if (l.pid != r.pid || l.call_start < r.start || l.call_end > r.end) continue;
    for (TimeNs t = std::max(l.start, lo); t < std::min(l.end, hi); ++t)
      covered[static_cast<std::size_t>(t - lo)] = 1;
  }
  return std::count(covered.begin(), covered.end(), 1);
}

class RangeWindow : public ::testing::Test {
 protected:
  void SetUp() override {
    ReadResult r = read_chrome_trace_text(trace_text(ranges_, launches_), "t.json");
    ASSERT_TRUE(r.ok()) << (r.ok() ? "" : r.error->message());
    trace_ = std::move(r.trace);
    index_ = OperatorIndex::build(trace_);
  }
  const OperatorTime* op(std::string_view name) const {
    for (const OperatorTime& o : index_.operators()) {
      if (trace_.str(trace_.tracks[o.slice.track].at(o.slice).name) == name) return &o;
    }
    return nullptr;
  }
  std::uint32_t op_index(std::string_view name) const {
    return static_cast<std::uint32_t>(op(name) - index_.operators().data());
  }

  // Process 100: the step on its main thread (1), with the forward nested in it; the
  // backward's launches on thread 2, one overlapping the forward's kernel on another
  // stream; one launch that ends after the step, one after it inside the optimizer's
  // range on thread 2. Process 200 launches during the step too, on its own GPU.
  const std::vector<Range> ranges_ = {
      {"step 1", 100, 1, 0, 1'000'000},
      {"forward", 100, 1, 50'000, 400'000},
      {"optimizer", 100, 2, 1'150'000, 1'500'000},
      {"other step", 200, 3, 0, 1'000'000},
  };
  const std::vector<Launch> launches_ = {
      {100, 1, 100'000, 105'000, 0, 7, 200'000, 300'000},          // forward's kernel
      {100, 2, 450'000, 455'000, 0, 8, 250'000, 320'000},          // backward, overlaps it
      {100, 2, 500'000, 505'000, 0, 7, 600'000, 800'000},          // backward
      {100, 2, 995'000, 1'005'000, 0, 7, 1'000'000, 1'100'000},    // call ends after the step
      {100, 2, 1'200'000, 1'205'000, 0, 7, 1'300'000, 1'400'000},  // in the optimizer
      {200, 3, 400'000, 405'000, 1, 9, 250'000, 350'000},          // another process
  };
  Trace trace_;
  OperatorIndex index_;
};

TEST_F(RangeWindow, AStepCoversWhatEveryThreadOfItsProcessLaunched) {
  const OperatorTime* step = op("step 1");
  ASSERT_NE(step, nullptr);
  // Owned (its own thread): the forward's kernel only.
  EXPECT_EQ(step->busy_ns, 100'000);
  // The window: the forward's kernel and the backward's two, overlapping ones once.
  const TimeNs want = window_by_bitmap(ranges_[0], launches_, 0, 2'000'000);
  EXPECT_EQ(want, 320'000);
  ASSERT_TRUE(step->window_busy_ns.has_value());
  EXPECT_EQ(*step->window_busy_ns, want);
  // A range nested in another is no window.
  ASSERT_NE(op("forward"), nullptr);
  EXPECT_FALSE(op("forward")->window_busy_ns.has_value());
  // A top-level range on the second thread: its own thread's launch.
  ASSERT_NE(op("optimizer"), nullptr);
  EXPECT_EQ(op("optimizer")->window_busy_ns, window_by_bitmap(ranges_[2], launches_, 0, 2'000'000));
  EXPECT_EQ(*op("optimizer")->window_busy_ns, 100'000);
  // The other process's step: only its own process's kernel.
  ASSERT_NE(op("other step"), nullptr);
  EXPECT_EQ(op("other step")->window_busy_ns,
            window_by_bitmap(ranges_[3], launches_, 0, 2'000'000));
  // Clipped to a range, as the viewer's ruler does.
  EXPECT_EQ(index_.window_busy_within(op_index("step 1"), 0, 700'000),
            window_by_bitmap(ranges_[0], launches_, 0, 700'000));
  EXPECT_EQ(index_.window_busy_within(op_index("forward"), 0, 700'000), 0);
}

TEST_F(RangeWindow, OperatorRowsShowTheWindowOfTopLevelRanges) {
  StatsQuery q;
  q.by = GroupBy::kOperator;
  const StatsResult res = compute_stats(trace_, q);
  auto row = [&](std::string_view name) -> const StatsRow* {
    for (const StatsRow& r : res.rows) {
      if (r.name == name) return &r;
    }
    return nullptr;
  };
  ASSERT_NE(row("step 1"), nullptr);
  EXPECT_EQ(row("step 1")->total_ns, 100'000);  // busy time, as before
  EXPECT_EQ(row("step 1")->window_busy_ns, window_by_bitmap(ranges_[0], launches_, 0, 2'000'000));
  ASSERT_NE(row("forward"), nullptr);
  EXPECT_FALSE(row("forward")->window_busy_ns.has_value());
  // With the viewer's clipping, the window is clipped too.
  q.range_begin = 0;
  q.range_end = 700'000;
  q.clip_to_range = true;
  const StatsResult clipped = compute_stats(trace_, q);
  bool seen = false;
  for (const StatsRow& r : clipped.rows) {
    if (r.name != "step 1") continue;
    seen = true;
    EXPECT_EQ(r.window_busy_ns, window_by_bitmap(ranges_[0], launches_, 0, 700'000));
  }
  EXPECT_TRUE(seen);
}

}  // namespace
}  // namespace flopline::trace
