// Loading off the UI thread (progress, cancel, errors with their position), and args
// kept in the file (ArgsMode::kOnDemand) read back exactly as ArgsMode::kKeep stores
// them, from plain and gzip files (several gzip members, several checkpoints).
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <new>
#include <regex>
#include <thread>

#include "core/args_source.h"
#include "core/load_job.h"
#include "viewer_test_util.h"

namespace flopline::viewer {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("flopline_viewer_test_" + std::to_string(::getpid()) +
                                         "_" + std::to_string(counter_++));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
  static inline int counter_ = 0;
};

void write_file(const std::string& path, std::string_view text) {
  std::ofstream(path, std::ios::binary) << text;
}

// Writes `parts` as consecutive gzip members of one file (what `cat a.gz b.gz` makes).
void write_gzip_members(const std::string& path, const std::vector<std::string>& parts) {
  std::remove(path.c_str());
  for (const std::string& p : parts) {
    gzFile f = gzopen(path.c_str(), "ab1");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(gzwrite(f, p.data(), static_cast<unsigned>(p.size())), static_cast<int>(p.size()));
    gzclose(f);
  }
}

// Kineto-like kernels and launches with varied args (lax ones too), `n` of each.
std::vector<std::string> kernel_events(int n) {
  std::vector<std::string> ev;
  for (int i = 0; i < n; ++i) {
    const std::string ts = std::to_string(10 * i) + "." + std::to_string(i % 1000);
    ev.push_back(testing::x_event(
        "cudaLaunchKernel", "cuda_runtime", 1, 1, ts, "2.5",
        "{\n      \"correlation\": " + std::to_string(i) + ", \"cbid\": 211\n    }"));
    std::string args = "{\"device\": 0, \"stream\": 7, \"correlation\": " + std::to_string(i) +
                       ", \"grid\": [" + std::to_string(i % 977) +
                       ", 1, 1], \"block\": [128, 1, 1], " +
                       "\"registers per thread\": " + std::to_string(16 + i % 64) +
                       ", \"name\": \"k\\u00e9" + std::to_string(i) + "\"";
    if (i % 50 == 0) args += ", \"odd\": nan, \"list\": [1, 2, ],";  // lax JSON, stored strict
    args += "}";
    ev.push_back(
        testing::x_event("kernel_" + std::to_string(i % 13), "kernel", 0, 7, ts, "4", args));
  }
  return ev;
}

// Every slice's args read back from an on-demand load equal what kKeep stored.
void expect_same_args(const std::string& path, std::size_t stride = 1) {
  trace::ReadOptions keep;
  trace::ReadResult a = trace::read_chrome_trace_file(path, keep);
  ASSERT_TRUE(a.ok());
  ArgsSource source(path);
  trace::ReadOptions lazy;
  lazy.args = trace::ArgsMode::kOnDemand;
  trace::ReadResult b = trace::read_chrome_trace_file(path, lazy);
  ASSERT_TRUE(b.ok());
  ASSERT_EQ(a.trace.slice_count(), b.trace.slice_count());
  source.start_indexing();
  std::size_t compared = 0, located = 0, n = 0;
  for (std::size_t k = 0; k < a.trace.tracks.size(); ++k) {
    for (std::size_t r = 0; r < a.trace.tracks[k].rows.size(); ++r) {
      const auto& ra = a.trace.tracks[k].rows[r];
      const auto& rb = b.trace.tracks[k].rows[r];
      ASSERT_EQ(ra.size(), rb.size());
      for (std::size_t i = 0; i < ra.size(); ++i) {
        if (n++ % stride != 0) continue;
        const std::string want =
            ra[i].args == trace::kNoArgs ? "{}" : std::string(a.trace.args.json(ra[i].args));
        std::string error;
        const std::string got = source.args_json(b.trace, rb[i].args, &error);
        ASSERT_EQ(got, want) << path << " slice " << k << "/" << r << "/" << i << " " << error;
        EXPECT_TRUE(error.empty()) << error;
        ++compared;
        located += (rb[i].args != trace::kNoArgs && b.trace.args.is_location(rb[i].args)) ? 1 : 0;
      }
    }
  }
  EXPECT_GT(compared, 0u);
  EXPECT_GT(located, 0u) << "on-demand mode kept every args text in memory";
  EXPECT_LT(b.trace.args.resident_bytes(), a.trace.args.resident_bytes());
}

TEST(ArgsOnDemand, PlainFileReadsBackWhatKeepStores) {
  TempDir dir;
  const std::string path = dir.file("plain.json");
  write_file(path, testing::trace_json(kernel_events(2000)));
  expect_same_args(path);
}

