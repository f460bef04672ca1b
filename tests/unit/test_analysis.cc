// Slice aggregation (analysis.h) on synthetic traces whose answers are worked out by
// hand in each test.
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "flopline/trace/analysis.h"
#include "flopline/trace/args.h"
#include "flopline/trace/builder.h"

namespace flopline::trace {
namespace {

// A trace with one GPU stream (process 0 = device 0) and one CPU thread. Slices are
// laid end to end on their track unless a start is given, so nothing nests.
class Synth {
 public:
  Synth() : b_(trace_) {
    gpu_proc_ = b_.process(std::int64_t{0});
    gpu_ = b_.track(gpu_proc_, 7, TrackKind::kGpuStream);
    cpu_proc_ = b_.process(std::int64_t{1234});
    cpu_ = b_.track(cpu_proc_, 1234);
  }
  // Options of one slice, chained: Opt().at(100).counts(1e9, 1e6).prec("tf32").cpu().
  struct Opt {
    std::optional<TimeNs> start;
    std::optional<SliceMetrics> metrics;
    std::string precision;  // "" = no precision arg
    bool on_cpu = false;
    Opt& at(TimeNs t) {
      start = t;
      return *this;
    }
    Opt& counts(double flops, double bytes) {
      metrics = SliceMetrics{flops, bytes};
      return *this;
    }
    Opt& prec(std::string p) {
      precision = std::move(p);
      return *this;
    }
    Opt& cpu() {
      on_cpu = true;
      return *this;
    }
  };
  void add(std::string_view name, std::string_view cat, TimeNs dur) { add(name, cat, dur, Opt()); }
  void add(std::string_view name, std::string_view cat, TimeNs dur, const Opt& o) {
    TimeNs& cursor = o.on_cpu ? cpu_cursor_ : gpu_cursor_;
    Slice s;
    s.start = o.start.value_or(cursor);
    s.dur = dur;
    cursor = s.start + dur + 1;
    s.name = trace_.strings.intern(name);
    s.cat = trace_.strings.intern(cat);
    if (o.metrics) s.metrics = b_.add_metrics(*o.metrics);
    if (!o.precision.empty()) {
      ArgsBuilder a;
      a.add("precision", std::string_view(o.precision));
      s.args = trace_.args.add_json(a.finish());
    }
    b_.add_slice(o.on_cpu ? cpu_ : gpu_, s);
  }
  Trace& finish() {
    b_.finalize();
    // Said explicitly rather than left to the builder: these tests are about what
    // analysis does with a GPU process of device 0.
    trace_.processes[gpu_proc_].is_gpu = true;
    trace_.processes[gpu_proc_].device = 0;
    return trace_;
  }
  Trace& trace() { return trace_; }

