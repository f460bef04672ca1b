// Two runs' rows matched by name and each change classified: new, removed, precision,
// work per call, calls, speed per call; sorted by the time they moved. And the
// `flopline diff` command on two small traces: table, CSV, JSON, thresholds, errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "cli_parse.h"
#include "cli_test_util.h"
#include "diff_command.h"
#include "flopline/trace/diff_schema.h"
#include "flopline/trace/trace_diff.h"

namespace flopline::trace {
namespace {

StatsRow row(std::string name, std::uint64_t count, TimeNs total, std::optional<double> flops = {},
             std::string precision = {}) {
  StatsRow r;
  r.name = std::move(name);
  r.count = count;
  r.total_ns = total;
  r.avg_ns = count > 0 ? total / static_cast<TimeNs>(count) : 0;
  r.flops = flops;
  r.precision = std::move(precision);
  return r;
}

TEST(TraceDiff, EachChangeIsClassifiedAndSortedByItsTime) {
  const std::vector<StatsRow> a = {
      row("gemm_tf32", 10, 1000, 1e9, "tf32"),  // B: fp32 fallback, 3x slower
      row("gemm_big", 10, 2000, 2e9, "bf16"),   // B: more work per call
      row("softmax", 10, 500),                  // B: 2% slower per call: same
      row("add", 10, 400),                      // B: 20 calls
      row("copy", 10, 1000),                    // B: 10% faster per call
      row("gone", 5, 50),                       // removed
  };
  const std::vector<StatsRow> b = {
      row("gemm_tf32", 10, 3000, 1e9, "fp32"),
      row("gemm_big", 10, 4000, 4e9, "bf16"),
      row("softmax", 10, 510),
      row("add", 20, 800),
      row("copy", 10, 900),
      row("fresh", 1, 70),  // new
  };
  const auto d = diff_rows(a, b);
  ASSERT_EQ(d.size(), 7u);
  std::vector<std::string> order;
  for (const DiffRow& r : d) order.push_back(r.name + ":" + to_string(r.kind));
  EXPECT_EQ(order, (std::vector<std::string>{"gemm_big:more work", "gemm_tf32:precision changed",
                                             "add:more calls", "copy:faster", "fresh:new",
                                             "gone:removed", "softmax:same"}));
  EXPECT_EQ(d[0].delta_ns, 2000);
  EXPECT_DOUBLE_EQ(*d[0].delta_pct, 100.0);
  EXPECT_DOUBLE_EQ(*d[0].work_pct, 100.0);
  EXPECT_DOUBLE_EQ(*d[3].per_call_pct, -10.0);
  EXPECT_FALSE(d[4].delta_pct);  // new: no A time to compare with
  EXPECT_EQ(d[5].delta_ns, -50);
}

TEST(TraceDiff, TolerancesDecideWhatIsTheSame) {
  const std::vector<StatsRow> a = {row("k", 10, 10000, 1e9)};
  const std::vector<StatsRow> b = {row("k", 10, 10150, 1.005e9)};
  EXPECT_EQ(diff_rows(a, b)[0].kind, DiffKind::kSame);  // 0.5% work, 1.5% time
  DiffTolerances strict{0.1, 1.0};
  EXPECT_EQ(diff_rows(a, b, strict)[0].kind, DiffKind::kMoreWork);
  strict.work_pct = 1.0;
  EXPECT_EQ(diff_rows(a, b, strict)[0].kind, DiffKind::kSlower);
}

// The diff schema's table is consistent: ids are unique, each field has the value its
// kind needs, a side's field becomes A's and B's columns next to each other, and one
// column is the name and one the time impact (the window's default order).
TEST(DiffSchema, FieldsExpandToUniqueColumns) {
  std::set<std::string> ids, titles;
  std::set<int> orders;
  int names = 0, impact = 0;
  for (const DiffField& f : diff_fields()) {
    EXPECT_EQ(f.per_side, f.side_value != nullptr) << f.id;
    EXPECT_EQ(!f.per_side, f.row_value != nullptr) << f.id;
    names += f.is_name;
    impact += f.by_magnitude;
    if (f.people) {
      EXPECT_TRUE(orders.insert(f.people_order).second) << f.id;
    }
  }
  EXPECT_EQ(names, 1);
  EXPECT_EQ(impact, 1);
  for (const DiffColumn& c : diff_columns()) {
    EXPECT_TRUE(ids.insert(c.id).second) << c.id;
    if (c.field->people) {
      EXPECT_TRUE(titles.insert(c.title).second) << c.title;
    }
  }
  const DiffColumn* a = find_diff_column("a_count");
  const DiffColumn* b = find_diff_column("b_count");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(b, a + 1);
  EXPECT_EQ(a->title, "A calls");
  EXPECT_EQ(b->table_title, "B calls");
  // A side without the row has no value; the row's own fields always have theirs.
  DiffRow removed;
  removed.name = "gone";
  removed.kind = DiffKind::kRemoved;
  removed.a = StatsRow{};
  removed.a->count = 5;
  EXPECT_EQ(a->value(removed).i, 5);
  EXPECT_FALSE(b->value(removed).known());
  EXPECT_EQ(find_diff_column("change")->value(removed).text, "removed");
  EXPECT_EQ(diff_csv_row(removed), "gone,removed,5,,0,,0,,0,,,,,,,,,");
}

}  // namespace
}  // namespace flopline::trace

