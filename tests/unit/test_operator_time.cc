// Operator ownership and GPU time (operator_time.h) and `--by op` rows built on it, on
// synthetic Kineto-style traces with gaps, overlaps across streams and nesting. Every
// expectation is computed independently in the test: ownership from hand-written
// lists, busy time by marking each nanosecond of a bitmap.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "flopline/trace/analysis.h"
#include "flopline/trace/chrome_reader.h"
#include "flopline/trace/operator_time.h"

namespace flopline::trace {
namespace {

// Chrome-trace text of one process (pid 100, thread 1) and its GPU (pid 0): events in
// microseconds as Kineto writes them, times given here in ns.
class KinetoText {
 public:
  void op(std::string_view name, TimeNs start, TimeNs end, std::string_view cat = "cpu_op",
          std::string_view args = "{}") {
    x(name, cat, 100, 1, start, end, args);
  }
  // A launch call on the thread and its kernel on `stream`, joined by an ac2g flow
  // (with_flow) or by "correlation" args only.
  void launch(TimeNs call, TimeNs start, TimeNs end, int stream, bool with_flow = true,
              std::string_view kernel = "kernel_k", std::string_view cat = "kernel",
              std::string_view kernel_args = "") {
    const int corr = next_corr_++;
    const std::string c = "\"correlation\": " + std::to_string(corr);
    x("cudaLaunchKernel", "cuda_runtime", 100, 1, call, call + 5, "{" + c + "}");
    std::string ka = "{" + c + ", \"stream\": " + std::to_string(stream);
    if (!kernel_args.empty()) ka += ", " + std::string(kernel_args);
    ka += "}";
    x(kernel, cat, 0, stream, start, end, ka);
    if (with_flow) {
      events_.push_back(R"({"ph":"s","id":)" + std::to_string(corr) +
                        R"(,"pid":100,"tid":1,"ts":)" + us(call) +
                        R"(,"cat":"ac2g","name":"ac2g"})");
      events_.push_back(R"({"ph":"f","id":)" + std::to_string(corr) + R"(,"pid":0,"tid":)" +
                        std::to_string(stream) + R"(,"ts":)" + us(start) +
                        R"(,"cat":"ac2g","name":"ac2g","bp":"e"})");
    }
  }
  void gpu_annotation(std::string_view name, int stream, TimeNs start, TimeNs end) {
    x(name, "gpu_user_annotation", 0, stream, start, end, "{}");
  }
  std::string text(std::string_view devices = "") const {
    std::string s = "{";
    if (!devices.empty()) s += "\"deviceProperties\": " + std::string(devices) + ",\n";
    s += "\"traceEvents\": [\n";
    for (std::size_t i = 0; i < events_.size(); ++i) s += (i ? ",\n" : "") + events_[i];
    return s + "\n]}";
  }

 private:
  static std::string us(TimeNs ns) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%lld.%03lld", static_cast<long long>(ns / 1000),
                  static_cast<long long>(ns % 1000));
    return buf;
  }
  void x(std::string_view name, std::string_view cat, int pid, int tid, TimeNs start, TimeNs end,
         std::string_view args) {
    events_.push_back(R"({"ph":"X","name":")" + std::string(name) + R"(","cat":")" +
                      std::string(cat) + R"(","pid":)" + std::to_string(pid) + R"(,"tid":)" +
                      std::to_string(tid) + R"(,"ts":)" + us(start) + R"(,"dur":)" +
                      us(end - start) + R"(,"args":)" + std::string(args) + "}");
  }
  std::vector<std::string> events_;
  int next_corr_ = 1;
};

Trace read(const std::string& text) {
  ReadResult r = read_chrome_trace_text(text, "t.json");
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error->message());
  return std::move(r.trace);
}

struct Interval {
  TimeNs start, end;
};

