// `flopline stats` output: the table, CSV and JSON renderers on a hand-made report,
// and the whole command on a trace file written here.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

#include "cli_app.h"
#include "cli_parse.h"
#include "flopline/trace/stats_csv.h"
#include "stats_output.h"

namespace flopline::cli {
namespace {

TEST(StatsFormat, Thousands) {
  EXPECT_EQ(with_thousands(0), "0");
  EXPECT_EQ(with_thousands(999), "999");
  EXPECT_EQ(with_thousands(1000), "1,000");
  EXPECT_EQ(with_thousands(1234567), "1,234,567");
  EXPECT_EQ(with_thousands(-1234), "-1,234");
  EXPECT_EQ(with_thousands(INT64_MAX), "9,223,372,036,854,775,807");
  EXPECT_EQ(with_thousands(INT64_MIN), "-9,223,372,036,854,775,808");
}

TEST(StatsFormat, ShortNamesAreKept) {
  EXPECT_EQ(shorten_name("gemm", 20), "gemm");
  EXPECT_EQ(shorten_name("a\nb\tc", 20), "a?b?c");
}

TEST(StatsFormat, LongNamesKeepBothEnds) {
  const std::string name = "void cutlass::Kernel<" + std::string(200, 'x') + ">(Params)";
  const std::string s = shorten_name(name, 60);
  EXPECT_LE(s.size(), 60u);
  EXPECT_EQ(s.rfind("void cutlass::Kernel<", 0), 0u);
  EXPECT_NE(s.find("..."), std::string::npos);
  EXPECT_EQ(s.substr(s.size() - 9), ">(Params)");
}

TEST(StatsFormat, ShorteningNeverSplitsUtf8) {
  std::string name;
  for (int i = 0; i < 100; ++i) name += "\xc3\xa9";  // U+00E9, two bytes each
  for (std::size_t max = 8; max < 40; ++max) {
    const std::string s = shorten_name(name, max);
    EXPECT_LE(s.size(), max);
    const auto dots = s.find("...");
    ASSERT_NE(dots, std::string::npos);
    EXPECT_EQ(dots % 2, 0u) << max;                   // head is whole characters
    EXPECT_EQ((s.size() - dots - 3) % 2, 0u) << max;  // so is the tail
    EXPECT_NE(static_cast<unsigned char>(s[dots + 3]) & 0xC0, 0x80) << max;
  }
}

TEST(StatsFormat, TableNamesTellTemplatesApart) {
  // Two kernels that differ only in a template argument in the middle: cut to 60 bytes,
  // both would read "void cutlass::Kernel<...>...(Params)".
  const std::string head = "void cutlass::Kernel<cutlass::gemm::kernel::GemmUniversal<float, 128, ";
  const std::string tail = ", cutlass::arch::Sm90, 4, 3>>(cutlass::gemm::kernel::Params)";
  std::vector<trace::StatsRow> rows(3);
  rows[0].name = head + "true" + tail;
  rows[1].name = head + "false" + tail;
  rows[2].name = "short_kernel";
  EXPECT_EQ(shorten_name(rows[0].name, 60), shorten_name(rows[1].name, 60));
  const std::vector<std::string> shown = table_names(rows, 60);
  EXPECT_NE(shown[0], shown[1]);
  EXPECT_NE(shown[0].find("true"), std::string::npos) << shown[0];
  EXPECT_NE(shown[1].find("false"), std::string::npos) << shown[1];
  EXPECT_EQ(shown[2], "short_kernel");
  // --full-names: nothing is cut.
  EXPECT_EQ(table_names(rows, 0)[0], rows[0].name);
}

TEST(StatsFormat, BytesWithAUnit) {
  EXPECT_EQ(bytes_text(4), "4 B");
  EXPECT_EQ(bytes_text(1500), "1.50 KB");
  EXPECT_EQ(bytes_text(604e6), "604 MB");
  EXPECT_EQ(bytes_text(2.72e9), "2.72 GB");
}

TEST(StatsFormat, CsvFieldsQuoteOnlyWhenNeeded) {
  using trace::csv_field;
  EXPECT_EQ(csv_field("plain name"), "plain name");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_field("cr\r"), "\"cr\r\"");
}

StatsReport sample_report() {
  StatsReport r;
  r.files = {"a.json"};
  r.by = trace::GroupBy::kName;
  trace::StatsRow mm;
  mm.name = "gemm, \"tf32\"";
  mm.count = 2;
  mm.total_ns = 3000;
  mm.avg_ns = 1500;
  mm.median_ns = 1500;
  mm.min_ns = 1000;
  mm.max_ns = 2000;
  mm.std_ns = 500;
  mm.pct = 75;
  mm.flops = 3e9;
  mm.tflops = 1.0;
  mm.pct_peak = 12.5;
  trace::StatsRow cp;
  cp.name = "copy";
  cp.count = 1;
  cp.total_ns = cp.avg_ns = cp.median_ns = cp.min_ns = cp.max_ns = 1000;
  cp.pct = 25;
  cp.bytes = 1e6;
  cp.gbps = 1000;
  r.result.rows = {mm, cp};
  r.result.total_ns = 4000;
  r.result.slices_considered = 3;
  r.result.categories_used = {"kernel"};
  r.rows_total = 2;
  return r;
}

TEST(StatsOutput, CsvSchema) {
  std::ostringstream out;
  write_stats_csv(sample_report(), out);
  EXPECT_EQ(
      out.str(),
      "name,count,total_ns,avg_ns,median_ns,min_ns,max_ns,std_ns,pct,flops,bytes,tflops,gbps,"
      "pct_peak,precision,flops_source,busy_ns,self_ns,device_total_ns,extent_ns,cpu_ns,"
      "intensity,counted_flops,declared_vs_counted_pct,window_busy_ns\n"
      "\"gemm, \"\"tf32\"\"\",2,3000,1500,1500,1000,2000,500,75,3000000000,,1,,12.5,,,,,,,,,,,\n"
      "copy,1,1000,1000,1000,1000,1000,0,25,,1000000,,1000,,,,,,,,,,,,\n");
}

TEST(StatsOutput, JsonSchema) {
  std::ostringstream out;
  StatsReport r = sample_report();
  r.range = RelativeRange{5, std::nullopt};
  write_stats_json(r, out);
  const std::string j = out.str();
  EXPECT_EQ(j.rfind("{\"files\":[\"a.json\"],\"group_by\":\"name\",\"categories\":[\"kernel\"],"
                    "\"all_categories\":false,\"range\":{\"begin_ns\":5,\"end_ns\":null},"
                    "\"total_ns\":4000,\"slices\":3,\"rows_total\":2,",
                    0),
            0u)
      << j;
  EXPECT_NE(j.find("{\"name\":\"gemm, \\\"tf32\\\"\",\"count\":2,\"total_ns\":3000,\"avg_ns\":1500,"
                   "\"median_ns\":1500,\"min_ns\":1000,\"max_ns\":2000,\"std_ns\":500,\"pct\":75,"
                   "\"flops\":3000000000,\"bytes\":null,\"tflops\":1,\"gbps\":null,"
                   "\"pct_peak\":12.5,\"precision\":\"\",\"flops_source\":\"\",\"busy_ns\":null,"
                   "\"self_ns\":null,\"device_total_ns\":null,\"extent_ns\":null,\"cpu_ns\":null,"
                   "\"intensity\":null,\"counted_flops\":null,\"declared_vs_counted_pct\":null,"
                   "\"window_busy_ns\":null}"),
            std::string::npos)
      << j;
}

TEST(StatsOutput, TableHasHeaderColumnsAndFooter) {
  std::ostringstream out;
  StatsReport r = sample_report();
  r.events_total = 10;
  r.events_skipped = 2;
  write_stats_table(r, out);
  const std::string t = out.str();
  for (const char* s : {"File:       a.json",
                        "categories: kernel",
                        "Time (%)",
                        "Total Time (ns)",
                        "Instances",
                        "Avg (ns)",
                        "Med (ns)",
                        "Min (ns)",
                        "Max (ns)",
                        "StdDev (ns)",
                        "GFLOP",
                        "TFLOP/s",
                        "GB/s",
                        "% peak",
                        "Name",
                        "3,000",
                        "75.0",
                        "12.5",
                        "Total: 4,000 ns in 3 slices, 2 rows",
                        "Reader skipped 2 of 10 events"}) {
    EXPECT_NE(t.find(s), std::string::npos) << s << "\n" << t;
  }
}

TEST(StatsOutput, TableHidesColumnsWithoutValues) {
  StatsReport r = sample_report();
  for (auto& row : r.result.rows) {
    row.flops = row.bytes = row.tflops = row.gbps = row.pct_peak = std::nullopt;
  }
  std::ostringstream out;
  write_stats_table(r, out);
  const std::string t = out.str();
  EXPECT_EQ(t.find("TFLOP/s  "), std::string::npos) << t;
  EXPECT_NE(t.find("No values for: GFLOP, TFLOP/s, GB/s (no FLOP/byte counts"), std::string::npos)
      << t;
  EXPECT_NE(t.find("record with `flopline run --counters`"), std::string::npos) << t;
  EXPECT_NE(t.find("No values for: % peak (the trace carries no device peaks)"), std::string::npos)
      << t;
}

TEST(StatsOutput, EmptyPeakColumnNamesTheMissingPrecisionWhenPeaksExist) {
  StatsReport r = sample_report();
  r.has_device_peaks = true;
  for (auto& row : r.result.rows) row.pct_peak = std::nullopt;
  std::ostringstream out;
  write_stats_table(r, out);
  const std::string t = out.str();
  EXPECT_NE(t.find("No values for: % peak (needs each operator's precision"), std::string::npos)
      << t;
  EXPECT_EQ(t.find("no FLOP/byte counts"), std::string::npos) << t;
}

// One rule for values that are not finite (a FLOP count past the range of a double, and
// the rates made from it): unknown in every output.
TEST(StatsOutput, NonFiniteValuesAreUnknownInEveryOutput) {
  StatsReport r = sample_report();
  r.result.rows[0].flops = std::numeric_limits<double>::infinity();
  r.result.rows[0].tflops = std::numeric_limits<double>::infinity();
  r.result.rows[0].pct_peak = std::numeric_limits<double>::quiet_NaN();
  std::ostringstream csv, json, table;
  write_stats_csv(r, csv);
  write_stats_json(r, json);
  write_stats_table(r, table);
  EXPECT_NE(
      csv.str().find("\"gemm, \"\"tf32\"\"\",2,3000,1500,1500,1000,2000,500,75,,,,,,,,,,,,,,,,\n"),
      std::string::npos)
      << csv.str();
  EXPECT_NE(json.str().find(
                "\"flops\":null,\"bytes\":null,\"tflops\":null,\"gbps\":null,\"pct_peak\":null"),
            std::string::npos)
      << json.str();
  EXPECT_EQ(table.str().find("inf"), std::string::npos) << table.str();
  EXPECT_EQ(table.str().find("nan"), std::string::npos) << table.str();
}

TEST(StatsOutput, JsonSaysHowMuchTextWasRead) {
  StatsReport r = sample_report();
  r.events_total = 10;
  r.text_bytes = 5000;
  r.text_bytes_unread = 12;
  std::ostringstream out;
  write_stats_json(r, out);
  EXPECT_NE(out.str().find("\"events_total\":10,\"events_skipped\":0,\"text_bytes\":5000,"
                           "\"text_bytes_unread\":12,\"total_flops\":null,\"rows\":["),
            std::string::npos)
      << out.str();
}

// ---- the command end to end, on a trace written here ------------------------------

class StatsCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("flopline_test_cli_stats_" +
            std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const auto p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  std::filesystem::path dir_;
};

struct CliRun {
  int rc;
  std::string out, err;
};

CliRun run_flopline(const std::vector<std::string>& a) {
  std::ostringstream out, err;
  const int rc = run_cli(a, out, err);
  return {rc, out.str(), err.str()};
}

// Kernels at 1000 us (first event), 1001, 1003, 1010 us; a cpu_op at 1000 us.
constexpr const char* kTrace = R"({"traceEvents":[
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1000,"dur":20},
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":1000.5,"dur":0.5},
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":1001,"dur":1.5},
{"ph":"X","cat":"kernel","name":"add","pid":0,"tid":7,"ts":1003,"dur":4},
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":1010,"dur":2}
]})";

