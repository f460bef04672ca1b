// Unit tests of the app's GL-free parts: command line, kernel-name shortening, slice
// descriptions, the frame pacer, frame statistics, the file browser, the PNG writer
// and text files (whole or not at all), and --select's slice lookup.
#include <gtest/gtest.h>
#include <png.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "app_options.h"
#include "app_state.h"
#include "counted_info.h"
#include "file_browser.h"
#include "flopline/trace/chrome_reader.h"
#include "flopline/trace/stats_schema.h"
#include "frame_pacer.h"
#include "frame_stats.h"
#include "png_writer.h"
#include "short_name.h"
#include "slice_info.h"
#include "viewer_app.h"

namespace flopline::viewer {
namespace {

ParsedOptions parse(std::initializer_list<std::string> a) {
  const std::vector<std::string> v(a);
  return parse_app_options(v);
}

TEST(AppOptions, TracesAndScreenshotOptions) {
  const ParsedOptions p =
      parse({"a.json", "b.json.gz", "--screenshot", "out.png", "--size", "800x600", "--range",
             "1ms:2.5ms", "--select", "gemm", "--window", "table"});
  ASSERT_TRUE(p.ok()) << p.error;
  EXPECT_EQ(p.options.traces, (std::vector<std::string>{"a.json", "b.json.gz"}));
  EXPECT_EQ(p.options.screenshot, "out.png");
  EXPECT_EQ(p.options.width, 800);
  EXPECT_EQ(p.options.height, 600);
  ASSERT_TRUE(p.options.range);
  EXPECT_EQ(p.options.range->begin, 1'000'000);
  EXPECT_EQ(p.options.range->end, 2'500'000);
  EXPECT_EQ(p.options.select, "gemm");
  EXPECT_EQ(p.options.window, ShotWindow::kTable);
  EXPECT_FALSE(p.options.by);
  EXPECT_EQ(parse({"a.json", "--by", "name"}).options.by, trace::GroupBy::kName);
  EXPECT_EQ(parse({"a.json", "--by", "op"}).options.by, trace::GroupBy::kOperator);
  EXPECT_EQ(parse({"a.json", "--by", "category"}).options.by, trace::GroupBy::kCategory);
  // The words of `flopline stats --by` (stats_schema.h), aliases included.
  for (const trace::StatsGrouping& g : trace::stats_groupings()) {
    EXPECT_EQ(parse({"a.json", "--by", std::string(g.name)}).options.by, g.by) << g.name;
    for (std::string_view a : g.aliases)
      EXPECT_EQ(parse({"a.json", "--by", std::string(a)}).options.by, g.by) << a;
  }
  EXPECT_EQ(parse({"a.json", "--by", "stream"}).options.by, trace::GroupBy::kStream);
  EXPECT_EQ(parse({"a.json", "--by", "device"}).options.by, trace::GroupBy::kDevice);
  const std::string bad = parse({"a.json", "--by", "thread"}).error;
  EXPECT_NE(bad.find("--by 'thread' is not a grouping; use " + trace::stats_grouping_names()),
            std::string::npos)
      << bad;
  // The diff window compares kernels or operators only.
  EXPECT_NE(parse({"a.json", "b.json", "--diff", "--by", "stream"}).error.find("not GPU streams"),
            std::string::npos);
}

TEST(AppOptions, ErrorsNameTheProblem) {
  EXPECT_NE(parse({"--bogus"}).error.find("--bogus"), std::string::npos);
  EXPECT_NE(parse({"--size", "800"}).error.find("WxH"), std::string::npos);
  EXPECT_NE(parse({"--size", "10x10"}).error.find("64"), std::string::npos);
  EXPECT_NE(parse({"--window", "graph"}).error.find("timeline, table, roofline"),
            std::string::npos);
  EXPECT_FALSE(parse({"--range", "5ms:1ms"}).ok());
  EXPECT_NE(parse({"t.json", "--by", "kernel"}).error.find("name, op, category"),
            std::string::npos);
  EXPECT_FALSE(parse({"--bench"}).ok());  // needs a trace
  EXPECT_EQ(parse({"t.json", "--bench"}).options.bench_frames, 100);
  EXPECT_EQ(parse({"t.json", "--bench", "--bench-frames", "100"}).options.bench_frames, 100);
  EXPECT_FALSE(parse({"t.json", "--bench", "--bench-frames", "0"}).ok());
  EXPECT_FALSE(parse({"t.json", "--bench", "--bench-frames", "ten"}).ok());
  EXPECT_FALSE(parse({"t.json", "--bench-frames", "100"}).ok());  // only with --bench
  EXPECT_FALSE(parse({"t.json", "--bench", "--screenshot", "x.png"}).ok());
  EXPECT_FALSE(parse({"t.json", "--csv", "x.csv"}).ok());  // only with --screenshot
  EXPECT_FALSE(parse({"--screenshot"}).ok());              // needs a value
  EXPECT_TRUE(parse({"--help"}).options.help);
}

TEST(AppOptions, DiffTakesTwoRuns) {
  const ParsedOptions p = parse({"--diff", "a.json", "run_b", "--by", "op", "--window", "diff"});
  ASSERT_TRUE(p.ok()) << p.error;
  EXPECT_TRUE(p.options.diff);
  EXPECT_EQ(p.options.traces, (std::vector<std::string>{"a.json", "run_b"}));
  EXPECT_EQ(p.options.window, ShotWindow::kDiff);
  EXPECT_EQ(parse({"r0.json", "r1.json", "--window", "ranks"}).options.window, ShotWindow::kRanks);
  EXPECT_NE(parse({"--diff", "a.json"}).error.find("two runs"), std::string::npos);
  EXPECT_NE(parse({"--diff", "a", "b", "c"}).error.find("got 3"), std::string::npos);
  EXPECT_NE(parse({"--diff", "a", "b", "--by", "category"}).error.find("not categories"),
            std::string::npos);
  EXPECT_NE(parse({"a.json", "--window", "diff"}).error.find("needs --diff"), std::string::npos);
}

TEST(ParseSize, Bounds) {
  EXPECT_EQ(parse_size("1600x900"), (std::pair{1600, 900}));
  EXPECT_FALSE(parse_size("1600x"));
  EXPECT_FALSE(parse_size("x900"));
  EXPECT_FALSE(parse_size("63x900"));
  EXPECT_FALSE(parse_size("1600x900x3"));
  EXPECT_FALSE(parse_size("16384x16385"));
  // At most 8192x8192 pixels in all, in any shape.
  EXPECT_EQ(parse_size("16384x4096"), (std::pair{16384, 4096}));
  EXPECT_EQ(parse_size("8192x8192"), (std::pair{8192, 8192}));
  EXPECT_FALSE(parse_size("16384x16384"));
  EXPECT_FALSE(parse_size("8192x8193"));
}

TEST(ShortKernelName, TemplatesParametersAndNamespaces) {
  EXPECT_EQ(short_kernel_name(
                "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
                "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, "
                "at::detail::Array<char*, 1>)"),
            "vectorized_elementwise_kernel<...>");
  EXPECT_EQ(short_kernel_name(
                "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, "
                "false>(float*, float const*, int, int, int, bool const*, int, bool)"),
            "softmax_warp_forward<...>");
  EXPECT_EQ(short_kernel_name(
                "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_128x128_16x4_tn_align4>"
                "(cutlass_80_tensorop_s1688gemm_128x128_16x4_tn_align4::Params)"),
            "cutlass::Kernel2<...>");
  EXPECT_EQ(short_kernel_name("at::foo(int)"), "at::foo");
}

TEST(ShortKernelName, PlainNamesUnchanged) {
  for (const char* n :
       {"ampere_sgemm_128x64_tn", "aten::linear", "Memcpy HtoD (Pageable -> Device)",
        "autograd::engine::evaluate_function: AddmmBackward0", "triton_red_fused__softmax_1",
        "operator<<(std::ostream&, X)", ""}) {
    EXPECT_EQ(short_kernel_name(n), n);
  }
}

TEST(FormatSi, ThreeSignificantDigits) {
  EXPECT_EQ(format_si(0), "0");
  EXPECT_EQ(format_si(999), "999");
  EXPECT_EQ(format_si(1.37e11), "137 G");
  EXPECT_EQ(format_si(2e6), "2.00 M");
  EXPECT_EQ(format_si(12345), "12.3 k");
  EXPECT_EQ(format_si(999.6), "1.00 k");
}

trace::Trace read(std::string_view json) {
  trace::ReadResult r = trace::read_chrome_trace_text(json, "t.json");
  EXPECT_TRUE(r.ok());
  return std::move(r.trace);
}

TEST(DescribeSlice, MetricsAndArgs) {
  const trace::Trace t = read(R"({"traceEvents":[
    {"ph":"X","name":"gemm","cat":"kernel","pid":0,"tid":7,"ts":1000,"dur":2,
     "args":{"flops":4e9,"bytes":1e6,"grid":[128,1,1],"stream":7,"note":"a\"b"}}]})");
  const std::vector<const trace::Trace*> list{&t};
  const SliceHandle h{.trace = 0, .ref = {.track = 0, .row = 0, .index = 0}};
  const SliceInfo info =
      describe_slice(list, h, R"({"grid":[128,1,1],"stream":7,"note":"a\"b"})", 999'000);
  EXPECT_EQ(info.name, "gemm");
  EXPECT_EQ(info.category, "kernel");
  EXPECT_EQ(info.start, format_duration(1000));
  EXPECT_EQ(info.duration, format_duration(2000));
  ASSERT_EQ(info.metrics.size(), 4u);
  EXPECT_EQ(info.metrics[0].value, "4.00 G");
  EXPECT_EQ(info.metrics[2].key, "TFLOP/s");
  EXPECT_EQ(info.metrics[2].value, "2000");  // 4e9 FLOPs in 2 us = 2e15 FLOP/s
  EXPECT_EQ(info.metrics[3].value, "500");   // 1 MB in 2 us = 500 GB/s
  ASSERT_EQ(info.args.size(), 3u);
  EXPECT_EQ(info.args[2].value, "a\"b");  // strings decoded
  const auto key_args = tooltip_args(info);
  ASSERT_EQ(key_args.size(), 2u);
  EXPECT_EQ(key_args[0].key, "grid");
  EXPECT_EQ(key_args[0].value, "[128,1,1]");
  EXPECT_EQ(key_args[1].key, "stream");
}