// The independent answers: busy = nanoseconds covered by at least one interval
// (bitmap), sum = plain sum, extent = max end - min start.
TimeNs busy_by_bitmap(const std::vector<Interval>& iv) {
  TimeNs lo = INT64_MAX, hi = INT64_MIN;
  for (const Interval& i : iv) {
    lo = std::min(lo, i.start);
    hi = std::max(hi, i.end);
  }
  if (iv.empty()) return 0;
  std::vector<char> covered(static_cast<std::size_t>(hi - lo), 0);
  for (const Interval& i : iv) {
    for (TimeNs t = i.start; t < i.end; ++t) covered[static_cast<std::size_t>(t - lo)] = 1;
  }
  return std::count(covered.begin(), covered.end(), 1);
}
TimeNs sum_of(const std::vector<Interval>& iv) {
  TimeNs s = 0;
  for (const Interval& i : iv) s += i.end - i.start;
  return s;
}
TimeNs extent_of(const std::vector<Interval>& iv) {
  TimeNs lo = INT64_MAX, hi = INT64_MIN;
  for (const Interval& i : iv) {
    lo = std::min(lo, i.start);
    hi = std::max(hi, i.end);
  }
  return iv.empty() ? 0 : hi - lo;
}

const OperatorTime* op_named(const Trace& t, const OperatorIndex& index, std::string_view name) {
  for (const OperatorTime& op : index.operators()) {
    if (t.str(t.tracks[op.slice.track].at(op.slice).name) == name) return &op;
  }
  return nullptr;
}

const StatsRow* row_named(const StatsResult& r, std::string_view name) {
  for (const StatsRow& row : r.rows) {
    if (row.name == name) return &row;
  }
  return nullptr;
}

// outer > {A, B > C}; A's two kernels overlap on two streams, C's kernel runs after a
// gap, B launches a kernel (joined by correlation only, no flow) and a copy; one kernel
// is launched outside every operator.
class NestedTrace : public ::testing::Test {
 protected:
  void SetUp() override {
    KinetoText k;
    k.op("outer", 0, 1000, "user_annotation");
    k.op("A", 10, 200, "cpu_op", R"({"flops": 600000})");
    k.launch(20, kA1.start, kA1.end, 7);
    k.launch(40, kA2.start, kA2.end, 8);
    k.op("B", 300, 600);
    k.op("C", 320, 400);
    k.launch(330, kC.start, kC.end, 7);
    k.launch(500, kB.start, kB.end, 7, /*with_flow=*/false);
    k.launch(520, copyB.start, copyB.end, 7, true, "Memcpy HtoD (Pageable -> Device)", "gpu_memcpy",
             R"("bytes": 4096)");
    k.launch(1500, unowned.start, unowned.end, 7);
    k.gpu_annotation("B", 7, kC.start, copyB.end);
    trace_ = read(k.text());
    index_ = OperatorIndex::build(trace_);
  }
  const Interval kA1{100, 300}, kA2{250, 400}, kC{1000, 1100}, kB{1200, 1250}, copyB{1300, 1310},
      unowned{1600, 1700};
  Trace trace_;
  OperatorIndex index_;
};

TEST_F(NestedTrace, BusySelfTotalAndExtentPerOperator) {
  ASSERT_TRUE(index_.owns_gpu_work());
  // Ownership written out by hand: self work and all work of each operator.
  const std::map<std::string, std::pair<std::vector<Interval>, std::vector<Interval>>> expect = {
      {"A", {{kA1, kA2}, {kA1, kA2}}},
      {"C", {{kC}, {kC}}},
      {"B", {{kB, copyB}, {kC, kB, copyB}}},
      {"outer", {{}, {kA1, kA2, kC, kB, copyB}}},
  };
  for (const auto& [name, work] : expect) {
    const OperatorTime* op = op_named(trace_, index_, name);
    ASSERT_NE(op, nullptr) << name;
    const auto& [self, all] = work;
    EXPECT_EQ(op->self_items, self.size()) << name;
    EXPECT_EQ(op->items, all.size()) << name;
    EXPECT_EQ(op->self_ns, sum_of(self)) << name;
    EXPECT_EQ(op->device_total_ns, sum_of(all)) << name;
    EXPECT_EQ(op->busy_ns, busy_by_bitmap(all)) << name;
    EXPECT_EQ(op->extent_ns, extent_of(all)) << name;
  }
  // The overlap across streams counts once; the gaps not at all.
  EXPECT_LT(op_named(trace_, index_, "A")->busy_ns, op_named(trace_, index_, "A")->device_total_ns);
  EXPECT_LT(op_named(trace_, index_, "outer")->busy_ns,
            op_named(trace_, index_, "outer")->extent_ns);
  // Parents.
  const OperatorTime* c = op_named(trace_, index_, "C");
  EXPECT_EQ(trace_.str(trace_.tracks[index_.operators()[c->parent].slice.track]
                           .at(index_.operators()[c->parent].slice)
                           .name),
            "B");
  EXPECT_EQ(c->depth, 2u);
}