TEST_F(StatsCommand, CsvOnAFile) {
  const CliRun r = run_flopline({"stats", write("t.json", kTrace), "--csv"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(r.out,
            "name,count,total_ns,avg_ns,median_ns,min_ns,max_ns,std_ns,pct,flops,bytes,tflops,gbps,"
            "pct_peak,precision,flops_source,busy_ns,self_ns,device_total_ns,extent_ns,cpu_ns,"
            "intensity,counted_flops,declared_vs_counted_pct,window_busy_ns\n"
            "add,1,4000,4000,4000,4000,4000,0,50,,,,,,,,,,,,,,,,\n"
            "gemm,3,4000,1333,1500,500,2000,624,50,,,,,,,,,,,,,,,,\n");
}

TEST_F(StatsCommand, RangeIsRelativeToTheFirstEvent) {
  const std::string f = write("t.json", kTrace);
  const CliRun r = run_flopline({"stats", f, "--csv", "--range", "1us:10us"});  // [1001, 1010) us
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(r.out,
            "name,count,total_ns,avg_ns,median_ns,min_ns,max_ns,std_ns,pct,flops,bytes,tflops,gbps,"
            "pct_peak,precision,flops_source,busy_ns,self_ns,device_total_ns,extent_ns,cpu_ns,"
            "intensity,counted_flops,declared_vs_counted_pct,window_busy_ns\n"
            "add,1,4000,4000,4000,4000,4000,0,72.72727272727273,,,,,,,,,,,,,,,,\n"
            "gemm,1,1500,1500,1500,1500,1500,0,27.272727272727273,,,,,,,,,,,,,,,,\n");
}

TEST_F(StatsCommand, SeveralFilesAddUp) {
  const std::string f = write("t.json", kTrace);
  const std::string g = write("u.json", kTrace);  // the same events in another file
  const CliRun r = run_flopline({"stats", f, g, "--csv", "--top", "1", "--cat", "kernel"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(r.out,
            "name,count,total_ns,avg_ns,median_ns,min_ns,max_ns,std_ns,pct,flops,bytes,tflops,gbps,"
            "pct_peak,precision,flops_source,busy_ns,self_ns,device_total_ns,extent_ns,cpu_ns,"
            "intensity,counted_flops,declared_vs_counted_pct,window_busy_ns\n"
            "add,2,8000,4000,4000,4000,4000,0,50,,,,,,,,,,,,,,,,\n");
}

// A kernel with FLOP and byte counts on a device with peaks: 1e9 FLOPs in 20 us is
// 50 TFLOP/s; 1e6 bytes in 20 us is 50 GB/s; the attainable time at 100 TFLOP/s tf32
// and 1 TB/s is max(10 us, 1 us), so 50 % of peak. The second kernel has no
// precision: its rate is known, its % of peak is not.
constexpr const char* kTraceWithCounts = R"({
"deviceProperties":[{"id":0,"name":"test GPU","peakFlops":{"tf32":1e14},
                     "peakBandwidthBytesPerSec":1e12}],
"traceEvents":[
{"ph":"X","cat":"kernel","name":"mm","pid":0,"tid":7,"ts":10,"dur":20,
 "args":{"flops":1e9,"bytes":1e6,"precision":"tf32"}},
{"ph":"X","cat":"kernel","name":"noprec","pid":0,"tid":7,"ts":40,"dur":10,
 "args":{"flops":1e9}}
]})";

TEST_F(StatsCommand, RatesAndPercentOfPeakFromAFile) {
  const CliRun r = run_flopline({"stats", write("counts.json", kTraceWithCounts), "--csv"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(
      r.out,
      "name,count,total_ns,avg_ns,median_ns,min_ns,max_ns,std_ns,pct,flops,bytes,tflops,gbps,"
      "pct_peak,precision,flops_source,busy_ns,self_ns,device_total_ns,extent_ns,cpu_ns,"
      "intensity,counted_flops,declared_vs_counted_pct,window_busy_ns\n"
      "mm,1,20000,20000,20000,20000,20000,0,66.66666666666667,1000000000,1000000,50,50,50,tf32,"
      "trace,,,,,,1000,,,\n"
      "noprec,1,10000,10000,10000,10000,10000,0,33.333333333333336,1000000000,,100,,,,trace,"
      ",,,,,,,,\n");
  const CliRun t = run_flopline({"stats", write("counts.json", kTraceWithCounts)});
  ASSERT_EQ(t.rc, kExitOk) << t.err;
  EXPECT_NE(t.out.find("GFLOP"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("% peak"), std::string::npos) << t.out;
  EXPECT_EQ(t.out.find("No values for"), std::string::npos) << t.out;
}

// flopline run --counters: kernels carry counted FLOPs ("flops source" "counters"); a
// range that declared its FLOPs keeps them and carries the counters' sum beside them.
// "off" declares 1.0 GFLOP where the counters measured 1.2 (-16.7 %, flagged); "near"
// declares 1.0 where they measured 1.02 (-2.0 %, within 5 %, not flagged).
constexpr const char* kTraceWithCountedFlops = R"json({"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"off","pid":1,"tid":1,"ts":0,"dur":100,
 "args":{"flops":1e9,"flops source":"suffix","counted flops":1.2e9}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":10,"dur":5,
 "args":{"correlation":1}},
{"ph":"X","cat":"user_annotation","name":"near","pid":1,"tid":1,"ts":200,"dur":100,
 "args":{"flops":1e9,"flops source":"suffix","counted flops":1.02e9}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":210,"dur":5,
 "args":{"correlation":2}},
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":20,"dur":40,
 "args":{"correlation":1,"flops":1.2e9,"bytes":4e6,"flops source":"counters"}},
{"ph":"X","cat":"kernel","name":"gemm2","pid":0,"tid":7,"ts":220,"dur":40,
 "args":{"correlation":2,"flops":1.02e9,"bytes":1e6,"flops source":"counters (same signature)"}}
]})json";