 private:
  Trace trace_;
  TraceBuilder b_;
  std::uint32_t gpu_proc_ = 0, cpu_proc_ = 0, gpu_ = 0, cpu_ = 0;
  TimeNs gpu_cursor_ = 1000, cpu_cursor_ = 1000;
};
using Opt = Synth::Opt;

const StatsRow* find_row(const StatsResult& r, std::string_view name) {
  for (const StatsRow& row : r.rows) {
    if (row.name == name) return &row;
  }
  return nullptr;
}

StatsQuery by_name(std::vector<std::string> cats = {}) {
  StatsQuery q;
  q.categories = std::move(cats);
  return q;
}

// The device used by the % of peak tests: 100 TFLOP/s tf32, 1 TB/s.
DeviceProperties test_device(std::int32_t id = 0) {
  DeviceProperties d;
  d.id = id;
  d.name = "test GPU";
  d.peak_flops = {{"tf32", 100e12}, {"bf16", 200e12}};
  d.peak_bytes_per_s = 1e12;
  return d;
}

TEST(Analysis, CountsTotalsMinMaxAverage) {
  Synth s;
  for (TimeNs d : {10, 20, 30, 41}) s.add("gemm", "kernel", d);
  s.add("copy", "kernel", 5);
  const StatsResult r = compute_stats(s.finish(), by_name());
  ASSERT_EQ(r.rows.size(), 2u);
  const StatsRow& g = r.rows[0];
  EXPECT_EQ(g.name, "gemm");
  EXPECT_EQ(g.count, 4u);
  EXPECT_EQ(g.total_ns, 101);
  EXPECT_EQ(g.avg_ns, 25);  // 25.25 rounds to 25
  EXPECT_EQ(g.min_ns, 10);
  EXPECT_EQ(g.max_ns, 41);
  EXPECT_EQ(r.total_ns, 106);
  EXPECT_EQ(r.slices_considered, 5u);
  EXPECT_EQ(r.rows[1].avg_ns, 5);
}

TEST(Analysis, AverageRoundsHalvesUp) {
  Synth s;
  s.add("k", "kernel", 1);
  s.add("k", "kernel", 2);  // 1.5 -> 2
  EXPECT_EQ(compute_stats(s.finish(), by_name()).rows[0].avg_ns, 2);
}

TEST(Analysis, MedianOddCountIsTheMiddleValue) {
  Synth s;
  for (TimeNs d : {50, 10, 40, 20, 30}) s.add("k", "kernel", d);
  EXPECT_EQ(compute_stats(s.finish(), by_name()).rows[0].median_ns, 30);
}

TEST(Analysis, MedianEvenCountIsTheFlooredMeanOfTheTwoMiddleValues) {
  Synth s;
  for (TimeNs d : {40, 10, 21, 100}) s.add("k", "kernel", d);  // middle 21 and 40 -> 30.5
  EXPECT_EQ(compute_stats(s.finish(), by_name()).rows[0].median_ns, 30);
  Synth t;
  for (TimeNs d : {7, 3}) t.add("k", "kernel", d);
  EXPECT_EQ(compute_stats(t.finish(), by_name()).rows[0].median_ns, 5);
}

TEST(Analysis, StdDevIsThePopulationDeviation) {
  Synth s;
  // Mean 5, squared deviations sum to 32, /8 = 4, sqrt = 2 (the sample deviation
  // would be 2.14 and round to 2 as well, so a second case tells them apart).
  for (TimeNs d : {2, 4, 4, 4, 5, 5, 7, 9}) s.add("a", "kernel", d);
  // {0, 10}: population 5, sample 7.07.
  s.add("b", "kernel", 0);
  s.add("b", "kernel", 10);
  // One instance: 0.
  s.add("c", "kernel", 3);
  const StatsResult r = compute_stats(s.finish(), by_name());
  EXPECT_EQ(find_row(r, "a")->std_ns, 2);
  EXPECT_EQ(find_row(r, "b")->std_ns, 5);
  EXPECT_EQ(find_row(r, "c")->std_ns, 0);
}

TEST(Analysis, PercentagesSumTo100AndFollowTotals) {
  Synth s;
  s.add("a", "kernel", 1);
  s.add("b", "kernel", 2);
  s.add("c", "kernel", 7);
  const StatsResult r = compute_stats(s.finish(), by_name());
  double sum = 0;
  for (const StatsRow& row : r.rows) sum += row.pct;
  EXPECT_NEAR(sum, 100.0, 1e-9);
  EXPECT_DOUBLE_EQ(find_row(r, "c")->pct, 70.0);
  EXPECT_DOUBLE_EQ(find_row(r, "a")->pct, 10.0);
}

TEST(Analysis, RowsSortByTotalDescendingThenName) {
  Synth s;
  s.add("zeta", "kernel", 5);
  s.add("beta", "kernel", 9);
  s.add("alpha", "kernel", 5);
  const StatsResult r = compute_stats(s.finish(), by_name());
  ASSERT_EQ(r.rows.size(), 3u);
  EXPECT_EQ(r.rows[0].name, "beta");
  EXPECT_EQ(r.rows[1].name, "alpha");
  EXPECT_EQ(r.rows[2].name, "zeta");
}

TEST(Analysis, ZeroTotalGivesZeroPercent) {
  Synth s;
  s.add("instant-ish", "kernel", 0);
  const StatsResult r = compute_stats(s.finish(), by_name());
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0].pct, 0.0);
  EXPECT_EQ(r.rows[0].total_ns, 0);
}