// The args of two kernels of a training loop recorded with --counters on an H200
// (samples/traces/train_loop_h200_counters.json.gz): one measured by replay, one
// inferred from its signature. The reader keeps `flops` and `bytes` as metrics.
constexpr std::string_view kReplayedArgs =
    R"j({"grid":[8192,1,1],"flops by precision":{"fp16":4194304,"fp32":4194304},)j"
    R"j("dram bytes":15620096,"dram bytes read":8555520,"dram bytes written":7064576,)j"
    R"j("flops source":"counters","counters replayed":true,"precision":"fp16"})j";
constexpr std::string_view kInferredArgs =
    R"j({"flops by precision":{"fp32":78893056,"fp16":9437184},"dram bytes":16955648,)j"
    R"j("dram bytes read":8416768,"dram bytes written":8538880,)j"
    R"j("flops source":"counters (same signature)","precision":"fp32"})j";

SliceInfo kernel_info(std::string_view args) {
  const trace::Trace t = read(R"({"traceEvents":[
    {"ph":"X","name":"k","cat":"kernel","pid":0,"tid":7,"ts":1,"dur":9}]})");
  const std::vector<const trace::Trace*> list{&t};
  return describe_slice(list, SliceHandle{.trace = 0, .ref = {0, 0, 0}}, args, 0);
}