TEST(ArgsOnDemand, RecordedGzipTracesReadBack) {
  for (const char* name :
       {"flopline_h200_triton_nvtx.json.gz", "flopline_h200_cublas_driver.json.gz"}) {
    expect_same_args(std::string(FLOPLINE_TEST_DATA_DIR) + "/" + name);
  }
}

TEST(ArgsOnDemand, LargeMultiMemberGzipUsesCheckpoints) {
  TempDir dir;
  const std::string path = dir.file("big.json.gz");
  const std::string text = testing::trace_json(kernel_events(60000));  // ~25 MB: several 8 MB spans
  ASSERT_GT(text.size(), 20u << 20);
  const std::size_t cut = text.size() / 3;
  write_gzip_members(path, {text.substr(0, cut), text.substr(cut)});
  expect_same_args(path, 499);  // each read inflates up to 8 MB: a sample suffices
  ArgsSource s(path);
  s.start_indexing();
  trace::ReadOptions lazy;
  lazy.args = trace::ArgsMode::kOnDemand;
  trace::ReadResult r = trace::read_chrome_trace_file(path, lazy);
  ASSERT_TRUE(r.ok());
  (void)s.args_json(r.trace, 0);  // waits for the index
  // Members start at 0 and 1/3 (no window needed); a third of 21+ MB later comes a
  // checkpoint with its 32 KB window, which the later reads above started from.
  EXPECT_GT(s.resident_bytes(), 32768u);
}

TEST(ArgsOnDemand, AFileChangedSinceLoadingIsReportedNotMisread) {
  TempDir dir;
  const std::string path = dir.file("changing.json");
  write_file(path, testing::trace_json(kernel_events(10)));
  ArgsSource s(path);
  trace::ReadOptions lazy;
  lazy.args = trace::ArgsMode::kOnDemand;
  trace::ReadResult r = trace::read_chrome_trace_file(path, lazy);
  ASSERT_TRUE(r.ok());
  write_file(path, testing::trace_json(kernel_events(11)));
  const auto& row = r.trace.tracks[0].rows[0];
  std::string error;
  EXPECT_EQ(s.args_json(r.trace, row[0].args, &error), "{}");
  EXPECT_NE(error.find("changed"), std::string::npos) << error;
}

