// The diff window's model: two runs loaded as the viewer loads them (--diff A B, args
// left in the files, flows released) give trace::diff_rows' rows over the same files
// read as `flopline diff` reads them; the window's filter and orders; its cells.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/diff_table.h"
#include "core/load_job.h"
#include "core/viewport.h"
#include "viewer_test_util.h"

namespace flopline::viewer {
namespace {

namespace fs = std::filesystem;

std::string gemm_args(const char* precision) {
  return std::string(R"({"flops":2e9,"precision":")") + precision + "\"}";
}

// Run A: gemm in tf32 (4 x 10 us), add (1 x 5 us), old_kernel, 1 copy. Run B: gemm in
// fp32 (4 x 30 us), add as before, new_kernel, 3 copies of the same size.
std::string run_a() {
  return testing::trace_json({
      testing::x_event("gemm", "kernel", 0, 7, "0", "10", gemm_args("tf32")),
      testing::x_event("gemm", "kernel", 0, 7, "20", "10", gemm_args("tf32")),
      testing::x_event("gemm", "kernel", 0, 7, "40", "10", gemm_args("tf32")),
      testing::x_event("gemm", "kernel", 0, 7, "60", "10", gemm_args("tf32")),
      testing::x_event("add", "kernel", 0, 7, "80", "5"),
      testing::x_event("old_kernel", "kernel", 0, 7, "90", "7"),
      testing::x_event("Memcpy DtoD", "gpu_memcpy", 0, 7, "100", "2"),
      testing::x_event("step", "user_annotation", 1, 1, "0", "110"),  // not GPU work
  });
}

std::string run_b() {
  return testing::trace_json({
      testing::x_event("gemm", "kernel", 0, 7, "0", "30", gemm_args("fp32")),
      testing::x_event("gemm", "kernel", 0, 7, "40", "30", gemm_args("fp32")),
      testing::x_event("gemm", "kernel", 0, 7, "80", "30", gemm_args("fp32")),
      testing::x_event("gemm", "kernel", 0, 7, "120", "30", gemm_args("fp32")),
      testing::x_event("add", "kernel", 0, 7, "160", "5"),
      testing::x_event("new_kernel", "kernel", 0, 7, "170", "3"),
      testing::x_event("Memcpy DtoD", "gpu_memcpy", 0, 7, "180", "2"),
      testing::x_event("Memcpy DtoD", "gpu_memcpy", 0, 7, "185", "2"),
      testing::x_event("Memcpy DtoD", "gpu_memcpy", 0, 7, "190", "2"),
  });
}

class DiffTableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("flopline_diff_table_" +
            std::to_string(::testing::UnitTest::GetInstance()->current_test_info()->line()));
    fs::create_directories(dir_);
    a_ = (dir_ / "a.json").string();
    b_ = (dir_ / "b.json").string();
    std::ofstream(a_) << run_a();
    std::ofstream(b_) << run_b();
  }
  void TearDown() override { fs::remove_all(dir_); }

  LoadResult load(trace::GroupBy by) {
    LoadOptions o;
    o.diff = LoadOptions::DiffSides{.a_given = "A", .b_given = "B", .a_paths = 1, .by = by};
    o.labels = {"A: a.json", "B: b.json"};
    LoadResult r = load_files({a_, b_}, o);
    EXPECT_TRUE(r.errors.empty());
    return r;
  }

  // As `flopline diff` sums a side: the file read with its args, one accumulator.
  std::vector<trace::StatsRow> cli_rows(const std::string& path, trace::GroupBy by) {
    trace::ReadResult r = trace::read_chrome_trace_file(path);
    EXPECT_TRUE(r.ok());
    trace::StatsAccumulator acc(by);
    acc.add(r.trace, diff_stats_query(by));
    return acc.finish().rows;
  }

  fs::path dir_;
  std::string a_, b_;
};

