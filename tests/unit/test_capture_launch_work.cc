// Which launches share a measurement (launch_work.h) and which values each kernel then
// carries (kernel_counts.h), on hand-built launches and records: two shapes on one
// persistent grid, two functions under one name, a seed that changes every launch,
// moved buffers, a launch whose time is unlike its work, communication kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "flopline/capture/kernel_counts.h"
#include "flopline/capture/launch_work.h"
#include "flopline/capture/record_decoder.h"
#include "flopline/trace/counted_basis.h"
#include "flopline/trace/json_value.h"

namespace flopline::capture {
namespace {

using trace::CountedBasis;

CountedWork work(double flops, double written, double read = 0) {
  CountedWork w;
  w.flops = flops;
  w.dram_write_bytes = written;
  w.dram_read_bytes = read;
  return w;
}

LaunchShape persistent_gemm_shape() {
  LaunchShape s;
  s.context = 1;
  s.function = 0x1000;
  s.grid[0] = 132;  // one CTA per SM, whatever the problem
  s.grid[1] = s.grid[2] = 1;
  s.block[0] = 384;
  s.block[1] = s.block[2] = 1;
  s.shared_memory = 200000;
  return s;
}

// A by-value struct as cuBLAS passes it: M, N, K, then the operands' addresses.
std::vector<std::uint64_t> gemm_words(std::uint32_t m, std::uint32_t n, std::uint32_t k,
                                      std::uint64_t a_ptr) {
  struct Params {
    std::uint32_t m, n, k, pad;
    std::uint64_t a, b, c;
  } p{m, n, k, 0, a_ptr, a_ptr + 0x100000, a_ptr + 0x200000};
  ParamLayout layout;
  layout.known = true;
  layout.params.push_back({0, sizeof(Params)});
  const void* params[] = {&p};
  std::vector<std::uint64_t> words;
  argument_words(layout, params, &words);
  return words;
}

TEST(ArgumentWords, EightByteAddressesAreLeftOutOtherValuesKept) {
  ParamLayout layout;
  layout.known = true;
  layout.params = {{0, 8}, {8, 4}, {16, 8}, {24, 12}};
  const std::uint64_t ptr = 0x7f3a40000000ull;
  const std::uint32_t n = 4096;
  const std::uint64_t seed = 67280421310721ull + (1ull << 50);  // beyond any address
  struct {
    std::uint32_t x, y, z;
  } dims{1, 2, 3};
  const void* params[] = {&ptr, &n, &seed, &dims};
  std::vector<std::uint64_t> words;
  argument_words(layout, params, &words);
  ASSERT_EQ(words.size(), 5u);  // 8, 4, 8 bytes: one word each; 12 bytes: two
  EXPECT_EQ(words[0], kAddressWord);
  EXPECT_EQ(words[1], 4096u);
  EXPECT_EQ(words[2], seed);
  EXPECT_EQ(words[3], 1u | (2ull << 32));
  EXPECT_EQ(words[4], 3u);

  // The same from a packed buffer (cuLaunchKernel's `extra`).
  unsigned char buffer[40] = {};
  std::memcpy(buffer + 0, &ptr, 8);
  std::memcpy(buffer + 8, &n, 4);
  std::memcpy(buffer + 16, &seed, 8);
  std::memcpy(buffer + 24, &dims, 12);
  std::vector<std::uint64_t> packed;
  argument_words_packed(layout, buffer, sizeof buffer, &packed);
  EXPECT_EQ(packed, words);
  // A parameter past the buffer's end is left out rather than read.
  argument_words_packed(layout, buffer, 20, &packed);
  EXPECT_EQ(packed.size(), 2u);
}

TEST(ArgumentWords, ANullPointerIsNotAnAddress) {
  // An optional operand (a bias): present or absent is other work.
  ParamLayout layout;
  layout.known = true;
  layout.params = {{0, 8}};
  const std::uint64_t bias = 0x7f3a40000000ull, none = 0;
  std::vector<std::uint64_t> with, without;
  const void* a[] = {&bias};
  const void* b[] = {&none};
  argument_words(layout, a, &with);
  argument_words(layout, b, &without);
  EXPECT_NE(with, without);
}

// Only the driver tells an operand's address in cuBLAS's struct from M and N side by
// side: a position it recognised once holds an address in every later launch (moved or
// not), a position it never recognised keeps its value, and it is asked about a position
// at most kChecks times.
TEST(StructAddressWords, PositionsTheDriverRecognisesBecomeAddresses) {
  struct Params {
    std::uint32_t m, n, k, pad;
    std::uint64_t a, b, bias;
  };
  ParamLayout layout;
  layout.known = true;
  layout.params = {{0, sizeof(Params)}, {40, 8}};
  StructAddressWords addresses(layout);
  std::vector<std::uint64_t> device = {0x7f0000000000ull, 0x7f0000100000ull, 0x7f0000200000ull,
                                       0x7f0040000000ull, 0x7f0040100000ull};
  int asked = 0;
  auto is_device = [&](std::uint64_t v) {
    ++asked;
    return std::find(device.begin(), device.end(), v) != device.end();
  };
  auto words_of = [&](std::uint32_t m, std::uint32_t n, std::uint64_t a, std::uint64_t b,
                      std::uint64_t bias, std::uint64_t top) {
    Params p{m, n, 1024, 0, a, b, bias};
    const void* params[] = {&p, &top};
    std::vector<std::uint64_t> w;
    argument_words(layout, params, &w);
    addresses.apply(&w, is_device);
    return w;
  };
  // M = 4096, N = 3072 read as an address; the driver does not know it.
  const auto first = words_of(4096, 3072, device[0], device[1], device[2], device[3]);
  ASSERT_EQ(first.size(), 6u);  // five struct words, one 8-byte parameter
  EXPECT_EQ(addresses.address_words(), 3u);
  EXPECT_EQ(first[0], 4096u | (3072ull << 32));
  EXPECT_EQ(first[2], kAddressWord);
  EXPECT_EQ(first[3], kAddressWord);
  EXPECT_EQ(first[4], kAddressWord);
  EXPECT_EQ(first[5], kAddressWord);  // an 8-byte parameter, never asked about
  // Moved operands: the same words, without asking again about them.
  const int before = asked;
  const auto moved = words_of(4096, 3072, device[3], device[4], device[0], device[1]);
  EXPECT_EQ(moved, first);
  EXPECT_EQ(asked, before + 1);  // only the size pair, not yet asked about enough times
  // Another N is other work; no bias (null) is other work.
  EXPECT_NE(words_of(4096, 1024, device[0], device[1], device[2], device[3]), first);
  const auto no_bias = words_of(4096, 3072, device[0], device[1], 0, device[3]);
  EXPECT_NE(no_bias, first);
  EXPECT_EQ(no_bias[4], 0u);
  // The size pair is asked about at most kChecks times.
  for (int i = 0; i < 20; ++i) words_of(4096, 3072, device[0], device[1], device[2], device[3]);
  EXPECT_LE(asked, 3 + StructAddressWords::kChecks);
  EXPECT_EQ(addresses.address_words(), 3u);
}

TEST(ArgumentWords, SizesPackedInAStructAreNotTakenForAddresses) {
  // M = 4096 and N = 3072 side by side read as 0x00000c0000001000, in the address range:
  // only whole 8-byte parameters are tested for addresses.
  const auto qkv = gemm_words(4096, 3072, 1024, 0x7f0000000000ull);
  const auto up = gemm_words(4096, 4096, 1024, 0x7f0000000000ull);
  EXPECT_NE(qkv, up);
  EXPECT_TRUE(looks_like_address(qkv[0]));  // the packed pair itself would pass the test
}

TEST(WorkSampler, TwoShapesOnOnePersistentGridAreMeasuredApart) {
  WorkSampler s(1);
  const LaunchShape shape = persistent_gemm_shape();
  const auto qkv = gemm_words(4096, 3072, 1024, 0x7f0000000000ull);
  const auto up = gemm_words(4096, 4096, 1024, 0x7f0000000000ull);
  const auto proj = gemm_words(4096, 1024, 1024, 0x7f0000000000ull);
  const SampleDecision a = s.decide(shape, qkv, true);
  ASSERT_TRUE(a.measure);
  s.measured(a.measurement, work(2.0 * 4096 * 3072 * 1024, 4096.0 * 3072 * 2));
  const SampleDecision b = s.decide(shape, up, true);
  ASSERT_TRUE(b.measure);  // same function, grid and block: other work
  s.measured(b.measurement, work(2.0 * 4096 * 4096 * 1024, 4096.0 * 4096 * 2));
  const SampleDecision c = s.decide(shape, proj, true);
  ASSERT_TRUE(c.measure);
  s.measured(c.measurement, work(2.0 * 4096 * 1024 * 1024, 4096.0 * 1024 * 2));
  EXPECT_EQ(s.learned_words(), 0u);  // their counts differ: nothing learned
  // Later launches take their own shape's measurement, never the latest one's.
  for (int step = 0; step < 3; ++step) {
    const SampleDecision again_qkv = s.decide(shape, qkv, true);
    EXPECT_FALSE(again_qkv.measure);
    EXPECT_EQ(again_qkv.measurement, a.measurement);
    EXPECT_TRUE(again_qkv.exact);
    EXPECT_EQ(s.decide(shape, proj, true).measurement, c.measurement);
    EXPECT_EQ(s.decide(shape, up, true).measurement, b.measurement);
  }
  EXPECT_EQ(s.keys(), 3u);
}

TEST(WorkSampler, AMeasurementInPartsContinuesAtItsKeysNextLaunches) {
  WorkSampler s(1);
  const LaunchShape shape = persistent_gemm_shape();
  const auto qkv = gemm_words(4096, 3072, 1024, 0x7f0000000000ull);
  const auto up = gemm_words(4096, 4096, 1024, 0x7f0000000000ull);
  const SampleDecision a = s.decide(shape, qkv, true);
  ASSERT_TRUE(a.measure);
  EXPECT_FALSE(a.continuing);
  s.continues(a.measurement);
  // Another key is not the one continued.
  const SampleDecision b = s.decide(shape, up, true);
  EXPECT_TRUE(b.measure);
  EXPECT_FALSE(b.continuing);
  EXPECT_NE(b.measurement, a.measurement);
  // The key's next launch measures the next part under the same id; one launch only.
  const SampleDecision a2 = s.decide(shape, qkv, true);
  EXPECT_TRUE(a2.measure);
  EXPECT_TRUE(a2.continuing);
  EXPECT_EQ(a2.measurement, a.measurement);
  const SampleDecision between = s.decide(shape, qkv, true);
  EXPECT_FALSE(between.measure);
  EXPECT_EQ(between.measurement, a.measurement);
  s.measured(a.measurement, work(2.0 * 4096 * 3072 * 1024, 4096.0 * 3072 * 2));
  const SampleDecision after = s.decide(shape, qkv, true);
  EXPECT_FALSE(after.measure);
  EXPECT_EQ(after.measurement, a.measurement);
  // A measurement whose part failed starts again as a new one.
  s.continues(b.measurement);
  s.failed(b.measurement);
  const SampleDecision b2 = s.decide(shape, up, true);
  EXPECT_TRUE(b2.measure);
  EXPECT_FALSE(b2.continuing);
  EXPECT_NE(b2.measurement, b.measurement);
  EXPECT_EQ(s.keys(), 2u);
}

TEST(WorkSampler, BuffersThatMoveDoNotMakeNewWork) {
  WorkSampler s(1);
  LaunchShape shape;
  shape.function = 7;
  shape.grid[0] = 1024;
  ParamLayout layout;
  layout.known = true;
  layout.params = {{0, 8}, {8, 8}, {16, 8}};  // in, out, n
  std::vector<std::uint64_t> words;
  auto launch = [&](std::uint64_t in, std::uint64_t out, std::uint64_t n) {
    const void* params[] = {&in, &out, &n};
    argument_words(layout, params, &words);
    return s.decide(shape, words, true);
  };
  const SampleDecision first = launch(0x7f0000000000ull, 0x7f0000100000ull, 1 << 20);
  ASSERT_TRUE(first.measure);
  s.measured(first.measurement, work(1 << 20, 4 << 20));
  const SampleDecision moved = launch(0x7f0000a00000ull, 0x7f0000e00000ull, 1 << 20);
  EXPECT_FALSE(moved.measure);
  EXPECT_EQ(moved.measurement, first.measurement);
  // Another n is other work.
  EXPECT_TRUE(launch(0x7f0000000000ull, 0x7f0000100000ull, 1 << 21).measure);
}

TEST(WorkSampler, ASeedThatChangesEveryLaunchIsLearnedAfterTwoMeasurements) {
  WorkSampler s(1);
  LaunchShape shape;
  shape.function = 9;
  shape.grid[0] = 512;
  // dropout: n, then a Philox state {seed, offset} passed by value.
  auto words = [](std::uint64_t n, std::uint64_t offset) {
    return std::vector<std::uint64_t>{n, 1234, offset};
  };
  const SampleDecision a = s.decide(shape, words(1 << 20, 0), true);
  ASSERT_TRUE(a.measure);
  s.measured(a.measurement, work(1 << 20, 5 << 20, 4 << 20));
  const SampleDecision b = s.decide(shape, words(1 << 20, 4), true);
  ASSERT_TRUE(b.measure);  // a new offset is a new key until the counts say otherwise
  s.measured(b.measurement, work(1 << 20, 5 << 20, 4 << 20));
  EXPECT_EQ(s.learned_words(), 1u);
  for (std::uint64_t offset = 8; offset < 80; offset += 4) {
    const SampleDecision d = s.decide(shape, words(1 << 20, offset), true);
    EXPECT_FALSE(d.measure) << offset;
    EXPECT_EQ(d.measurement, b.measurement);  // the latest measurement of the work
  }
  // The size still chooses the work.
  EXPECT_TRUE(s.decide(shape, words(1 << 21, 100), true).measure);
}

// A word learned in one grid is one field of the function's parameters: its other grids
// leave it out from their first launch on. Another function with the same grid and
// words learns for itself, and sizes keep choosing the work in every grid.
TEST(WorkSampler, AWordLearnedInOneGridIsLeftOutInTheFunctionsOtherGrids) {
  WorkSampler s(1);
  LaunchShape small;
  small.context = 1;
  small.function = 0x2000;
  small.grid[0] = 64;  // a grid sized to the problem (not a persistent kernel)
  LaunchShape large = small;
  large.grid[0] = 256;
  LaunchShape other = small;
  other.function = 0x3000;
  // A struct of M, N, K and the operand addresses, which move between steps.
  const std::uint64_t a0 = 0x7f0000000000ull, a1 = 0x7f0040000000ull;
  const SampleDecision first = s.decide(small, gemm_words(512, 512, 512, a0), true);
  ASSERT_TRUE(first.measure);
  s.measured(first.measurement, work(2.0 * 512 * 512 * 512, 512 * 512 * 2));
  const SampleDecision moved = s.decide(small, gemm_words(512, 512, 512, a1), true);
  ASSERT_TRUE(moved.measure);  // not learned yet
  s.measured(moved.measurement, work(2.0 * 512 * 512 * 512, 512 * 512 * 2));
  EXPECT_EQ(s.learned_words(), 3u);  // the three operand addresses

  // The larger grid: its first launch is measured, a moved one shares it.
  const SampleDecision big = s.decide(large, gemm_words(2048, 2048, 512, a0), true);
  ASSERT_TRUE(big.measure);
  s.measured(big.measurement, work(2.0 * 2048 * 2048 * 512, 2048 * 2048 * 2));
  const SampleDecision big_moved = s.decide(large, gemm_words(2048, 2048, 512, a1 + 0x1000), true);
  EXPECT_FALSE(big_moved.measure);
  EXPECT_EQ(big_moved.measurement, big.measurement);
  // Another K on that grid is other work.
  EXPECT_TRUE(s.decide(large, gemm_words(2048, 2048, 1024, a1), true).measure);

  // Another function with the same grid has learned nothing.
  const SampleDecision o = s.decide(other, gemm_words(512, 512, 512, a0), true);
  ASSERT_TRUE(o.measure);
  s.measured(o.measurement, work(2.0 * 512 * 512 * 512, 512 * 512 * 2));
  EXPECT_TRUE(s.decide(other, gemm_words(512, 512, 512, a1), true).measure);
}

// FLOPLINE_COUNTERS_DEBUG says why a launch was a new key: the first of its shape, or
// the not-yet-learned words in which it differs from the closest earlier measurement.
TEST(WorkSampler, ExplainNamesTheWordsThatMadeANewKey) {
  WorkSampler s(1);
  LaunchShape shape;
  shape.function = 3;
  const SampleDecision a = s.decide(shape, std::vector<std::uint64_t>{10, 20, 30}, true);
  EXPECT_EQ(s.explain(a.measurement), "first of its shape");
  s.measured(a.measurement, work(100, 4096 * 8));
  const SampleDecision b = s.decide(shape, std::vector<std::uint64_t>{10, 21, 30}, true);
  EXPECT_EQ(s.explain(b.measurement), "differs from measurement 0 (done) in 1 words: [1] 14->15");
  s.measured(b.measurement, work(100, 4096 * 8));  // same work: word 1 is learned
  const SampleDecision c = s.decide(shape, std::vector<std::uint64_t>{10, 99, 31}, true);
  ASSERT_TRUE(c.measure);
  EXPECT_EQ(s.explain(c.measurement), "differs from measurement 0 (done) in 1 words: [2] 1e->1f");
  EXPECT_EQ(s.explain(12345), "");
}

TEST(WorkSampler, DifferentWorkOrTooManyDifferingWordsTeachNothing) {
  WorkSampler s(1);
  LaunchShape shape;
  shape.function = 11;
  const SampleDecision a = s.decide(shape, {{10, 20, 30, 40, 50, 60}}, true);
  s.measured(a.measurement, work(1000, 4096 * 4));
  // One word differs, the counts too: that word is the work.
  const SampleDecision b = s.decide(shape, {{11, 20, 30, 40, 50, 60}}, true);
  s.measured(b.measurement, work(1100, 4096 * 4));
  EXPECT_EQ(s.learned_words(), 0u);
  // More than kMaxLearnedWords words differ with equal counts: too many to tell which
  // do not matter.
  std::vector<std::uint64_t> many(kMaxLearnedWords + 2, 1), other(kMaxLearnedWords + 2, 2);
  LaunchShape wide = shape;
  wide.function = 15;
  s.measured(s.decide(wide, many, true).measurement, work(1000, 4096 * 4));
  s.measured(s.decide(wide, other, true).measurement, work(1000, 4096 * 4));
  EXPECT_EQ(s.learned_words(), 0u);
  // Addresses inside a struct do not count towards the limit: six moved operands.
  LaunchShape gemm = shape;
  gemm.function = 12;
  std::vector<std::uint64_t> step1 = {4096,           0x7f0000000000, 0x7f0000100000,
                                      0x7f0000200000, 0x7f0000300000, 0x7f0000400000,
                                      0x7f0000500000};
  std::vector<std::uint64_t> step2 = step1;
  for (std::size_t i = 1; i < step2.size(); ++i) step2[i] += 0x40000000;
  const SampleDecision g1 = s.decide(gemm, step1, true);
  s.measured(g1.measurement, work(1e9, 1e6));
  const SampleDecision g2 = s.decide(gemm, step2, true);
  ASSERT_TRUE(g2.measure);
  s.measured(g2.measurement, work(1e9, 1e6));
  EXPECT_EQ(s.learned_words(), 6u);
  std::vector<std::uint64_t> step3 = step1;
  for (std::size_t i = 1; i < step3.size(); ++i) step3[i] += 0x80000000;
  EXPECT_FALSE(s.decide(gemm, step3, true).measure);
  step3[0] = 2048;  // but another size is other work
  EXPECT_TRUE(s.decide(gemm, step3, true).measure);
  // A launch that did no work teaches nothing either.
  const SampleDecision d = s.decide(shape, {{12, 0, 0, 0, 0, 0}}, true);
  s.measured(d.measurement, work(0, 0));
  const SampleDecision e = s.decide(shape, {{13, 0, 0, 0, 0, 0}}, true);
  s.measured(e.measurement, work(0, 0));
  EXPECT_EQ(s.learned_words(), 6u);
}

TEST(WorkSampler, CapturedFailedAndUnreadableLaunches) {
  WorkSampler s(1);
  LaunchShape shape;
  shape.function = 13;
  const std::vector<std::uint64_t> w = {1, 2};
  // Cancelled (the stream was being captured): the next launch is measured.
  const SampleDecision a = s.decide(shape, w, true);
  s.cancel(a.measurement);
  const SampleDecision b = s.decide(shape, w, true);
  ASSERT_TRUE(b.measure);
  // Failed: measured again, at most kMaxFailures times.
  s.failed(b.measurement);
  for (std::uint32_t i = 1; i < WorkSampler::kMaxFailures; ++i) {
    const SampleDecision retry = s.decide(shape, w, true);
    ASSERT_TRUE(retry.measure);
    s.failed(retry.measurement);
  }
  EXPECT_FALSE(s.decide(shape, w, true).measure);
  // Without a parameter layout the key is the shape alone, and never exact.
  LaunchShape other = shape;
  other.function = 14;
  const SampleDecision u = s.decide(other, {}, false);
  ASSERT_TRUE(u.measure);
  s.measured(u.measurement, work(5, 0));
  const SampleDecision v = s.decide(other, {}, false);
  EXPECT_FALSE(v.measure);
  EXPECT_FALSE(v.exact);
  EXPECT_EQ(v.measurement, u.measurement);
}

TEST(WorkSampler, EveryLaunchWhenAsked) {
  WorkSampler s(0);
  LaunchShape shape;
  for (int i = 0; i < 5; ++i) {
    const SampleDecision d = s.decide(shape, {{1}}, true);
    EXPECT_TRUE(d.measure);
    EXPECT_EQ(d.measurement, static_cast<std::uint32_t>(i));
  }
  EXPECT_EQ(s.keys(), 0u);  // nothing kept
}

TEST(CounterExclusion, CommunicationKernelsByNameAndTheUsersPattern) {
  const CounterExclusion none;
  EXPECT_EQ(none.why("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"),
            "communication");
  EXPECT_EQ(none.why("_Z32ncclDevKernel_AllGather_RING_LLP"), "communication");
  EXPECT_EQ(none.why("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"), "communication");
  EXPECT_EQ(none.why("void nvshmemi_barrier_kernel<int>()"), "communication");
  EXPECT_EQ(none.why("ampere_sgemm_128x64_nn"), "");
  EXPECT_EQ(none.why("triton_poi_fused_add_0"), "");
  const CounterExclusion custom("cross_device_reduce|^my_allreduce");
  EXPECT_EQ(custom.why("void cross_device_reduce_1stage<float, 2>()"),
            "excluded by --counters-exclude");
  EXPECT_EQ(custom.why("my_allreduce_kernel"), "excluded by --counters-exclude");
  EXPECT_EQ(custom.why("not_my_allreduce"), "");
  std::string error;
  EXPECT_TRUE(valid_exclude_pattern("a|b", &error));
  EXPECT_FALSE(valid_exclude_pattern("(unclosed", &error));
  EXPECT_FALSE(error.empty());
}

TEST(UnlikeItsWork, TheSpreadOrAFifthOfTheMedian) {
  // A tight kernel: a fifth of the median decides.
  EXPECT_FALSE(unlike_its_work(110000, 100000, 500));
  EXPECT_TRUE(unlike_its_work(133000, 100000, 500));  // a 4/3 larger GEMM
  EXPECT_TRUE(unlike_its_work(25000, 100000, 500));   // a quarter of the work
  // A noisy one: four robust standard deviations.
  EXPECT_FALSE(unlike_its_work(160000, 100000, 12000));
  EXPECT_TRUE(unlike_its_work(175000, 100000, 12000));
  // Tiny kernels: a microsecond either way is noise.
  EXPECT_FALSE(unlike_its_work(2800, 2000, 0));
}

// Decoding: kernels take the measurement their launch named.

CounterPlan plan() {
  return plan_counter_metrics(
      std::vector<std::string>{"sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32", "dram__bytes_read",
                               "lts__t_sectors_srcunit_tex_op_write"});
}

std::vector<double> values(const CounterPlan& p, double tensor) {
  std::vector<double> v(p.metrics.size(), 0);
  for (std::size_t i = 0; i < p.metrics.size(); ++i) {
    if (p.metrics[i].name.find("hgmma") != std::string::npos) v[i] = tensor;
  }
  return v;
}

void kernel(RecordBatch& b, std::uint32_t correlation, const std::string& name, TimeNs start,
            TimeNs dur, std::uint32_t graph = 0) {
  KernelRecord k;
  k.name = name;
  k.start = start;
  k.end = start + dur;
  k.correlation_id = correlation;
  k.stream = 7;
  k.grid_x = 132;
  k.grid_y = k.grid_z = 1;
  k.block_x = 384;
  k.block_y = k.block_z = 1;
  k.graph_id = graph;
  b.kernels.push_back(k);
}

TEST(KernelCounts, EachKernelTakesTheMeasurementItsLaunchNamed) {
  RecordBatch b;
  b.counters.requested = true;
  b.counters.per_signature = 1;
  b.counters.plan = plan();
  // Two GEMMs of one persistent kernel, measured in turn, then each launched again:
  // by signature both later launches would take the latest (the second GEMM's) values.
  kernel(b, 1, "nvjet_sm90_tst_256x128", 1000, 300000);
  kernel(b, 2, "nvjet_sm90_tst_256x128", 400000, 100000);
  kernel(b, 3, "nvjet_sm90_tst_256x128", 600000, 300000);
  kernel(b, 4, "nvjet_sm90_tst_256x128", 1000000, 100000);
  b.counter_records.push_back({1, 0, values(b.counters.plan, 34e9), 0});
  b.counter_records.push_back({2, 0, values(b.counters.plan, 8.6e9), 1});
  b.inferred_launches.push_back({3, 0, 0, true});
  b.inferred_launches.push_back({4, 0, 1, true});
  const std::vector<KernelCounts> c = assign_kernel_counts(b);
  EXPECT_EQ(c[0].basis, CountedBasis::kMeasured);
  EXPECT_EQ(c[2].basis, CountedBasis::kSameWork);
  EXPECT_EQ(c[2].record, 0u);
  EXPECT_EQ(c[3].basis, CountedBasis::kSameWork);
  EXPECT_EQ(c[3].record, 1u);
}

TEST(KernelCounts, TwoFunctionsUnderOneNameKeepTheirOwnValues) {
  // A Triton kernel compiled for fp32 and bf16 inputs: one name, grid and block.
  RecordBatch b;
  b.counters.requested = true;
  b.counters.plan = plan();
  kernel(b, 1, "add_kernel", 1000, 5000);   // fp32 variant, measured
  kernel(b, 2, "add_kernel", 10000, 4000);  // bf16 variant, measured
  kernel(b, 3, "add_kernel", 20000, 5000);  // fp32 again
  kernel(b, 4, "add_kernel", 30000, 4000);  // bf16 again
  b.counter_records.push_back({1, 0, values(b.counters.plan, 1.0), 10});
  b.counter_records.push_back({2, 0, values(b.counters.plan, 2.0), 11});
  b.inferred_launches.push_back({3, 0, 10, true});
  b.inferred_launches.push_back({4, 0, 11, true});
  const auto c = assign_kernel_counts(b);
  EXPECT_EQ(c[2].record, 0u);
  EXPECT_EQ(c[3].record, 1u);
}

TEST(KernelCounts, GraphsUnreadArgumentsAndUncoveredLaunchesAreEstimates) {
  RecordBatch b;
  b.counters.requested = true;
  b.counters.plan = plan();
  kernel(b, 1, "gemm", 1000, 5000);      // measured
  kernel(b, 2, "gemm", 10000, 5000);     // no source named
  kernel(b, 3, "gemm", 20000, 5000, 5);  // in a graph
  kernel(b, 4, "gemm", 30000, 5000);     // arguments not read
  kernel(b, 5, "other", 40000, 5000);    // nothing measured of its kind
  b.counter_records.push_back({1, 0, values(b.counters.plan, 1.0), 0});
  b.inferred_launches.push_back({4, 0, 0, false});
  const auto c = assign_kernel_counts(b);
  EXPECT_EQ(c[1].basis, CountedBasis::kEstimated);
  EXPECT_EQ(c[1].note, CountNote::kNoSameWork);
  EXPECT_EQ(c[2].basis, CountedBasis::kEstimated);
  EXPECT_EQ(c[2].note, CountNote::kGraph);
  EXPECT_EQ(c[3].basis, CountedBasis::kEstimated);
  EXPECT_EQ(c[3].note, CountNote::kArgumentsUnread);
  EXPECT_EQ(c[4].basis, CountedBasis::kNoCounts);
  EXPECT_EQ(c[4].record, kNoId);
}

TEST(KernelCounts, ALaunchWhoseTimeIsUnlikeItsWorkBecomesAnEstimate) {
  RecordBatch b;
  b.counters.requested = true;
  b.counters.plan = plan();
  kernel(b, 1, "k", 0, 100000);
  b.counter_records.push_back({1, 0, values(b.counters.plan, 1.0), 0});
  const TimeNs durations[] = {100000, 101000, 99000, 100500, 300000, 99500};
  for (std::uint32_t i = 0; i < 6; ++i) {
    kernel(b, 10 + i, "k", 1000000 * (i + 1), durations[i]);
    b.inferred_launches.push_back({10 + i, 0, 0, true});
  }
  const auto c = assign_kernel_counts(b);
  for (std::uint32_t i = 1; i <= 6; ++i) {
    const bool outlier = durations[i - 1] == 300000;
    EXPECT_EQ(c[i].basis, outlier ? CountedBasis::kEstimated : CountedBasis::kSameWork) << i;
    if (outlier) {
      EXPECT_EQ(c[i].note, CountNote::kUnlikeItsWork);
      EXPECT_NEAR(c[i].time_ratio, 3.0, 0.05);
    }
  }
}

std::string kernel_args(const trace::Trace& t, std::string_view name) {
  for (const trace::Track& track : t.tracks)
    for (const auto& row : track.rows)
      for (const trace::Slice& s : row)
        if (t.str(s.cat) == "kernel" && t.str(s.name) == name)
          return std::string(t.args.json(s.args));
  return {};
}

TEST(CountedTrace, CommunicationKernelsAreMarkedAndCarryNoValues) {
  RecordBatch b;
  b.process_id = 1;
  b.counters.requested = true;
  b.counters.plan = plan();
  b.counters.exclude = "^custom_allreduce";
  kernel(b, 1, "gemm", 1000, 5000);
  kernel(b, 2, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL", 10000, 50000);
  kernel(b, 3, "custom_allreduce_kernel", 70000, 5000);
  kernel(b, 4, "gemm_with_estimate", 80000, 5000, 3);
  kernel(b, 5, "gemm_with_estimate", 90000, 5000);
  b.counter_records.push_back({1, 0, values(b.counters.plan, 2e9), 0});
  b.counter_records.push_back({5, 0, values(b.counters.plan, 1e9), 1});
  const trace::Trace t = decode_to_trace(b);
  const std::string nccl = kernel_args(t, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL");
  auto text = [](std::string_view args, std::string_view key) {
    const auto m = trace::json_member(args, key);
    return m ? std::string(trace::json_string(*m).value_or("")) : std::string();
  };
  EXPECT_EQ(text(nccl, "flops source"), "not counted: communication");
  EXPECT_FALSE(trace::json_member(nccl, "flops").has_value());
  EXPECT_EQ(text(kernel_args(t, "custom_allreduce_kernel"), "flops source"),
            "not counted: excluded by --counters-exclude");
  const std::string estimate = kernel_args(t, "gemm_with_estimate");
  EXPECT_EQ(text(estimate, "flops source"), "counters (estimated)");
  EXPECT_NE(text(estimate, "counters note").find("CUDA graph"), std::string::npos);

  const trace::CountedCoverage cov = trace::counted_coverage(t);
  EXPECT_EQ(cov.kernel_ns, 5000 + 50000 + 5000 + 5000 + 5000);
  EXPECT_EQ(cov.measured_ns, 10000);
  EXPECT_EQ(cov.estimated_ns, 5000);
  EXPECT_EQ(cov.not_counted_ns, 55000);
  EXPECT_EQ(cov.same_work_ns, 0);
  EXPECT_NE(trace::counted_coverage_line(cov).find("7.1% estimated"), std::string::npos)
      << trace::counted_coverage_line(cov);
}

}  // namespace
}  // namespace flopline::capture