TEST_F(StatsCommand, CountedFlopsAreNamedAndDisagreementsFlagged) {
  const std::string f = write("counted.json", kTraceWithCountedFlops);
  const CliRun k = run_flopline({"stats", f, "--by", "name", "--json"});
  ASSERT_EQ(k.rc, kExitOk) << k.err;
  // Both kernels' FLOPs come from counters, whether measured or inferred; 1.2e9 FLOPs
  // over 4e6 bytes is 300 FLOP/B.
  EXPECT_NE(k.out.find(R"("name":"gemm")"), std::string::npos) << k.out;
  EXPECT_EQ(k.out.find(R"("flops_source":"trace")"), std::string::npos) << k.out;
  EXPECT_NE(k.out.find(R"("flops_source":"counters","busy_ns":null)"), std::string::npos) << k.out;
  EXPECT_NE(k.out.find(R"("intensity":300,)"), std::string::npos) << k.out;
  EXPECT_NE(k.out.find(R"("intensity":1020,)"), std::string::npos) << k.out;

  const CliRun o = run_flopline({"stats", f, "--by", "op", "--json"});
  ASSERT_EQ(o.rc, kExitOk) << o.err;
  EXPECT_NE(o.out.find(R"("counted_flops":1200000000,"declared_vs_counted_pct":-16.6666666666666)"),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find(R"("counted_flops":1020000000,"declared_vs_counted_pct":-1.96078431372549)"),
            std::string::npos)
      << o.out;

  const CliRun t = run_flopline({"stats", f, "--by", "op"});
  ASSERT_EQ(t.rc, kExitOk) << t.err;
  EXPECT_NE(t.out.find("trace!"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("Declared FLOPs differ from the counters' by -16.7% (more than 5%): off "
                       "declares 1.000 GFLOP, the counters measured 1.200 GFLOP"),
            std::string::npos)
      << t.out;
  EXPECT_EQ(t.out.find(": near declares"), std::string::npos) << t.out;
}

// The kernel time of each basis of counted values: a header line in the table, an
// object in JSON. 40 us measured, 40 us read from a trace of the old signature rule
// (estimated), 20 us of NCCL never measured.
TEST_F(StatsCommand, KernelTimeByBasisOfItsCountedValues) {
  std::string trace(kTraceWithCountedFlops);
  trace.insert(trace.rfind(']'), R"json(,
{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce","pid":0,"tid":8,"ts":300,"dur":20,
 "args":{"flops source":"not counted: communication"}})json");
  const std::string f = write("bases.json", trace);
  const CliRun t = run_flopline({"stats", f});
  ASSERT_EQ(t.rc, kExitOk) << t.err;
  EXPECT_NE(t.out.find("Counters:   of 0.100 ms kernel time: 40.0% measured, 0.0% same work "
                       "(exactly inferred), 40.0% estimated, 20.0% not counted"),
            std::string::npos)
      << t.out;
  const CliRun j = run_flopline({"stats", f, "--json"});
  ASSERT_EQ(j.rc, kExitOk) << j.err;
  EXPECT_NE(
      j.out.find(R"("counted_kernel_time":{"kernel_ns":100000,"measured_ns":40000,)"
                 R"("same_work_ns":0,"estimated_ns":40000,"not_counted_ns":20000,"none_ns":0})"),
      std::string::npos)
      << j.out;
  // Without any counted basis there is no such line.
  const CliRun plain = run_flopline({"stats", write("plain.json", kTrace)});
  EXPECT_EQ(plain.out.find("Counters:"), std::string::npos) << plain.out;
}

// NCCL kernels with their call's size: a Collectives block under the table and a
// "collectives" array in JSON, one row per collective and size with nccl-tests'
// bandwidths over the mean kernel time (two AllReduce of 8 MB in 40 and 60 us on 4
// ranks: mean 50 us, algbw 160 GB/s, busbw x 2*3/4 = 240 GB/s); a kernel without a
// rank count has no busbw.
TEST_F(StatsCommand, CollectivesWithNcclTestsBandwidths) {
  const std::string f = write("nccl.json", R"json({"traceEvents":[
{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL","pid":0,"tid":8,
 "ts":100,"dur":40,"args":{"collective":"AllReduce","collective message bytes":8000000,
 "collective ranks":4}},
{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL","pid":0,"tid":8,
 "ts":200,"dur":60,"args":{"collective":"AllReduce","collective message bytes":8000000,
 "collective ranks":4}},
{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllGather_RING_LL","pid":0,"tid":8,
 "ts":300,"dur":10,"args":{"collective":"AllGather","collective message bytes":1000}},
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":100,"dur":10}
]})json");
  const CliRun t = run_flopline({"stats", f});
  ASSERT_EQ(t.rc, kExitOk) << t.err;
  EXPECT_NE(t.out.find("Collectives (size from NCCL's NVTX ranges"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find(" AllReduce   8.00 MB      4        2     100,000     50,000         "
                       "160.0         240.0"),
            std::string::npos)
      << t.out;
  EXPECT_NE(t.out.find(" AllGather   1.00 KB      -        1      10,000     10,000             "
                       "-             -"),
            std::string::npos)
      << t.out;
  EXPECT_NE(t.out.find("Ranks \"-\": no WORLD_SIZE"), std::string::npos) << t.out;
  const CliRun j = run_flopline({"stats", f, "--json"});
  ASSERT_EQ(j.rc, kExitOk) << j.err;
  EXPECT_NE(j.out.find(R"("collectives":[{"collective":"AllReduce","message_bytes":8000000,)"
                       R"("ranks":4,"kernels":2,"total_ns":100000,"size_bytes":8000000,)"
                       R"("algbw_gbps":160,"busbw_gbps":240},{"collective":"AllGather",)"
                       R"("message_bytes":1000,"ranks":null,"kernels":1,"total_ns":10000,)"
                       R"("size_bytes":null,"algbw_gbps":null,"busbw_gbps":null}])"),
            std::string::npos)
      << j.out;
  const CliRun plain = run_flopline({"stats", write("plain.json", kTrace)});
  EXPECT_EQ(plain.out.find("\nCollectives ("), std::string::npos) << plain.out;
  const CliRun plain_json = run_flopline({"stats", write("plain.json", kTrace), "--json"});
  EXPECT_EQ(plain_json.out.find(R"("collectives":)"), std::string::npos) << plain_json.out;
}