std::string value_in(const std::vector<InfoLine>& lines, std::string_view key) {
  for (const InfoLine& l : lines) {
    if (l.key == key) return l.value;
  }
  return "(none)";
}

TEST(CountedInfo, AMeasuredKernel) {
  const std::vector<InfoLine> lines = counted_info(kernel_info(kReplayedArgs));
  EXPECT_NE(value_in(lines, "FLOPs from").find("measured by replay"), std::string::npos);
  EXPECT_NE(value_in(lines, "FLOPs from").find("leave it out of timings"), std::string::npos);
  EXPECT_EQ(value_in(lines, "FLOPs by precision"), "");
  EXPECT_EQ(value_in(lines, "  fp16"), "4.19 M (50%)");
  EXPECT_EQ(value_in(lines, "  fp32"), "4.19 M (50%)");
  EXPECT_EQ(value_in(lines, "DRAM read"), "8.56 MB");
  EXPECT_EQ(value_in(lines, "DRAM written"), "7.06 MB");
  EXPECT_EQ(value_in(lines, "counted FLOPs"), "(none)");
}

TEST(CountedInfo, AnInferredKernelListsPrecisionsLargestFirst) {
  const std::vector<InfoLine> lines = counted_info(kernel_info(kInferredArgs));
  EXPECT_NE(value_in(lines, "FLOPs from").find("estimated: the values of a measured launch"),
            std::string::npos);
  const auto fp32 =
      std::find_if(lines.begin(), lines.end(), [](auto& l) { return l.key == "  fp32"; });
  const auto fp16 =
      std::find_if(lines.begin(), lines.end(), [](auto& l) { return l.key == "  fp16"; });
  ASSERT_TRUE(fp32 != lines.end() && fp16 != lines.end());
  EXPECT_LT(fp32, fp16);
  EXPECT_EQ(fp32->value, "78.9 M (89%)");
}