TEST_F(DiffTableTest, RowsAreTraceDiffsOverBothRuns) {
  const LoadResult r = load(trace::GroupBy::kName);
  ASSERT_TRUE(r.diff);
  const DiffTable& d = *r.diff;
  EXPECT_EQ(d.a.given, "A");
  EXPECT_EQ(d.a.files, 1u);
  EXPECT_EQ(d.b.files, 1u);
  // Kernels and copies only: the CPU annotation is no row.
  EXPECT_EQ(d.a.total_ns, (40 + 5 + 7 + 2) * 1000);
  EXPECT_EQ(d.b.total_ns, (120 + 5 + 3 + 6) * 1000);
  EXPECT_EQ(r.files[0]->label, "A: a.json");

  const std::vector<trace::DiffRow> want =
      trace::diff_rows(cli_rows(a_, trace::GroupBy::kName), cli_rows(b_, trace::GroupBy::kName));
  ASSERT_EQ(d.rows.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(want[i].name);
    EXPECT_EQ(d.rows[i].name, want[i].name);
    EXPECT_EQ(d.rows[i].kind, want[i].kind);
    EXPECT_EQ(d.rows[i].delta_ns, want[i].delta_ns);
    EXPECT_EQ(d.rows[i].per_call_pct, want[i].per_call_pct);
    EXPECT_EQ(d.rows[i].work_pct, want[i].work_pct);
    ASSERT_EQ(d.rows[i].a.has_value(), want[i].a.has_value());
    ASSERT_EQ(d.rows[i].b.has_value(), want[i].b.has_value());
    if (want[i].a) {
      EXPECT_EQ(d.rows[i].a->count, want[i].a->count);
      EXPECT_EQ(d.rows[i].a->total_ns, want[i].a->total_ns);
      EXPECT_EQ(d.rows[i].a->precision, want[i].a->precision);
      EXPECT_EQ(d.rows[i].a->tflops, want[i].a->tflops);
    }
    if (want[i].b) {
      EXPECT_EQ(d.rows[i].b->count, want[i].b->count);
      EXPECT_EQ(d.rows[i].b->total_ns, want[i].b->total_ns);
      EXPECT_EQ(d.rows[i].b->precision, want[i].b->precision);
    }
  }
  // And what each change is, by hand: by time impact, largest first.
  ASSERT_EQ(d.rows.size(), 5u);
  EXPECT_EQ(d.rows[0].name, "gemm");
  EXPECT_EQ(d.rows[0].kind, trace::DiffKind::kPrecisionChanged);
  EXPECT_EQ(d.rows[0].delta_ns, 80'000);
  EXPECT_EQ(d.rows[1].name, "old_kernel");
  EXPECT_EQ(d.rows[1].kind, trace::DiffKind::kRemoved);
  EXPECT_EQ(d.rows[2].name, "Memcpy DtoD");
  EXPECT_EQ(d.rows[2].kind, trace::DiffKind::kMoreCalls);
  EXPECT_EQ(d.rows[3].kind, trace::DiffKind::kNew);
  EXPECT_EQ(d.rows[4].kind, trace::DiffKind::kSame);
}

TEST_F(DiffTableTest, OperatorsByName) {
  const LoadResult r = load(trace::GroupBy::kOperator);
  ASSERT_TRUE(r.diff);
  EXPECT_EQ(r.diff->by, trace::GroupBy::kOperator);
  const std::vector<trace::DiffRow> want = trace::diff_rows(
      cli_rows(a_, trace::GroupBy::kOperator), cli_rows(b_, trace::GroupBy::kOperator));
  ASSERT_EQ(r.diff->rows.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(r.diff->rows[i].name, want[i].name);
    EXPECT_EQ(r.diff->rows[i].kind, want[i].kind);
    EXPECT_EQ(r.diff->rows[i].delta_ns, want[i].delta_ns);
  }
}

// A column of the diff schema by its id.
const trace::DiffColumn* col(std::string_view id) {
  const trace::DiffColumn* c = trace::find_diff_column(id);
  EXPECT_NE(c, nullptr) << id;
  return c;
}

TEST_F(DiffTableTest, TheWindowFiltersAndOrders) {
  const LoadResult r = load(trace::GroupBy::kName);
  const DiffTable& d = *r.diff;
  // By impact: diff_rows' own order.
  const std::vector<std::size_t> all = diff_view(d, "");
  ASSERT_EQ(all.size(), d.rows.size());
  for (std::size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i], i);
  // A filter matches names and changes, ignoring case.
  const std::vector<std::size_t> mem = diff_view(d, "MEMCPY");
  ASSERT_EQ(mem.size(), 1u);
  EXPECT_EQ(d.rows[mem[0]].name, "Memcpy DtoD");
  const std::vector<std::size_t> prec = diff_view(d, "precision");
  ASSERT_EQ(prec.size(), 1u);
  EXPECT_EQ(d.rows[prec[0]].name, "gemm");
  EXPECT_TRUE(diff_view(d, "no such row").empty());
  // By name, ascending.
  const std::vector<std::size_t> by_name = diff_view(d, "", col("name"), false);
  for (std::size_t i = 1; i < by_name.size(); ++i)
    EXPECT_LE(d.rows[by_name[i - 1]].name, d.rows[by_name[i]].name);
  // By A's time, descending: the rows A lacks go last.
  const std::vector<std::size_t> by_a = diff_view(d, "", col("a_total_ns"), true);
  EXPECT_EQ(d.rows[by_a.front()].name, "gemm");
  EXPECT_EQ(d.rows[by_a.back()].kind, trace::DiffKind::kNew);
  const std::vector<std::size_t> by_a_up = diff_view(d, "", col("a_total_ns"), false);
  EXPECT_EQ(d.rows[by_a_up.back()].kind, trace::DiffKind::kNew);  // unknown last either way
  EXPECT_EQ(d.rows[by_a_up.front()].name, "Memcpy DtoD");
}