TEST(LoadJob, ProgressEventsAndResult) {
  TempDir dir;
  const std::string path = dir.file("trace.json");
  write_file(path, testing::trace_json(kernel_events(30000)));  // ~12 MB: several progress calls
  LoadJob job({path});
  std::uint64_t max_seen = 0;
  while (!job.done()) {
    const LoadProgress p = job.progress();
    EXPECT_LE(p.bytes_done, std::max<std::uint64_t>(p.bytes_total, 1));
    EXPECT_GE(p.fraction(), 0.0);
    EXPECT_LE(p.fraction(), 1.0);
    max_seen = std::max(max_seen, p.bytes_done);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const LoadProgress end = job.progress();
  EXPECT_EQ(end.files_done, 1u);
  EXPECT_EQ(end.files_total, 1u);
  EXPECT_EQ(end.bytes_done, end.bytes_total);
  EXPECT_EQ(end.bytes_total, fs::file_size(path));
  EXPECT_EQ(end.events, 60000u);
  EXPECT_DOUBLE_EQ(end.fraction(), 1.0);
  LoadResult r = job.take();
  EXPECT_FALSE(r.cancelled);
  ASSERT_EQ(r.files.size(), 1u);
  EXPECT_TRUE(r.errors.empty());
  EXPECT_EQ(r.files[0]->label, "trace.json");
  EXPECT_EQ(r.layout.slice_count(), 60000u);
  EXPECT_EQ(r.flows.size(), 0u);
  EXPECT_EQ(r.begin_ns, r.files[0]->trace.time_bounds().first);
  // Args stayed in the file and come back on demand.
  const trace::Trace& t = r.files[0]->trace;
  const auto& row = t.tracks[r.layout.rows().back().track].rows[0];
  EXPECT_NE(r.files[0]->args.args_json(t, row[5].args).find("\"correlation\""), std::string::npos);
}

TEST(LoadJob, CancelStopsTheReader) {
  TempDir dir;
  const std::string path = dir.file("big.json");
  write_file(path, testing::trace_json(kernel_events(40000)));
  LoadJob job({path, path});
  job.cancel();
  LoadResult r = job.take();
  EXPECT_TRUE(r.cancelled);
  EXPECT_TRUE(r.files.empty());
  EXPECT_TRUE(r.errors.empty());  // cancelling is not an error
  // The same through the progress callback of load_files.
  trace::ReadOptions ro;
  int calls = 0;
  ro.progress = [&](std::uint64_t, std::uint64_t, std::uint64_t) { return ++calls < 2; };
  LoadResult r2 = load_files({path}, {}, ro);
  EXPECT_TRUE(r2.cancelled);
  EXPECT_EQ(calls, 2);
}

TEST(LoadJob, GzipFilesShowInflateProgressAndCancel) {
  TempDir dir;
  const std::string path = dir.file("big.json.gz");
  write_gzip_members(path, {testing::trace_json(kernel_events(40000))});
  // Inflating reports the compressed bytes, then parsing takes over the bar.
  trace::ReadOptions ro;
  std::uint64_t inflated_to = 0, total = 0;
  bool parsing_started = false, inflate_after_parse = false;
  ro.inflate_progress = [&](std::uint64_t done, std::uint64_t all) {
    inflate_after_parse = inflate_after_parse || parsing_started;
    inflated_to = done;
    total = all;
    return true;
  };
  ro.progress = [&](std::uint64_t, std::uint64_t, std::uint64_t) { return parsing_started = true; };
  LoadResult r = load_files({path}, {}, ro);
  EXPECT_FALSE(r.cancelled);
  ASSERT_EQ(r.files.size(), 1u);
  EXPECT_EQ(total, fs::file_size(path));
  EXPECT_EQ(inflated_to, total);
  EXPECT_TRUE(parsing_started);
  EXPECT_FALSE(inflate_after_parse);
  // A cancel while inflating stops the load, and is not an error.
  ro.inflate_progress = [](std::uint64_t, std::uint64_t) { return false; };
  LoadResult r2 = load_files({path}, {}, ro);
  EXPECT_TRUE(r2.cancelled);
  EXPECT_TRUE(r2.files.empty());
  EXPECT_TRUE(r2.errors.empty());
  // The job's own progress ends on the parsed (decompressed) bytes, not inflating.
  LoadJob job({path});
  LoadResult r3 = job.take();
  EXPECT_EQ(r3.files.size(), 1u);
  EXPECT_FALSE(job.progress().inflating);
}

TEST(LoadJob, RunningOutOfMemoryIsAnErrorNamingTheFile) {
  TempDir dir;
  const std::string path = dir.file("big.json");
  write_file(path, testing::trace_json(kernel_events(3000)));
  trace::ReadOptions ro;
  ro.progress = [](std::uint64_t, std::uint64_t, std::uint64_t) -> bool { throw std::bad_alloc(); };
  const LoadResult r = load_files({path}, {}, ro);
  EXPECT_TRUE(r.files.empty());
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].rfind(path + ": out of memory after reading ", 0), 0u) << r.errors[0];
}

TEST(LoadJob, ErrorsCarryTheFileAndPosition) {
  TempDir dir;
  const std::string bad = dir.file("bad.json");
  write_file(bad, "{\n  \"traceEvents\": [\n    {\"ph\": \"X\", \"ts\": 1, @@@ }\n  ]\n}\n");
  const std::string good = dir.file("good.json");
  write_file(good, testing::trace_json(kernel_events(3)));
  const std::string missing = dir.file("missing.json");
  LoadJob job({bad, good, missing});
  LoadResult r = job.take();
  ASSERT_EQ(r.errors.size(), 2u);
  // "FILE:LINE:COL (byte N): REASON"
  EXPECT_TRUE(std::regex_search(r.errors[0], std::regex("bad\\.json:3:\\d+ \\(byte \\d+\\): .+")))
      << r.errors[0];
  EXPECT_NE(r.errors[1].find("missing.json"), std::string::npos) << r.errors[1];
  ASSERT_EQ(r.files.size(), 1u);  // the good file still loads
  EXPECT_EQ(r.files[0]->label, "good.json");
  EXPECT_EQ(r.layout.slice_count(), 6u);
}

TEST(LoadJob, SeveralFilesBecomeSeparateProcesses) {
  TempDir dir;
  const std::string a = dir.file("rank0.json"), b = dir.file("rank1.json");
  write_file(a, testing::trace_json(kernel_events(5)));
  write_file(b, testing::trace_json(kernel_events(7)));
  LoadResult r = load_files({a, b});
  ASSERT_EQ(r.files.size(), 2u);
  EXPECT_EQ(r.layout.slice_count(), 24u);
  ASSERT_EQ(r.layout.processes().size(), 4u);
  EXPECT_EQ(r.layout.processes()[0].name.rfind("rank0.json: ", 0), 0u);
  EXPECT_EQ(r.layout.processes()[2].name.rfind("rank1.json: ", 0), 0u);
  EXPECT_EQ(r.trace_list().size(), 2u);
  EXPECT_EQ(r.event_count(), 24u);
}

}  // namespace
}  // namespace flopline::viewer