TEST_F(NestedTrace, OperatorRowsUseBusyTime) {
  StatsQuery q;
  q.by = GroupBy::kOperator;
  const StatsResult r = compute_stats(trace_, q);
  EXPECT_EQ(r.categories_used, (std::vector<std::string>{"user_annotation", "cpu_op", "operator"}));
  ASSERT_EQ(r.rows.size(), 4u);
  const StatsRow* a = row_named(r, "A");
  ASSERT_NE(a, nullptr);
  const TimeNs busy_a = busy_by_bitmap({kA1, kA2});
  EXPECT_EQ(a->total_ns, busy_a);
  EXPECT_EQ(a->busy_ns, busy_a);
  EXPECT_EQ(a->self_ns, sum_of({kA1, kA2}));
  EXPECT_EQ(a->extent_ns, extent_of({kA1, kA2}));
  EXPECT_EQ(a->cpu_ns, 190);
  // TFLOP/s divides by the busy time: FLOP per ns / 1e3.
  ASSERT_TRUE(a->tflops);
  EXPECT_DOUBLE_EQ(*a->tflops, 600000.0 / static_cast<double>(busy_a) / 1e3);
  EXPECT_EQ(a->flops_source, "trace");
  const StatsRow* outer = row_named(r, "outer");
  ASSERT_NE(outer, nullptr);
  EXPECT_EQ(outer->total_ns, busy_by_bitmap({kA1, kA2, kC, kB, copyB}));
  EXPECT_EQ(outer->self_ns, 0);
  EXPECT_EQ(outer->extent_ns, extent_of({kA1, kA2, kC, kB, copyB}));
  // FLOPs of A count once in the total although outer encloses it.
  EXPECT_EQ(r.total_flops, 600000.0);
}

TEST_F(NestedTrace, GpuAnnotationCountsAsItsCpuTwin) {
  StatsQuery q;
  q.by = GroupBy::kOperator;
  q.categories = {"gpu_user_annotation", "cpu_op"};
  const StatsResult r = compute_stats(trace_, q);
  const StatsRow* b = row_named(r, "B");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->count, 1u);  // the annotation and the CPU slice are one operator
  EXPECT_EQ(b->total_ns, busy_by_bitmap({kC, kB, copyB}));
}

TEST_F(NestedTrace, ClippedRangeCountsBusyTimeInsideIt) {
  StatsQuery q;
  q.by = GroupBy::kOperator;
  q.range_begin = 1050;
  q.range_end = 1230;
  q.clip_to_range = true;
  const StatsResult r = compute_stats(trace_, q);
  // Only B's and C's work (and outer's) lies in [1050, 1230): kC [1050,1100), kB [1200,1230).
  EXPECT_EQ(row_named(r, "A"), nullptr);
  ASSERT_NE(row_named(r, "B"), nullptr);
  EXPECT_EQ(row_named(r, "B")->total_ns, 50 + 30);
  EXPECT_EQ(row_named(r, "C")->total_ns, 50);
}

TEST_F(NestedTrace, UnownedWorkAndKernelRows) {
  StatsQuery q;
  q.by = GroupBy::kName;
  const StatsResult r = compute_stats(trace_, q);
  const StatsRow* k = row_named(r, "kernel_k");
  ASSERT_NE(k, nullptr);
  EXPECT_EQ(k->count, 5u);  // the unowned one included: kernel rows are all kernels
  EXPECT_FALSE(k->busy_ns);
  // A owns two kernels: its FLOPs cannot be split, so the kernels inherit none.
  EXPECT_FALSE(k->flops);
}

// A CPU-only trace keeps CPU durations for operator rows.
TEST(OperatorTime, WithoutGpuWorkOperatorsKeepTheirCpuTime) {
  KinetoText k;
  k.op("aten::add", 0, 50);
  k.op("aten::add", 100, 130);
  const Trace t = read(k.text());
  StatsQuery q;
  q.by = GroupBy::kOperator;
  const StatsResult r = compute_stats(t, q);
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_EQ(r.rows[0].total_ns, 80);
  EXPECT_FALSE(r.rows[0].busy_ns);
}