// Two ranks' traces: their all-reduces matched by communicator and order, each rank's
// wait for the last to arrive (rank 1 is 30 and 10 us late), in the table and JSON.
TEST_F(StatsCommand, CollectiveWaitsAcrossRanks) {
  auto rank_trace = [&](const std::string& name, int rank, int ts0, int ts1) {
    const std::string k = R"("ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce","pid":0,)"
                          R"("tid":9,"args":{"collective":"AllReduce","collective message )"
                          R"(bytes":1024,"collective communicator":"0x00000000000000ab"},)";
    return write(
        name, "{\"distributedInfo\":{\"backend\":\"nccl\",\"rank\":" + std::to_string(rank) +
                  "},\"traceEvents\":[{" + k + "\"ts\":" + std::to_string(ts0) + ",\"dur\":" +
                  std::to_string(100 - (ts0 - 1000)) + "},{" + k + "\"ts\":" + std::to_string(ts1) +
                  ",\"dur\":" + std::to_string(100 - (ts1 - 2000)) + "}]}");
  };
  const std::string a = rank_trace("rank0.json", 0, 1000, 2000);
  const std::string b = rank_trace("rank1.json", 1, 1030, 2010);
  const CliRun t = run_flopline({"stats", a, b});
  ASSERT_EQ(t.rc, kExitOk) << t.err;
  EXPECT_NE(t.out.find("Collective waits (NCCL kernels matched across ranks"), std::string::npos)
      << t.out;
  // Rank 0: kernels of 100 us each, waited 30 + 10 us.
  EXPECT_NE(t.out.find("    0        2      200,000       40,000        20.0               0  "),
            std::string::npos)
      << t.out;
  EXPECT_NE(t.out.find("Last to arrive most often: rank 1 (2 of 2 collectives)"), std::string::npos)
      << t.out;
  const CliRun j = run_flopline({"stats", a, b, "--json"});
  ASSERT_EQ(j.rc, kExitOk) << j.err;
  EXPECT_NE(j.out.find(R"("collective_waits":{"collectives":2,"unmatched":0,"waited_for_rank":1,)"),
            std::string::npos)
      << j.out;
  EXPECT_NE(j.out.find(R"("matched":2,"kernel_ns":200000,"wait_ns":40000,"last_arrivals":0,)"),
            std::string::npos)
      << j.out;
  // One file: no waits to show.
  const CliRun one = run_flopline({"stats", a, "--json"});
  EXPECT_EQ(one.out.find("collective_waits"), std::string::npos) << one.out;
}