TEST(Analysis, RangeTakesSlicesWhoseStartIsInside) {
  Synth s;
  s.add("before", "kernel", 50, Opt().at(100));     // starts before 200, ends inside: out
  s.add("at_begin", "kernel", 10, Opt().at(200));   // start == begin: in
  s.add("inside", "kernel", 500, Opt().at(300));    // ends after the range end: still in
  s.add("at_end", "kernel", 10, Opt().at(1000));    // start == end: out (half-open)
  s.add("cpu", "kernel", 10, Opt().at(999).cpu());  // another track: in
  StatsQuery q = by_name();
  q.range_begin = 200;
  q.range_end = 1000;
  const StatsResult r = compute_stats(s.finish(), q);
  EXPECT_EQ(find_row(r, "before"), nullptr);
  EXPECT_NE(find_row(r, "at_begin"), nullptr);
  ASSERT_NE(find_row(r, "inside"), nullptr);
  EXPECT_EQ(find_row(r, "inside")->total_ns, 500);  // counted in full
  EXPECT_EQ(find_row(r, "at_end"), nullptr);
  EXPECT_NE(find_row(r, "cpu"), nullptr);
  EXPECT_EQ(r.slices_considered, 3u);
}

TEST(Analysis, OpenEndedRanges) {
  Synth s;
  s.add("a", "kernel", 10, Opt().at(100));
  s.add("b", "kernel", 10, Opt().at(200));
  StatsQuery from = by_name();
  from.range_begin = 150;
  EXPECT_EQ(compute_stats(s.finish(), from).rows.size(), 1u);
  StatsQuery until = by_name();
  until.range_end = 150;
  const StatsResult r = compute_stats(s.trace(), until);
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0].name, "a");
}

TEST(Analysis, NestedSlicesAreAllCounted) {
  Synth s;
  s.add("outer", "cpu_op", 100, Opt().at(0).cpu());
  s.add("inner", "cpu_op", 10, Opt().at(10).cpu());
  s.add("inner", "cpu_op", 10, Opt().at(50).cpu());
  const StatsResult r = compute_stats(s.finish(), by_name({"cpu_op"}));
  EXPECT_EQ(r.total_ns, 120);
  EXPECT_EQ(find_row(r, "inner")->count, 2u);
}