// PyTorch-style nesting: linear > addmm, conv2d > convolution > _convolution >
// cudnn_convolution, and autocast's mm > (copy_, mm).
class TorchOps : public ::testing::Test {
 protected:
  static constexpr const char* kDevices =
      R"([{"id": 0, "name": "H", "computeMajor": 9, "computeMinor": 0, "numSms": 1,)"
      R"( "peakFlops": {"fp32": 1e12, "bf16": 4e12, "tf32": 2e12}, "peakBandwidthBytesPerSec": 1e12}])";
  void SetUp() override {
    KinetoText k;
    const std::string mm_f32 =
        R"({"Input type": ["float", "float"], "Input Dims": [[256, 128], [128, 192]]})";
    k.op(
        "aten::linear", 0, 100, "cpu_op",
        R"({"Input type": ["float", "float", "float"], "Input Dims": [[64, 128], [96, 128], [96]]})");
    k.op("aten::t", 5, 10);
    k.op(
        "aten::addmm", 20, 90, "cpu_op",
        R"({"Input type": ["float", "float", "float", "Scalar", "Scalar"], "Input Dims": [[96], [64, 128], [128, 96], [], []]})");
    k.launch(30, 1000, 1100, 7, true, "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x256x32");
    k.op("aten::conv2d", 200, 400, "cpu_op", conv_args("aten::conv2d"));
    k.op("aten::convolution", 210, 390, "cpu_op", conv_args("aten::convolution"));
    k.op("aten::_convolution", 220, 380, "cpu_op", conv_args("aten::_convolution"));
    k.op("aten::cudnn_convolution", 230, 300, "cpu_op", conv_args("aten::cudnn_convolution"));
    k.launch(240, 1200, 1300, 7, true, "cudnn_conv_kernel");
    k.op("aten::add_", 310, 370);
    k.launch(320, 1300, 1310, 7, true, "bias_add_kernel");
    // autocast: the outer mm casts its inputs (copy_ into bf16), the inner mm runs bf16.
    k.op("aten::mm", 500, 800, "cpu_op", mm_f32);
    k.op(
        "aten::copy_", 510, 540, "cpu_op",
        R"({"Input type": ["c10::BFloat16", "float", "Scalar"], "Input Dims": [[256, 128], [256, 128], []]})");
    k.launch(520, 1400, 1420, 7, true, "copy_kernel");
    k.op(
        "aten::mm", 600, 780, "cpu_op",
        R"({"Input type": ["c10::BFloat16", "c10::BFloat16"], "Input Dims": [[256, 128], [128, 192]]})");
    k.launch(610, 1500, 1600, 7, true, "bf16_gemm");
    trace_ = read(k.text(kDevices));
    index_ = OperatorIndex::build(trace_);
  }
  static std::string conv_args(std::string_view op) {
    if (op == "aten::cudnn_convolution")
      return R"({"Concrete Inputs": ["", "", "[1, 1]", "[1, 1]", "[1, 1]", "1", "False", "False", "True"],)"
             R"( "Input type": ["float", "float", "", "", "", "", "", "", ""],)"
             R"( "Input Dims": [[4, 16, 32, 32], [32, 16, 3, 3], [], [], [], [], [], [], []]})";
    if (op == "aten::conv2d")
      return R"({"Concrete Inputs": ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "1"],)"
             R"( "Input type": ["float", "float", "float", "", "", "", ""],)"
             R"( "Input Dims": [[4, 16, 32, 32], [32, 16, 3, 3], [32], [], [], [], []]})";
    return R"({"Concrete Inputs": ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1"],)"
           R"( "Input type": ["float", "float", "float", "", "", "", "", "", ""],)"
           R"( "Input Dims": [[4, 16, 32, 32], [32, 16, 3, 3], [32], [], [], [], [], [], []]})";
  }
  std::vector<const OperatorTime*> all_named(std::string_view name) const {
    std::vector<const OperatorTime*> out;
    for (const OperatorTime& op : index_.operators()) {
      if (trace_.str(trace_.tracks[op.slice.track].at(op.slice).name) == name) out.push_back(&op);
    }
    return out;
  }
  Trace trace_;
  OperatorIndex index_;
};