TEST(CountedInfo, AnOperatorWithDeclaredAndCountedFlops) {
  const trace::Trace t = read(R"({"traceEvents":[
    {"ph":"X","name":"matmul","cat":"user_annotation","pid":1,"tid":1,"ts":1,"dur":9,
     "args":{"flops":1000000,"counted flops":1032000,"counted dram bytes":4096,
             "flops source":"declared"}}]})");
  const std::vector<const trace::Trace*> list{&t};
  const SliceInfo info = describe_slice(
      list, SliceHandle{.trace = 0, .ref = {0, 0, 0}},
      R"({"flops":1000000,"counted flops":1032000,"counted dram bytes":4096,"flops source":"declared"})",
      0);
  const std::vector<InfoLine> lines = counted_info(info);
  EXPECT_EQ(value_in(lines, "counted FLOPs"), "1.03 M; declared 1.00 M, +3.2%");
  EXPECT_EQ(value_in(lines, "counted DRAM bytes"), "4.10 kB");
  EXPECT_EQ(value_in(lines, "FLOPs from"), "declared (API, NVTX range or trace arg)");
  EXPECT_EQ(
      flops_source_words("counters (same signature)", false, false).find("sum of its kernels"),
      std::string("hardware counters, the ").size());
  EXPECT_TRUE(counted_info(kernel_info(R"({"grid":[1,1,1]})")).empty());
}

TEST(ShortKernelName, TemplatesThatDifferInTheirArgumentsStayApart) {
  const std::vector<std::string_view> names = {
      "void cutlass::Kernel<cutlass::gemm::Gemm<float, 128, 64, true>>(Params)",
      "void cutlass::Kernel<cutlass::gemm::Gemm<float, 128, 64, false>>(Params)",
      "ampere_sgemm_128x64_nn", "ampere_sgemm_128x64_nn"};
  const std::vector<std::string> shown = distinct_short_kernel_names(names);
  // short_kernel_name alone makes the first two the same text.
  EXPECT_EQ(short_kernel_name(names[0]), short_kernel_name(names[1]));
  EXPECT_NE(shown[0], shown[1]);
  EXPECT_NE(shown[0].find("true"), std::string::npos) << shown[0];
  EXPECT_NE(shown[1].find("false"), std::string::npos) << shown[1];
  EXPECT_EQ(shown[0].rfind(short_kernel_name(names[0]), 0), 0u);  // the short name comes first
  // Equal names are one name: left alone.
  EXPECT_EQ(shown[2], "ampere_sgemm_128x64_nn");
  EXPECT_EQ(shown[3], shown[2]);
}