TEST(Analysis, RatesUseOnlyTheTimeOfInstancesThatCarryCounts) {
  Synth s;
  // 2e9 FLOPs in 1 ms = 2e12 FLOP/s = 2 TFLOP/s; the instance without counts adds
  // time but must not dilute the rate.
  s.add("mm", "kernel", 1'000'000, Opt().counts(2e9, 4e6));
  s.add("mm", "kernel", 5'000'000);
  // bytes only: 3e6 bytes in 1 us = 3e12 B/s = 3000 GB/s.
  s.add("copy", "kernel", 1'000, Opt().counts(-1, 3e6));
  const StatsResult r = compute_stats(s.finish(), by_name());
  const StatsRow* mm = find_row(r, "mm");
  ASSERT_TRUE(mm->flops && mm->tflops && mm->bytes && mm->gbps);
  EXPECT_DOUBLE_EQ(*mm->flops, 2e9);
  EXPECT_DOUBLE_EQ(*mm->tflops, 2.0);
  EXPECT_DOUBLE_EQ(*mm->gbps, 4.0);  // 4e6 bytes / 1e6 ns
  const StatsRow* copy = find_row(r, "copy");
  EXPECT_FALSE(copy->flops.has_value());
  EXPECT_FALSE(copy->tflops.has_value());
  EXPECT_DOUBLE_EQ(*copy->gbps, 3000.0);
}

TEST(Analysis, UnknownCountsStayEmpty) {
  Synth s;
  s.add("k", "kernel", 100);
  s.trace().devices.push_back(test_device());
  const StatsResult res = compute_stats(s.finish(), by_name());
  ASSERT_FALSE(res.rows.empty());
  const StatsRow& r = res.rows[0];
  EXPECT_FALSE(r.flops || r.bytes || r.tflops || r.gbps || r.pct_peak);
}

TEST(Analysis, CountsOverZeroTimeGiveNoRate) {
  Synth s;
  s.add("k", "kernel", 0, Opt().counts(1e6, 1e6));
  const StatsResult res = compute_stats(s.finish(), by_name());
  ASSERT_FALSE(res.rows.empty());
  const StatsRow& r = res.rows[0];
  EXPECT_TRUE(r.flops.has_value());
  EXPECT_FALSE(r.tflops.has_value());
  EXPECT_FALSE(r.gbps.has_value());
}

TEST(Analysis, PercentOfPeakComputeBound) {
  Synth s;
  s.trace().devices.push_back(test_device());
  // 1e9 FLOPs at 100 TFLOP/s = 10 us; 1e6 bytes at 1 TB/s = 1 us: compute bound.
  // Took 20 us -> 50 %.
  s.add("mm", "kernel", 20'000, Opt().counts(1e9, 1e6).prec("tf32"));
  const StatsResult res = compute_stats(s.finish(), by_name());
  ASSERT_FALSE(res.rows.empty());
  const StatsRow& r = res.rows[0];
  ASSERT_TRUE(r.pct_peak.has_value());
  EXPECT_NEAR(*r.pct_peak, 50.0, 1e-9);
}

TEST(Analysis, PercentOfPeakMemoryBoundUsesTheRoofline) {
  Synth s;
  s.trace().devices.push_back(test_device());
  // 1e6 FLOPs = 10 ns of compute, 1e9 bytes = 1 ms of memory: attainable is the
  // memory roof. Took 4 ms -> 25 %.
  s.add("ew", "kernel", 4'000'000, Opt().counts(1e6, 1e9).prec("TF32"));
  const StatsResult res = compute_stats(s.finish(), by_name());
  ASSERT_FALSE(res.rows.empty());
  const StatsRow& r = res.rows[0];
  ASSERT_TRUE(r.pct_peak.has_value());
  EXPECT_NEAR(*r.pct_peak, 25.0, 1e-9);
}

TEST(Analysis, PercentOfPeakFromBytesAlone) {
  Synth s;
  s.trace().devices.push_back(test_device());
  // 5e8 bytes at 1 TB/s = 0.5 ms; took 1 ms -> 50 %; GB/s 500 of 1000.
  s.add("copy", "kernel", 1'000'000, Opt().counts(-1, 5e8));
  const StatsResult res = compute_stats(s.finish(), by_name());
  ASSERT_FALSE(res.rows.empty());
  const StatsRow& r = res.rows[0];
  ASSERT_TRUE(r.pct_peak.has_value());
  EXPECT_NEAR(*r.pct_peak, 50.0, 1e-9);
  EXPECT_NEAR(*r.gbps, 500.0, 1e-9);
}

TEST(Analysis, PercentOfPeakNeverGuessesThePrecision) {
  Synth s;
  s.trace().devices.push_back(test_device());
  s.add("noprec", "kernel", 1000, Opt().counts(1e9, 1e6));
  s.add("unknownprec", "kernel", 1000, Opt().counts(1e9, 1e6).prec("fp4"));
  const StatsResult r = compute_stats(s.finish(), by_name());
  EXPECT_FALSE(find_row(r, "noprec")->pct_peak.has_value());
  EXPECT_FALSE(find_row(r, "unknownprec")->pct_peak.has_value());
  EXPECT_TRUE(find_row(r, "noprec")->tflops.has_value());  // the rate is still known
}

TEST(Analysis, PercentOfPeakOverInstancesWithAKnownPeak) {
  Synth s;
  s.trace().devices.push_back(test_device());
  // Two instances: bf16 (200 TFLOP/s) 2e9 FLOPs = 10 us in 40 us, and one without a
  // precision. Only the first counts: 25 %.
  s.add("mm", "kernel", 40'000, Opt().counts(2e9, -1).prec("torch.bfloat16"));
  s.add("mm", "kernel", 10, Opt().counts(2e9, -1));
  const StatsResult res = compute_stats(s.finish(), by_name());
  ASSERT_FALSE(res.rows.empty());
  const StatsRow& r = res.rows[0];
  ASSERT_TRUE(r.pct_peak.has_value());
  EXPECT_NEAR(*r.pct_peak, 25.0, 1e-9);
}

TEST(Analysis, PercentOfPeakNeedsTheSlicesDevice) {
  // The GPU process is device 0 but the table only has device 3: unknown.
  Synth s;
  s.trace().devices.push_back(test_device(3));
  s.add("mm", "kernel", 20'000, Opt().counts(1e9, -1).prec("tf32"));
  EXPECT_FALSE(compute_stats(s.finish(), by_name()).rows[0].pct_peak.has_value());

  // A CPU-side operator takes the trace's only device.
  Synth one;
  one.trace().devices.push_back(test_device(3));
  one.add("op", "cpu_op", 20'000, Opt().counts(1e9, -1).prec("tf32").cpu());
  const StatsResult res = compute_stats(one.finish(), by_name({"cpu_op"}));
  ASSERT_FALSE(res.rows.empty());
  const StatsRow& r = res.rows[0];
  ASSERT_TRUE(r.pct_peak.has_value());
  EXPECT_NEAR(*r.pct_peak, 50.0, 1e-9);

  // ... but with two devices it cannot tell which.
  Synth two;
  two.trace().devices.push_back(test_device(0));
  two.trace().devices.push_back(test_device(1));
  two.add("op", "cpu_op", 20'000, Opt().counts(1e9, -1).prec("tf32").cpu());
  EXPECT_FALSE(compute_stats(two.finish(), by_name({"cpu_op"})).rows[0].pct_peak.has_value());
}

TEST(Analysis, DefaultCategoryForNamesIsKernelWhenPresent) {
  Synth s;
  s.add("k", "kernel", 10);
  s.add("memcpy", "gpu_memcpy", 10);
  s.add("launch", "cuda_runtime", 10, Opt().cpu());
  const StatsResult r = compute_stats(s.finish(), by_name());
  EXPECT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.categories_used, std::vector<std::string>{"kernel"});
  EXPECT_FALSE(r.all_categories);
}

TEST(Analysis, DefaultCategoryForNamesIsEverythingWithoutKernels) {
  Synth s;
  s.add("a", "Source", 10, Opt().cpu());
  s.add("b", "", 10, Opt().cpu());
  const StatsResult r = compute_stats(s.finish(), by_name());
  EXPECT_EQ(r.rows.size(), 2u);
  EXPECT_TRUE(r.all_categories);
  EXPECT_TRUE(r.categories_used.empty());
}

TEST(Analysis, DefaultCategoriesForOperators) {
  Synth with_gpu;
  with_gpu.add("aten::mm", "gpu_user_annotation", 10);
  with_gpu.add("aten::mm", "cpu_op", 10, Opt().cpu());
  StatsQuery q;
  q.by = GroupBy::kOperator;
  const StatsResult r = compute_stats(with_gpu.finish(), q);
  // The operators on their threads, not their GPU extents (gpu_user_annotation), whose
  // length counts the idle gaps between an operator's kernels.
  EXPECT_EQ(r.categories_used, (std::vector<std::string>{"user_annotation", "cpu_op", "operator"}));
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0].count, 1u);

  Synth cpu_only;
  cpu_only.add("aten::mm", "cpu_op", 10, Opt().cpu());
  cpu_only.add("step", "user_annotation", 10, Opt().at(100).cpu());
  cpu_only.add("aten::add", "Operator", 10, Opt().at(200).cpu());  // Kineto 2021
  cpu_only.add("cudaLaunchKernel", "cuda_runtime", 10, Opt().at(300).cpu());
  const StatsResult c = compute_stats(cpu_only.finish(), q);
  EXPECT_EQ(c.rows.size(), 3u);
  EXPECT_EQ(find_row(c, "cudaLaunchKernel"), nullptr);
}

TEST(Analysis, GroupByCategoryTakesEverything) {
  Synth s;
  s.add("k1", "kernel", 10);
  s.add("k2", "kernel", 5);
  s.add("m", "gpu_memcpy", 7);
  StatsQuery q;
  q.by = GroupBy::kCategory;
  const StatsResult r = compute_stats(s.finish(), q);
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.rows[0].name, "kernel");
  EXPECT_EQ(r.rows[0].count, 2u);
  EXPECT_EQ(r.rows[0].total_ns, 15);
  EXPECT_TRUE(r.all_categories);
}

TEST(Analysis, ExplicitCategoriesOverrideAndMatchLoosely) {
  Synth s;
  s.add("k", "Kernel", 10);  // the 2021 Kineto spelling
  s.add("m", "gpu_memcpy", 10);
  s.add("t", "foo,kernel", 10);  // a Chrome tag list
  s.add("x", "kernels", 10);     // not the same word
  const StatsResult r = compute_stats(s.finish(), by_name({"kernel", "GPU_MEMCPY"}));
  EXPECT_EQ(r.rows.size(), 3u);
  EXPECT_EQ(find_row(r, "x"), nullptr);
  EXPECT_EQ(r.categories_used, (std::vector<std::string>{"kernel", "GPU_MEMCPY"}));
}

TEST(Analysis, CategoriesThatMatchNothingGiveNoRows) {
  Synth s;
  s.add("k", "kernel", 10);
  const StatsResult r = compute_stats(s.finish(), by_name({"nccl"}));
  EXPECT_TRUE(r.rows.empty());
  EXPECT_EQ(r.total_ns, 0);
  EXPECT_EQ(r.slices_considered, 0u);
}

TEST(Analysis, EmptyTrace) {
  Synth s;
  const StatsResult r = compute_stats(s.finish(), by_name());
  EXPECT_TRUE(r.rows.empty());
  EXPECT_TRUE(r.all_categories);
}

TEST(Analysis, CategoryMatching) {
  EXPECT_TRUE(category_matches("kernel", "kernel"));
  EXPECT_TRUE(category_matches("Kernel", "kernel"));
  EXPECT_TRUE(category_matches("a, kernel ,b", "KERNEL"));
  EXPECT_FALSE(category_matches("kernels", "kernel"));
  EXPECT_FALSE(category_matches("", "kernel"));
  EXPECT_FALSE(category_matches("a,b", "a,b,c"));
}

TEST(Analysis, PrecisionNames) {
  EXPECT_EQ(normalize_precision("TF32"), "tf32");
  EXPECT_EQ(normalize_precision("torch.float32"), "fp32");
  EXPECT_EQ(normalize_precision("bfloat16"), "bf16");
  EXPECT_EQ(normalize_precision(" half "), "fp16");
  EXPECT_EQ(normalize_precision("torch.float8_e4m3fn"), "fp8");
  EXPECT_EQ(normalize_precision("double"), "fp64");
  EXPECT_EQ(normalize_precision("int8"), "int8");
}

TEST(Analysis, SeveralTracesMergeByNameWithExactMedians) {
  Synth a;
  for (TimeNs d : {1, 2, 100}) a.add("k", "kernel", d);
  a.add("only_a", "kernel", 5);
  Synth b;
  for (TimeNs d : {3, 4, 200}) b.add("k", "kernel", d);
  StatsAccumulator acc(GroupBy::kName);
  acc.add(a.finish(), by_name());
  acc.add(b.finish(), by_name());
  const StatsResult r = acc.finish();
  const StatsRow* k = find_row(r, "k");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->count, 6u);
  EXPECT_EQ(k->total_ns, 310);
  EXPECT_EQ(k->median_ns, 3);  // {1,2,3,4,100,200}: (3+4)/2 floored
  EXPECT_EQ(k->max_ns, 200);
  EXPECT_NE(find_row(r, "only_a"), nullptr);
  EXPECT_EQ(r.slices_considered, 7u);
  // The accumulator is reusable after finish().
  EXPECT_TRUE(acc.finish().rows.empty());
}

TEST(Analysis, HugeDurationsDoNotOverflow) {
  Synth s;
  const TimeNs big = INT64_MAX / 2;
  for (int i = 0; i < 3; ++i) s.add("big", "kernel", big, Opt().at(0));
  s.add("small", "kernel", 1'000'000'000'000'000'000, Opt().at(0).cpu());
  const StatsResult r = compute_stats(s.finish(), by_name());
  const StatsRow* row = find_row(r, "big");
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->total_ns, INT64_MAX);  // saturated
  EXPECT_EQ(row->avg_ns, big);          // from the exact 128-bit sum
  EXPECT_EQ(row->median_ns, big);
  EXPECT_EQ(row->std_ns, 0);
  EXPECT_GT(row->pct, 90.0);
  EXPECT_LT(row->pct, 100.0);
}