// --report breakdown's utilizations: a 20 us tf32 kernel of 1e9 FLOPs (10 us at the
// 1e14 peak) and a 20 us kernel without FLOPs 60 us later: window 80 us, busy 40 us.
// % of peak 10/80 = 12.5, Busy % of peak 10/40 = 25.0.
TEST_F(StatsCommand, TimeBreakdownUtilizationOverWindowAndBusyTime) {
  const std::string f = write("busy.json", R"json({
"deviceProperties":[{"id":0,"name":"test GPU","peakFlops":{"tf32":1e14}}],
"traceEvents":[
{"ph":"M","name":"process_labels","pid":0,"args":{"labels":"GPU 0"}},
{"ph":"X","cat":"kernel","name":"mm","pid":0,"tid":7,"ts":0,"dur":20,
 "args":{"flops":1e9,"precision":"tf32"}},
{"ph":"X","cat":"kernel","name":"add","pid":0,"tid":7,"ts":60,"dur":20}
]})json");
  const CliRun t = run_flopline({"stats", f, "--report", "breakdown"});
  ASSERT_EQ(t.rc, kExitOk) << t.err;
  EXPECT_NE(t.out.find("Busy % of peak"), std::string::npos) << t.out;
  // Counted TFLOP/s over the window: 1e9 / 80 us = 12.5; then 12.5 % and 25.0 %.
  EXPECT_NE(t.out.find("12.5       12.5            25.0"), std::string::npos) << t.out;
}