// A step range on the main thread owns the forward's kernel; the backward's kernel comes
// from another thread of the process while the step is open: the details panel gives
// both the range's own GPU busy time and its window's.
// The FLOP/s table shows kernels as the timeline does (short, told apart); operators and
// other groupings keep their names.
TEST(ShortNames, TableRowsShowKernelsShortAndOperatorsAsTheyAre) {
  const std::vector<std::string> kernels = {
      "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
      "std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)",
      "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<bool>, "
      "std::array<char*, 1ul> >(int, at::native::FillFunctor<bool>, std::array<char*, 1ul>)",
      "ampere_sgemm_128x64_nn"};
  const std::vector<std::string> shown = table_row_names(kernels, true);
  ASSERT_EQ(shown.size(), 3u);
  EXPECT_EQ(shown[0].rfind("vectorized_elementwise_kernel<...>", 0), 0u) << shown[0];
  EXPECT_NE(shown[0], shown[1]) << "two instantiations stay two names";
  EXPECT_LT(shown[0].size(), kernels[0].size());
  EXPECT_EQ(shown[2], "ampere_sgemm_128x64_nn");
  const std::vector<std::string> ops = {"aten::linear", "step 3", "matmul (bf16)"};
  EXPECT_EQ(table_row_names(ops, false), ops);
}

TEST(OperatorInfo, ATopLevelRangeShowsItsWindowsBusyTime) {
  const trace::Trace t = read(R"({"traceEvents":[
    {"ph":"X","name":"step 0","cat":"user_annotation","pid":1,"tid":1,"ts":0,"dur":100},
    {"ph":"X","name":"cudaLaunchKernel","cat":"cuda_runtime","pid":1,"tid":1,"ts":10,"dur":2},
    {"ph":"s","id":5,"pid":1,"tid":1,"ts":10,"cat":"ac2g","name":"ac2g"},
    {"ph":"X","name":"forward","cat":"kernel","pid":0,"tid":7,"ts":20,"dur":10},
    {"ph":"f","id":5,"pid":0,"tid":7,"ts":20,"cat":"ac2g","name":"ac2g","bp":"e"},
    {"ph":"X","name":"cudaLaunchKernel","cat":"cuda_runtime","pid":1,"tid":2,"ts":50,"dur":2},
    {"ph":"s","id":6,"pid":1,"tid":2,"ts":50,"cat":"ac2g","name":"ac2g"},
    {"ph":"X","name":"backward","cat":"kernel","pid":0,"tid":7,"ts":60,"dur":30},
    {"ph":"f","id":6,"pid":0,"tid":7,"ts":60,"cat":"ac2g","name":"ac2g","bp":"e"}]})");
  const trace::OperatorIndex index = trace::OperatorIndex::build(t);
  trace::SliceRef step{};
  for (std::uint32_t k = 0; k < t.tracks.size(); ++k) {
    if (t.str(t.tracks[k].rows[0][0].name) == "step 0") step = {k, 0, 0};
  }
  std::string busy = "(none)", window = "(none)";
  for (const InfoLine& l : operator_info(t, &index, step)) {
    if (l.key == "GPU busy") busy = l.value;
    if (l.key == "window busy") window = l.value;
  }
  EXPECT_EQ(busy.rfind(format_duration(10000), 0), 0u) << busy;
  EXPECT_EQ(window.rfind(format_duration(40000), 0), 0u) << window;
}