TEST(Analysis, ManySlicesMatchASimpleRecount) {
  // A pseudo-random trace checked against a straightforward recount.
  Synth s;
  std::vector<std::vector<TimeNs>> durs(7);
  std::uint64_t x = 88172645463325252ull;
  for (int i = 0; i < 20000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const int k = static_cast<int>(x % 7);
    const TimeNs d = static_cast<TimeNs>((x >> 8) % 100000);
    durs[k].push_back(d);
    s.add(std::string("k").append(std::to_string(k)), "kernel", d);
  }
  const StatsResult r = compute_stats(s.finish(), by_name());
  ASSERT_EQ(r.rows.size(), 7u);
  for (int k = 0; k < 7; ++k) {
    std::vector<TimeNs> v = durs[k];
    std::sort(v.begin(), v.end());
    const StatsRow* row = find_row(r, std::string("k").append(std::to_string(k)));
    ASSERT_NE(row, nullptr);
    EXPECT_EQ(row->count, v.size());
    EXPECT_EQ(row->total_ns, std::accumulate(v.begin(), v.end(), TimeNs{0}));
    const std::size_t n = v.size();
    const TimeNs med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    EXPECT_EQ(row->median_ns, med);
    EXPECT_EQ(row->min_ns, v.front());
    EXPECT_EQ(row->max_ns, v.back());
  }
}

}  // namespace
}  // namespace flopline::trace