// --report breakdown: per rank and GPU, the four parts of the window (stream 7: a GEMM
// 0-100 us; stream 13: an all-reduce 50-150 us, half under the GEMM; a copy 150-160 us;
// idle 160-200 us before the last kernel) and the hidden share of communication.
TEST_F(StatsCommand, TimeBreakdownReport) {
  const std::string f = write("breakdown.json", R"json({"distributedInfo":{"rank": 3},
"traceEvents":[
{"ph":"M","name":"process_labels","pid":0,"args":{"labels":"GPU 0"}},
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":0,"dur":100},
{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32","pid":0,"tid":13,"ts":50,"dur":100},
{"ph":"X","cat":"gpu_memcpy","name":"Memcpy DtoD","pid":0,"tid":14,"ts":150,"dur":10},
{"ph":"X","cat":"kernel","name":"add","pid":0,"tid":7,"ts":200,"dur":20}
]})json");
  const CliRun t = run_flopline({"stats", f, "--report", "breakdown"});
  ASSERT_EQ(t.rc, kExitOk) << t.err;
  // Window 220 us: compute 120 (54.5%), communication exposed 50 (22.7%), memory 10
  // (4.5%), idle 40 (18.2%, no launch flows: none of it host or queued); 50 of 100 us of
  // communication hidden.
  EXPECT_NE(t.out.find("    3    0      220,000       54.5    22.7       4.5    18.2          0.0"
                       "            0.0           50.0                -          -  "),
            std::string::npos)
      << t.out;
  const CliRun j = run_flopline({"stats", f, "--report", "breakdown", "--json"});
  ASSERT_EQ(j.rc, kExitOk) << j.err;
  EXPECT_NE(j.out.find(R"("rank":3,"device":0,"window_begin_ns":0,"window_ns":220000,)"
                       R"("compute_ns":120000,"communication_ns":50000,"memory_ns":10000,)"
                       R"("idle_ns":40000,"idle_host_ns":0,"idle_queued_ns":0,)"
                       R"("idle_other_ns":40000,"communication_total_ns":100000,)"
                       R"("communication_hidden_ns":50000,"kernels":3,"flops":null)"),
            std::string::npos)
      << j.out;
  const CliRun c =
      run_flopline({"stats", f, "--report", "breakdown", "--csv", "--range", "0:100us"});
  ASSERT_EQ(c.rc, kExitOk) << c.err;
  EXPECT_NE(c.out.find(",3,0,0,100000,100000,0,0,0,0,0,0,50000,50000,2,,,,,\n"), std::string::npos)
      << c.out;
  const CliRun bad = run_flopline({"stats", f, "--report", "flame"});
  EXPECT_EQ(bad.rc, kExitUsage);
  EXPECT_NE(bad.err.find("--report 'flame' is not a report; use summary, breakdown or overview"),
            std::string::npos)
      << bad.err;
  const std::string cpu =
      write("cpu.json", R"({"traceEvents":[{"ph":"X","cat":"cpu_op",)"
                        R"("name":"aten::mm","pid":100,"tid":100,"ts":0,"dur":5}]})");
  const CliRun cpu_only = run_flopline({"stats", cpu, "--report", "breakdown"});
  EXPECT_EQ(cpu_only.rc, kExitFailure) << cpu_only.out;
  EXPECT_NE(cpu_only.err.find("no GPU work"), std::string::npos) << cpu_only.err;
}