TEST(OperatorInfo, OperatorsAndTheWorkTheyLaunched) {
  const trace::Trace t = read(R"({"traceEvents":[
    {"ph":"X","name":"aten::mm","cat":"cpu_op","pid":1,"tid":1,"ts":0,"dur":10,
     "args":{"Input type":["c10::BFloat16","c10::BFloat16"],"Input Dims":[[64,32],[32,16]]}},
    {"ph":"X","name":"cudaLaunchKernel","cat":"cuda_runtime","pid":1,"tid":1,"ts":1,"dur":2},
    {"ph":"s","id":5,"pid":1,"tid":1,"ts":1,"cat":"ac2g","name":"ac2g"},
    {"ph":"X","name":"gemm","cat":"kernel","pid":0,"tid":7,"ts":20,"dur":4},
    {"ph":"f","id":5,"pid":0,"tid":7,"ts":20,"cat":"ac2g","name":"ac2g","bp":"e"}]})");
  const trace::OperatorIndex index = trace::OperatorIndex::build(t);
  auto value_of = [](const std::vector<InfoLine>& lines, std::string_view key) {
    for (const InfoLine& l : lines) {
      if (l.key == key) return l.value;
    }
    return std::string("(none)");
  };
  trace::SliceRef op{}, kernel{};
  for (std::uint32_t k = 0; k < t.tracks.size(); ++k) {
    const trace::Slice& s = t.tracks[k].rows[0][0];
    if (t.str(s.name) == "aten::mm") op = {k, 0, 0};
    if (t.str(s.name) == "gemm") kernel = {k, 0, 0};
  }
  const std::vector<InfoLine> of_op = operator_info(t, &index, op);
  EXPECT_EQ(value_of(of_op, "GPU busy").rfind(format_duration(4000), 0), 0u);
  EXPECT_EQ(value_of(of_op, "GPU self").rfind(format_duration(4000), 0), 0u);
  EXPECT_EQ(value_of(of_op, "FLOPs"), format_si(2.0 * 64 * 16 * 32) + " (shapes)");
  EXPECT_EQ(value_of(of_op, "precision"), "bf16");
  const std::vector<InfoLine> of_kernel = operator_info(t, &index, kernel);
  EXPECT_EQ(value_of(of_kernel, "launched in"), "aten::mm");
  EXPECT_EQ(value_of(of_kernel, "precision"), "bf16 (its operator's)");
  EXPECT_TRUE(operator_info(t, nullptr, op).empty());
}

TEST(LongestSliceNamed, FindsTheLongestOverTraces) {
  const trace::Trace a = read(R"({"traceEvents":[
    {"ph":"X","name":"k","pid":1,"tid":1,"ts":0,"dur":5},{"ph":"X","name":"k","pid":1,"tid":2,"ts":0,"dur":9}]})");
  const trace::Trace b =
      read(R"({"traceEvents":[{"ph":"X","name":"k","pid":1,"tid":1,"ts":0,"dur":7},
    {"ph":"X","name":"other","pid":1,"tid":1,"ts":10,"dur":70}]})");
  const std::vector<const trace::Trace*> list{&a, &b};
  const SliceHandle h = longest_slice_named(list, "k");
  ASSERT_TRUE(h.valid());
  EXPECT_EQ(h.trace, 0u);
  EXPECT_EQ(slice_of(list, h).dur, 9000);
  EXPECT_FALSE(longest_slice_named(list, "missing").valid());
}

TEST(FramePacer, DrawsAFewFramesAfterInputThenSleeps) {
  FramePacer p(3);
  p.observe_events(1);
  int polls = 0;
  while (p.after_frame(false).wait == FramePacer::Wait::kPoll) ++polls;
  EXPECT_EQ(polls, 3);
  EXPECT_EQ(p.after_frame(false).wait, FramePacer::Wait::kWaitEvents);
  p.observe_events(1);  // no new event
  EXPECT_EQ(p.after_frame(false).wait, FramePacer::Wait::kWaitEvents);
  const auto busy = p.after_frame(true);
  EXPECT_EQ(busy.wait, FramePacer::Wait::kWaitTimeout);
  EXPECT_GT(busy.timeout_s, 0);
  p.request_frames();
  EXPECT_EQ(p.after_frame(false).wait, FramePacer::Wait::kPoll);
}

TEST(FrameStats, MedianAndNearestRankP99) {
  std::vector<double> ms(100);
  for (int i = 0; i < 100; ++i) ms[static_cast<std::size_t>(i)] = 100 - i;  // 100..1, unsorted
  const FrameStats s = frame_stats(ms);
  EXPECT_EQ(s.frames, 100u);
  EXPECT_DOUBLE_EQ(s.median_ms, 50.5);
  EXPECT_DOUBLE_EQ(s.p99_ms, 99);
  EXPECT_DOUBLE_EQ(s.max_ms, 100);
  EXPECT_DOUBLE_EQ(frame_stats({7}).p99_ms, 7);
  EXPECT_EQ(frame_stats({}).frames, 0u);
  EXPECT_GT(resident_bytes(), 1u << 20);
}