TEST_F(DiffTableTest, CellsSayWhatASideLacks) {
  const LoadResult r = load(trace::GroupBy::kName);
  const DiffTable& d = *r.diff;
  const trace::DiffRow& gemm = d.rows[0];
  EXPECT_EQ(diff_cell_text(gemm, *col("change")), "precision changed");
  EXPECT_EQ(diff_cell_text(gemm, *col("delta_ns")), "+" + format_duration(80'000));
  EXPECT_EQ(diff_cell_text(gemm, *col("per_call_pct")), "+200.0%");
  EXPECT_EQ(diff_cell_text(gemm, *col("a_precision")), "tf32");
  EXPECT_EQ(diff_cell_text(gemm, *col("b_precision")), "fp32");
  EXPECT_EQ(diff_cell_text(gemm, *col("b_count")), "4");
  const trace::DiffRow& removed = d.rows[1];
  EXPECT_EQ(diff_cell_text(removed, *col("delta_ns")), "-" + format_duration(7'000));
  EXPECT_EQ(diff_cell_text(removed, *col("b_count")), "-");
  EXPECT_EQ(diff_cell_text(removed, *col("b_total_ns")), "-");
  // The window's columns are the diff schema's people columns, each with a title, in
  // the command's order.
  const std::vector<const trace::DiffColumn*> shown = trace::diff_people_columns();
  ASSERT_EQ(shown.size(), 14u);
  EXPECT_EQ(shown.front()->id, "change");
  EXPECT_EQ(shown.back()->id, "name");
  for (const trace::DiffColumn* c : shown) EXPECT_FALSE(c->title.empty()) << c->id;
}

TEST(DiffTable, RowQueryFindsKernelsByName) {
  EXPECT_EQ(diff_row_query(trace::GroupBy::kName).categories,
            (std::vector<std::string>{"kernel", "gpu_memcpy", "gpu_memset"}));
  EXPECT_TRUE(diff_row_query(trace::GroupBy::kOperator).categories.empty());
}

}  // namespace
}  // namespace flopline::viewer