// --report overview: a few lines per file, kernels by base name with the rate that
// says more (TFLOP/s for compute, GB/s for memory-bound work) and % of peak.
TEST_F(StatsCommand, OverviewReport) {
  const std::string a = write("a.json", R"json({"deviceProperties":[{"id":0,"name":"NVIDIA H200",
"computeMajor":9,"computeMinor":0,"numSms":132}],"traceEvents":[
{"ph":"X","cat":"kernel","name":"void ns::gemm<1>(float*)","pid":0,"tid":7,"ts":0,"dur":300,
 "args":{"flops":1.5e11,"precision":"bf16"}},
{"ph":"X","cat":"kernel","name":"void ns::gemm<2>(float*)","pid":0,"tid":7,"ts":400,"dur":300,
 "args":{"flops":1.5e11,"precision":"bf16"}},
{"ph":"X","cat":"kernel","name":"copy_kernel","pid":0,"tid":7,"ts":800,"dur":400,
 "args":{"bytes":1.6e9}}]})json");
  const CliRun t = run_flopline({"stats", "--report", "overview", a, write("b.json", kTrace)});
  ASSERT_EQ(t.rc, kExitOk) << t.err;
  // The two instantiations of gemm are one row: 600 of 1000 us, 3e11 FLOPs in 600 us.
  EXPECT_NE(t.out.find("a.json: 1.000 ms in 3 kernels\n   60.0%  gemm  500.0 TFLOP/s, "),
            std::string::npos)
      << t.out;
  EXPECT_NE(t.out.find("   40.0%  copy_kernel  4000 GB/s"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("b.json: "), std::string::npos) << t.out;
  const CliRun j = run_flopline({"stats", "--report", "overview", a, "--json"});
  ASSERT_EQ(j.rc, kExitOk) << j.err;
  EXPECT_NE(
      j.out.find(R"("total_ns":1000000,"slices":3,"kernels_only":true,"top":[{"name":"gemm",)"),
      std::string::npos)
      << j.out;
}

// An operator whose two kernels last 4.6e18 and 4.7e18 ns: its busy, device and self
// time pass 2^63 ns and saturate, as the sums of --by name do, never wrap negative.
TEST_F(StatsCommand, OperatorTimesSaturate) {
  const std::string f = write("huge.json", R"json({"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"op","pid":1,"tid":1,"ts":-10,"dur":100},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":-5,"dur":1,
 "args":{"correlation":1}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":5,"dur":1,
 "args":{"correlation":2}},
{"ph":"X","cat":"kernel","name":"a","pid":0,"tid":7,"ts":-4600000000000000,
 "dur":4600000000000000,"args":{"correlation":1}},
{"ph":"X","cat":"kernel","name":"b","pid":0,"tid":8,"ts":1,"dur":4700000000000000,
 "args":{"correlation":2}}]})json");
  const CliRun r = run_flopline({"stats", f, "--by", "op", "--json"});
  ASSERT_EQ(r.rc, kExitOk) << r.err;
  EXPECT_EQ(r.out.find(":-"), std::string::npos) << r.out;  // no negative value anywhere
  EXPECT_NE(r.out.find(R"("total_ns":9223372036854775807)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(R"("device_total_ns":9223372036854775807)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(R"("extent_ns":9223372036854775807)"), std::string::npos) << r.out;
}

// Counted values out of range: a count below one FLOP gives no difference (it read
// "inf%"); a negative one or a string is no count at all; a string "flops" is dropped
// and said, as a negative one is.
TEST_F(StatsCommand, CountedValuesOutOfRangeAreNoCounts) {
  const std::string f = write("odd_counts.json", R"json({"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"tiny","pid":1,"tid":1,"ts":0,"dur":10,
 "args":{"flops":1e9,"counted flops":1e-300}},
{"ph":"X","cat":"user_annotation","name":"negative","pid":1,"tid":1,"ts":20,"dur":10,
 "args":{"flops":1e9,"counted flops":-5}},
{"ph":"X","cat":"user_annotation","name":"text","pid":1,"tid":1,"ts":40,"dur":10,
 "args":{"flops":1e9,"counted flops":"5"}},
{"ph":"X","cat":"user_annotation","name":"string flops","pid":1,"tid":1,"ts":60,"dur":10,
 "args":{"flops":"7","bytes":"8"}}]})json");
  const CliRun t = run_flopline({"stats", f, "--by", "op"});
  ASSERT_EQ(t.rc, kExitOk) << t.err;
  EXPECT_EQ(t.out.find("inf"), std::string::npos) << t.out;
  EXPECT_NE(t.err.find("not a number (a string"), std::string::npos) << t.err;
  const CliRun j = run_flopline({"stats", f, "--by", "op", "--json"});
  ASSERT_EQ(j.rc, kExitOk) << j.err;
  EXPECT_EQ(j.out.find(R"("declared_vs_counted_pct":-)"), std::string::npos) << j.out;
  EXPECT_EQ(j.out.find(R"("counted_flops":-5)"), std::string::npos) << j.out;
  EXPECT_EQ(j.out.find(R"("counted_flops":5)"), std::string::npos) << j.out;
  EXPECT_EQ(j.out.find(R"("flops":7)"), std::string::npos) << j.out;
}