TEST_F(TorchOps, FlopsSitWherePyTorchPutsThem) {
  const double addmm = 2.0 * 64 * 96 * 128 + 64 * 96;
  const double conv = 2.0 * 4 * 32 * 1024 * 16 * 9 + 4.0 * 32 * 1024;
  const double mm = 2.0 * 256 * 192 * 128;
  EXPECT_FALSE(all_named("aten::linear")[0]->metrics.has_flops());  // addmm inside has them
  EXPECT_EQ(all_named("aten::addmm")[0]->metrics.flops, addmm);
  EXPECT_EQ(all_named("aten::addmm")[0]->flops_source, FlopsSource::kShapes);
  EXPECT_EQ(all_named("aten::conv2d")[0]->metrics.flops, conv);
  for (const char* inner : {"aten::convolution", "aten::_convolution", "aten::cudnn_convolution"}) {
    EXPECT_FALSE(all_named(inner)[0]->metrics.has_flops()) << inner;
  }
  // Both mm of autocast carry FLOPs (key_averages() counts both); the total counts once.
  const auto mms = all_named("aten::mm");
  ASSERT_EQ(mms.size(), 2u);
  EXPECT_EQ(mms[0]->metrics.flops, mm);
  EXPECT_EQ(mms[1]->metrics.flops, mm);
  EXPECT_TRUE(mms[0]->flops_in_total);
  EXPECT_FALSE(mms[1]->flops_in_total);
  EXPECT_DOUBLE_EQ(index_.total_flops(), addmm + conv + mm);
}

// emit_nvtx's ranges carry sizes but no dtypes: with counters, an operator takes the
// precision its kernels' counted FLOPs agree on; kernels that disagree leave it unset.
// Counted precision also outranks a dtype and a kernel name (an fp32 operator whose
// kernel is named tf32 but counted fp32 is fp32).
TEST(OperatorTime, PrecisionFromCountedKernels) {
  KinetoText k;
  const char* dims = R"({"Input Dims": [[256, 128], [128, 192]]})";
  k.op("aten::mm", 0, 100, "user_annotation", dims);
  k.launch(10, 1000, 1100, 7, true, "nvjet_gemm", "kernel", R"("precision": "tf32")");
  k.op("aten::addmm", 200, 300, "user_annotation",
       R"({"Input Dims": [[192], [256, 128], [128, 192], [], []]})");
  k.launch(210, 1200, 1300, 7, true, "nvjet_gemm", "kernel", R"("precision": "tf32")");
  k.launch(220, 1300, 1310, 7, true, "bias_kernel", "kernel", R"("precision": "fp32")");
  k.op("aten::mm", 400, 500, "cpu_op",
       R"({"Input type": ["float", "float"], "Input Dims": [[256, 128], [128, 192]]})");
  k.launch(410, 1400, 1500, 7, true, "sm90_xmma_gemm_f32f32_tf32f32_f32", "kernel",
           R"("precision": "fp32")");
  k.op("aten::mm", 600, 700, "user_annotation", dims);
  k.launch(610, 1600, 1700, 7, true, "uncounted_gemm");
  const Trace t = read(k.text());
  const OperatorIndex index = OperatorIndex::build(t);
  std::vector<std::string> precisions;
  for (const OperatorTime& op : index.operators()) precisions.push_back(op.precision);
  ASSERT_EQ(precisions.size(), 4u);
  EXPECT_EQ(precisions[0], "tf32");  // its one kernel, counted tf32
  EXPECT_EQ(precisions[1], "");      // tf32 and fp32 kernels: no one precision
  EXPECT_EQ(precisions[2], "fp32");  // counted fp32 despite the kernel's name
  EXPECT_EQ(precisions[3], "");      // nothing counted, no dtype
}

TEST_F(TorchOps, PrecisionFromDtypesCastsAndKernelNames) {
  EXPECT_EQ(all_named("aten::addmm")[0]->precision, "tf32");  // its kernel says tf32
  EXPECT_EQ(all_named("aten::conv2d")[0]->precision, "fp32");
  const auto mms = all_named("aten::mm");
  EXPECT_EQ(mms[0]->precision, "bf16");  // autocast: the inputs are cast inside it
  EXPECT_EQ(mms[1]->precision, "bf16");
}