namespace flopline::cli {
namespace {

class DiffCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("flopline_test_diff_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const auto p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  // One kernel "gemm" of `dur` us with `flops`, `calls` times, and "add" of 10 us once.
  std::string run(const std::string& name, int calls, int dur, double flops,
                  const char* precision) {
    std::string t = R"({"traceEvents":[)";
    for (int i = 0; i < calls; ++i) {
      t += R"({"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":)" +
           std::to_string(i * 1000) + R"(,"dur":)" + std::to_string(dur) + R"(,"args":{"flops":)" +
           std::to_string(flops) + R"(,"precision":")" + precision + R"("}},)";
    }
    t += R"({"ph":"X","cat":"kernel","name":"add","pid":0,"tid":7,"ts":99000,"dur":10}]})";
    return write(name, t);
  }
  std::filesystem::path dir_;
};

using ::flopline::cli::testing::CliRun;
using ::flopline::cli::testing::run_flopline;

TEST_F(DiffCommand, TableCsvJsonAndThresholds) {
  const std::string a = run("a.json", 4, 100, 1e9, "tf32");
  const std::string b = run("b.json", 4, 300, 1e9, "fp32");  // a TF32 fallback
  const CliRun t = run_flopline({"diff", a, b});
  ASSERT_EQ(t.rc, kExitOk) << t.err;
  EXPECT_NE(t.out.find(" precision changed    +800,000   +200.0        4        4      400,000"
                       "    1,200,000      +200.0    +0.0      10.00       3.33  tf32    fp32    "
                       "gemm\n"),
            std::string::npos)
      << t.out;
  EXPECT_NE(t.out.find(" same                        0     +0.0        1        1       10,000"),
            std::string::npos)
      << t.out;
  EXPECT_NE(t.out.find("Total: A 410,000 ns, B 1,210,000 ns (+195.1%); 2 names"), std::string::npos)
      << t.out;

  const CliRun c = run_flopline({"diff", a, b, "--csv"});
  ASSERT_EQ(c.rc, kExitOk) << c.err;
  EXPECT_NE(c.out.find("gemm,precision changed,4,4,400000,1200000,800000,200,100000,300000,200,"
                       "4000000000,4000000000,0,10,3.3333333333333335,tf32,fp32\n"),
            std::string::npos)
      << c.out;

  const CliRun j = run_flopline({"diff", a, b, "--json", "--fail-if-slower", "50%"});
  EXPECT_EQ(j.rc, kExitThresholdExceeded);
  EXPECT_NE(j.out.find(R"("name":"gemm","change":"precision changed","delta_ns":800000,)"),
            std::string::npos)
      << j.out;
  EXPECT_NE(j.out.find(R"x("thresholds_exceeded":["total time grew by 195.1% (more than 50%)"])x"),
            std::string::npos)
      << j.out;
  EXPECT_NE(j.err.find("threshold exceeded"), std::string::npos) << j.err;
  EXPECT_EQ(run_flopline({"diff", a, b, "--fail-if-slower", "300"}).rc, kExitOk);
  const CliRun row = run_flopline({"diff", a, b, "--fail-if-row-slower", "10"});
  EXPECT_EQ(row.rc, kExitThresholdExceeded);
  EXPECT_NE(row.out.find("Threshold exceeded: gemm grew by 200.0% (more than 10%)"),
            std::string::npos)
      << row.out;
}

TEST_F(DiffCommand, BadCommandLinesAndInputs) {
  const std::string a = run("a.json", 1, 100, 1e9, "bf16");
  EXPECT_EQ(run_flopline({"diff", a}).rc, kExitUsage);
  EXPECT_NE(run_flopline({"diff", a}).err.find("two runs to compare are needed"),
            std::string::npos);
  EXPECT_EQ(run_flopline({"diff", a, a, "--fail-if-slower", "fast"}).rc, kExitUsage);
  // A stats grouping diff does not match by, and a word that is none: refused, naming
  // the three it takes. The schema's alias for operators is taken.
  for (const char* by : {"category", "stream", "kernels"}) {
    const CliRun r = run_flopline({"diff", a, a, "--by", by});
    EXPECT_EQ(r.rc, kExitUsage) << by;
    EXPECT_NE(r.err.find("use name, op or path"), std::string::npos) << r.err;
  }
  const CliRun op = run_flopline({"diff", a, a, "--by", "operator"});
  EXPECT_NE(op.rc, kExitUsage) << op.err;
  EXPECT_EQ(op.err.find("is not a grouping"), std::string::npos) << op.err;
  const CliRun missing = run_flopline({"diff", a, (dir_ / "nope.json").string()});
  EXPECT_EQ(missing.rc, kExitFailure);
  EXPECT_NE(missing.err.find("nope.json"), std::string::npos) << missing.err;
  const CliRun help = run_flopline({"diff", "--help"});
  EXPECT_EQ(help.rc, kExitOk);
  EXPECT_NE(help.out.find("usage: flopline diff A B"), std::string::npos);
  // The same run against itself: every row the same.
  const CliRun same = run_flopline({"diff", a, a, "--json"});
  EXPECT_EQ(same.rc, kExitOk);
  EXPECT_EQ(same.out.find(R"("change":"slower")"), std::string::npos) << same.out;
}

}  // namespace
}  // namespace flopline::cli