TEST(FileBrowser, FoldersFirstThenTraces) {
  namespace fs = std::filesystem;
  const fs::path d = fs::temp_directory_path() / ("flopline_browser_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d / "sub");
  for (const char* n : {"b.json", "a.JSON.GZ", "notes.txt", ".hidden.json"})
    std::ofstream(d / n) << "{}";
  FileBrowser b(d);
  std::vector<std::string> names;
  for (const auto& e : b.entries()) names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"sub", "a.JSON.GZ", "b.json"}));
  EXPECT_TRUE(b.entries()[0].is_dir);
  EXPECT_EQ(b.entries()[2].size, 2u);
  b.set_show_all(true);
  EXPECT_EQ(b.entries().size(), 4u);
  EXPECT_FALSE(b.change_dir(d / "missing"));
  EXPECT_FALSE(b.error().empty());
  EXPECT_EQ(b.dir(), fs::canonical(d));  // the listing stays
  EXPECT_TRUE(b.change_dir(d / "sub"));
  EXPECT_TRUE(b.up());
  EXPECT_EQ(b.dir(), fs::canonical(d));
  fs::remove_all(d);
}

TEST(PngWriter, WritesPixelsLibpngReadsBack) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "flopline_png_test.png").string();
  std::vector<std::uint8_t> px(3 * 2 * 4);
  for (std::size_t i = 0; i < px.size(); ++i) px[i] = static_cast<std::uint8_t>(i * 10);
  ASSERT_EQ(write_png_rgba(path, 3, 2, px), "");
  png_image img{};
  img.version = PNG_IMAGE_VERSION;
  ASSERT_TRUE(png_image_begin_read_from_file(&img, path.c_str()));
  img.format = PNG_FORMAT_RGBA;
  std::vector<std::uint8_t> back(PNG_IMAGE_SIZE(img));
  ASSERT_TRUE(png_image_finish_read(&img, nullptr, back.data(), 0, nullptr));
  EXPECT_EQ(img.width, 3u);
  EXPECT_EQ(img.height, 2u);
  EXPECT_EQ(back, px);
  EXPECT_NE(write_png_rgba("/nonexistent/dir/x.png", 3, 2, px), "");
  EXPECT_NE(write_png_rgba(path, 4, 2, px), "");  // size mismatch
  std::remove(path.c_str());
}

// Files in `dir` (a failed write must leave none behind).
std::size_t files_in(const std::filesystem::path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

// A file size limit fails writes past it (EFBIG), as a full disk would.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    ::signal(SIGXFSZ, SIG_IGN);
    ::getrlimit(RLIMIT_FSIZE, &old_);
    rlimit small = old_;
    small.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &small);
  }
  ~FileSizeLimit() { ::setrlimit(RLIMIT_FSIZE, &old_); }

 private:
  rlimit old_{};
};

TEST(PngWriter, AFailedWriteSaysWhyAndLeavesNoFile) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("flopline_png_fail_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "shot.png").string();
  std::vector<std::uint8_t> noise(256 * 256 * 4);
  std::uint32_t x = 2463534242u;
  for (auto& b : noise) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    b = static_cast<std::uint8_t>(x);
  }
  std::string err;
  {
    FileSizeLimit limit(16 << 10);
    err = write_png_rgba(path, 256, 256, noise);
  }
  EXPECT_EQ(err.rfind(path + ": cannot write " + path + ".", 0), 0u) << err;
  EXPECT_NE(err.find("File too large"), std::string::npos) << err;
  EXPECT_EQ(files_in(dir), 0u);
  // The same for a CSV export or a state dump.
  {
    FileSizeLimit limit(16 << 10);
    err = write_text_file((dir / "table.csv").string(), std::string(1 << 20, 'c'));
  }
  EXPECT_NE(err.find("File too large"), std::string::npos) << err;
  EXPECT_EQ(files_in(dir), 0u);
  // A device is written in place, and says why it failed.
  EXPECT_EQ(write_png_rgba("/dev/full", 256, 256, noise),
            "/dev/full: cannot write /dev/full: No space left on device");
  EXPECT_EQ(write_text_file("/dev/full", "a,b\n"),
            "/dev/full: cannot write /dev/full: No space left on device");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace flopline::viewer