TEST_F(TorchOps, LoneKernelsInheritCountsAndPrecision) {
  StatsQuery q;
  q.by = GroupBy::kName;
  const StatsResult r = compute_stats(trace_, q);
  const StatsRow* gemm = row_named(r, "bf16_gemm");
  ASSERT_NE(gemm, nullptr);
  ASSERT_TRUE(gemm->flops);
  EXPECT_EQ(*gemm->flops, 2.0 * 256 * 192 * 128);
  EXPECT_EQ(gemm->precision, "bf16");
  EXPECT_EQ(gemm->flops_source, "shapes");
  // % of peak against bf16's 4e12 FLOP/s, and the memory roof (bytes at 1e12 B/s).
  const double bytes = (256.0 * 128 + 128 * 192 + 256 * 192) * 2;
  const double attainable = std::max(*gemm->flops / 4e12, bytes / 1e12) * 1e9;
  ASSERT_TRUE(gemm->pct_peak);
  EXPECT_NEAR(*gemm->pct_peak, 100.0 * attainable / 100.0, 1e-9);
  // conv2d owns two kernels: they inherit its precision but not its FLOPs.
  EXPECT_FALSE(row_named(r, "cudnn_conv_kernel")->flops);
  EXPECT_FALSE(row_named(r, "copy_kernel")->flops);
}

TEST_F(TorchOps, OperatorRowsMatchKeyAveragesStyle) {
  StatsQuery q;
  q.by = GroupBy::kOperator;
  q.categories = {"cpu_op"};
  const StatsResult r = compute_stats(trace_, q);
  const StatsRow* mm = row_named(r, "aten::mm");
  ASSERT_NE(mm, nullptr);
  EXPECT_EQ(mm->count, 2u);
  EXPECT_EQ(mm->self_ns, 100);                // the inner mm's gemm; the outer's is the copy_'s
  EXPECT_EQ(mm->device_total_ns, 120 + 100);  // outer: copy + gemm; inner: gemm
  EXPECT_EQ(*mm->flops, 2 * 2.0 * 256 * 192 * 128);
  EXPECT_EQ(mm->precision, "bf16");
  const StatsRow* conv = row_named(r, "aten::conv2d");
  EXPECT_EQ(conv->self_ns, 0);
  EXPECT_EQ(conv->total_ns, 110);
  // aten::t launches nothing: left out of the GPU-time table.
  EXPECT_EQ(row_named(r, "aten::t"), nullptr);
  // The total counts the autocast mm's FLOPs once, and conv2d's once.
  EXPECT_DOUBLE_EQ(*r.total_flops, index_.total_flops());
}

TEST(OperatorTime, HostCopiesAreComparedWithTheHostLink) {
  KinetoText k;
  k.op("copy", 0, 100, "user_annotation");
  k.launch(10, 1000, 2000, 7, true, "Memcpy HtoD (Pinned -> Device)", "gpu_memcpy",
           R"("bytes": 32000)");
  k.launch(20, 3000, 4000, 7, true, "Memcpy DtoD (Device -> Device)", "gpu_memcpy",
           R"("bytes": 32000)");
  const Trace t = read(k.text(
      R"([{"id": 0, "name": "NVIDIA H200", "computeMajor": 9, "computeMinor": 0, "peakBandwidthBytesPerSec": 4.8e12}])"));
  StatsQuery q;
  q.by = GroupBy::kName;
  q.categories = {"gpu_memcpy"};
  const StatsResult r = compute_stats(t, q);
  // 32 GB/s achieved; PCIe 5.0 x16 is 32e9 * 16 * 128/130 / 8 bytes/s per direction.
  const double link = 32e9 * 16 * 128.0 / 130.0 / 8.0;
  EXPECT_NEAR(*row_named(r, "Memcpy HtoD (Pinned -> Device)")->pct_peak, 100.0 * 32e9 / link, 1e-9);
  EXPECT_NEAR(*row_named(r, "Memcpy DtoD (Device -> Device)")->pct_peak, 100.0 * 32e9 / 4.8e12,
              1e-9);
}

}  // namespace
}  // namespace flopline::trace