// --names: base by default, full, and mangled from the trace's "mangledKernelNames"
// (what flopline's capture writes); a trace without them says so and keeps full names.
TEST_F(StatsCommand, NamesBaseFullAndMangled) {
  const std::string events = R"json("traceEvents":[
{"ph":"X","cat":"kernel","name":"void ns::scale<float>(float*, int)","pid":0,"tid":7,"ts":1,"dur":5},
{"ph":"X","cat":"kernel","name":"void ns::scale<double>(double*, int)","pid":0,"tid":7,"ts":10,"dur":5}])json";
  const std::string with = write(
      "mangled.json", "{" + events +
                          ",\"mangledKernelNames\":{\"void ns::scale<float>(float*, "
                          "int)\":\"_ZN2ns5scaleIfEEvPfi\","
                          "\"void ns::scale<double>(double*, int)\":\"_ZN2ns5scaleIdEEvPdi\"}}");
  const std::string without = write("demangled.json", "{" + events + "}");
  const CliRun base = run_flopline({"stats", with, "--csv"});
  ASSERT_EQ(base.rc, kExitOk) << base.err;
  EXPECT_NE(base.out.find("\nscale,2,"), std::string::npos) << base.out;  // one row
  const CliRun full = run_flopline({"stats", with, "--csv", "--names", "full"});
  EXPECT_NE(full.out.find("\"void ns::scale<float>(float*, int)\",1,"), std::string::npos)
      << full.out;
  const CliRun mangled = run_flopline({"stats", with, "--csv", "--names", "mangled"});
  ASSERT_EQ(mangled.rc, kExitOk) << mangled.err;
  EXPECT_NE(mangled.out.find("\n_ZN2ns5scaleIfEEvPfi,1,"), std::string::npos) << mangled.out;
  EXPECT_NE(mangled.out.find("\n_ZN2ns5scaleIdEEvPdi,1,"), std::string::npos) << mangled.out;
  const CliRun none = run_flopline({"stats", without, "--csv", "--names", "mangled"});
  ASSERT_EQ(none.rc, kExitOk) << none.err;
  EXPECT_NE(none.err.find("no mangled kernel names"), std::string::npos) << none.err;
  EXPECT_NE(none.out.find("\"void ns::scale<float>(float*, int)\",1,"), std::string::npos)
      << none.out;
  EXPECT_EQ(run_flopline({"stats", with, "--names", "short"}).rc, kExitUsage);
}

// Control bytes from a trace never reach the terminal: in the fragment that tells
// look-alike names apart, in category names of "no slices match", in file names.
TEST_F(StatsCommand, ControlBytesAreNeverPrinted) {
  // Alike at both ends, so that both shorten to the same text; they differ where the
  // control bytes are.
  const std::string a = "void kernel<" + std::string(60, 'x') + ", \\u001b]0;pwned\\u0007" +
                        std::string(120, 'y') + ">()";
  const std::string b =
      "void kernel<" + std::string(60, 'x') + ", \\u001b[2J\\n" + std::string(120, 'y') + ">()";
  const std::string f = write("ctl\x1b[1m.json", R"json({"traceEvents":[
{"ph":"X","cat":"kernel","name":")json" + a + R"json(","pid":0,"tid":7,"ts":1,"dur":5},
{"ph":"X","cat":"kernel","name":")json" + b + R"json(","pid":0,"tid":7,"ts":10,"dur":5},
{"ph":"X","cat":"bad\u001b]2;x\u0007cat","name":"k","pid":0,"tid":7,"ts":20,"dur":5}]})json");
  auto clean = [](const std::string& s) {
    for (char c : s) {
      const auto u = static_cast<unsigned char>(c);
      if ((u < 0x20 && c != '\n') || u == 0x7f) return false;
    }
    return true;
  };
  const CliRun t = run_flopline({"stats", f, "--name-width", "40", "--names", "full"});
  ASSERT_EQ(t.rc, kExitOk) << t.err;
  EXPECT_TRUE(clean(t.out)) << t.out;
  EXPECT_TRUE(clean(t.err)) << t.err;
  EXPECT_NE(t.out.find(" ["), std::string::npos) << t.out;  // the fragments are there
  const CliRun none = run_flopline({"stats", f, "--cat", "nothing\x1b[2J"});
  EXPECT_NE(none.rc, kExitOk);
  EXPECT_TRUE(clean(none.err)) << none.err;
}

TEST_F(StatsCommand, NothingMatchingIsAnError) {
  const CliRun r = run_flopline({"stats", write("t.json", kTrace), "--cat", "nccl"});
  EXPECT_EQ(r.rc, kExitFailure);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("no slices match (categories: nccl)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("kernel (4)"), std::string::npos) << r.err;
}

// A stream that takes nothing, as a full disk does.
class FullDisk : public std::streambuf {
 protected:
  int_type overflow(int_type) override {
    errno = ENOSPC;
    return traits_type::eof();
  }
  std::streamsize xsputn(const char*, std::streamsize) override {
    errno = ENOSPC;
    return 0;
  }
};

TEST_F(StatsCommand, AFailedWriteIsAnErrorWithItsReason) {
  const std::string f = write("t.json", kTrace);
  for (const char* format : {"--csv", "--json", "--by"}) {
    FullDisk disk;
    std::ostream out(&disk);
    std::ostringstream err;
    std::vector<std::string> args = {"stats", f, format};
    if (std::string_view(format) == "--by") args.push_back("name");
    EXPECT_EQ(run_cli(args, out, err), kExitFailure) << format;
    EXPECT_EQ(err.str(), "flopline stats: cannot write the output: No space left on device\n")
        << format;
  }
}

TEST_F(StatsCommand, MostOfTheFileUnreadIsAnError) {
  std::string text = kTrace;
  text.resize(text.rfind(']'));
  text +=
      R"(,{"ph":"X","cat":"kernel","name":"x","ts":5,"args":[)" + std::string(4000, '@') + "]}]}";
  const CliRun r = run_flopline({"stats", write("t.json", text), "--json"});
  EXPECT_EQ(r.rc, kExitFailure);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("could not be read past this and later errors"), std::string::npos) << r.err;
}

TEST_F(StatsCommand, GarbageIsAReadErrorWithAPosition) {
  const std::string f = write("bad.json", "{\"traceEvents\": [\n  {\"ph\": @}\n]}");
  const CliRun r = run_flopline({"stats", f});
  EXPECT_EQ(r.rc, kExitFailure);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find(f + ":2:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(byte "), std::string::npos) << r.err;
}

}  // namespace
}  // namespace flopline::cli
