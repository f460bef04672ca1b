// Every corpus trace loads through the viewer's path (args on demand), lays out with
// no slice lost, keeps the row invariant the LOD relies on, and its fit-all LOD items
// cover every slice exactly once; its args read back as the reader keeps them.
#include <gtest/gtest.h>

#include <filesystem>

#include "core/load_job.h"
#include "core/lod.h"
#include "core/op_table.h"
#include "viewer_test_util.h"

#include "corpus_dir.h"

namespace flopline::viewer {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> corpus_files() {
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(FLOPLINE_CORPUS_DIR)) {
    const std::string name = e.path().filename().string();
    if (name.ends_with(".json") || name.ends_with(".json.gz")) files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(Corpus, EveryTraceLoadsLaysOutAndReadsArgsBack) {
  FLOPLINE_SKIP_WITHOUT_CORPUS();
  const auto files = corpus_files();
  ASSERT_GE(files.size(), 26u);
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    LoadResult r = load_files({path});
    ASSERT_TRUE(r.errors.empty()) << r.errors.front();
    ASSERT_EQ(r.files.size(), 1u);
    const trace::Trace& t = r.files[0]->trace;
    const auto list = r.trace_list();
    EXPECT_EQ(r.layout.slice_count(), t.slice_count());
    // Every track with slices is laid out, every row once.
    std::size_t rows = 0;
    for (const trace::Track& k : t.tracks) rows += k.rows.size();
    EXPECT_EQ(r.layout.rows().size(), rows);

    Viewport vp;
    vp.width_px = 1600;
    vp.set_extent(r.begin_ns, r.end_ns);
    vp.fit(r.begin_ns, r.end_ns);
    std::uint64_t covered = 0;
    std::vector<DrawItem> items;
    for (const LayoutRow& lr : r.layout.rows()) {
      const auto& row = t.tracks[lr.track].rows[lr.row];
      // The LOD's invariant: sorted by start, ends sorted too (no overlap in a row).
      for (std::size_t i = 1; i < row.size(); ++i) {
        ASSERT_LE(row[i - 1].start, row[i].start);
        ASSERT_LE(row[i - 1].end(), row[i].start);
      }
      items.clear();
      visible_items(row, vp, items);
      ASSERT_LE(items.size(), 1100u);
      for (const DrawItem& d : items) covered += d.count;
    }
    EXPECT_EQ(covered, t.slice_count()) << "a slice is not drawn at fit-all";
    // The tables build (operator, kernel) without error on every file.
    for (trace::GroupBy by : {trace::GroupBy::kName, trace::GroupBy::kOperator}) {
      OpTableQuery q;
      q.by = by;
      const OpTable table = build_op_table(list, q);
      std::uint64_t count = 0;
      for (const OpRow& row : table.rows()) count += row.stats.count;
      EXPECT_EQ(count, table.slices());
    }

    // Args read back from the file equal what a kKeep read stores.
    trace::ReadResult keep = trace::read_chrome_trace_file(path);
    ASSERT_TRUE(keep.ok());
    ASSERT_EQ(t.tracks.size(), keep.trace.tracks.size());
    ASSERT_EQ(t.slice_count(), keep.trace.slice_count());
    // A sample of 40 slices spread over the file: every gzip read inflates up to 8 MB.
    const std::size_t total = t.slice_count();
    const std::size_t stride = std::max<std::size_t>(1, total / 40);
    std::size_t n = 0, seen = 0;
    for (std::size_t k = 0; k < t.tracks.size(); ++k) {
      for (std::size_t row = 0; row < t.tracks[k].rows.size(); ++row) {
        const auto& a = keep.trace.tracks[k].rows[row];
        const auto& b = t.tracks[k].rows[row];
        ASSERT_EQ(a.size(), b.size());
        for (std::size_t i = 0; i < a.size(); ++i) {
          if (seen++ % stride != 0) continue;
          const std::string want =
              a[i].args == trace::kNoArgs ? "{}" : std::string(keep.trace.args.json(a[i].args));
          ASSERT_EQ(r.files[0]->args.args_json(t, b[i].args), want) << k << "/" << row << "/" << i;
          ++n;
        }
      }
    }
    EXPECT_EQ(n > 0, total > 0);
  }
}

}  // namespace
}  // namespace flopline::viewer
