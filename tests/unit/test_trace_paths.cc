// A directory on the command line stands for the trace files in it: `flopline stats`
// and `flopline-view` open every file of one `flopline run`.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_app.h"
#include "flopline/trace/trace_paths.h"

namespace flopline::trace {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const char* what) {
  const fs::path d = fs::temp_directory_path() /
                     (std::string("flopline-paths-") + what + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

void write_trace(const fs::path& p, const char* kernel, int dur_us) {
  std::ofstream(p) << R"({"traceEvents":[{"ph":"X","cat":"kernel","name":")" << kernel
                   << R"(","pid":0,"tid":7,"ts":1,"dur":)" << dur_us << "}]}";
}

TEST(TracePaths, ADirectoryBecomesItsTraceFilesSorted) {
  const fs::path d = fresh_dir("expand");
  write_trace(d / "flopline-rank1.json", "b", 1);
  write_trace(d / "flopline-rank0.json", "a", 1);
  std::ofstream(d / "notes.txt") << "not a trace";
  fs::create_directories(d / "sub");
  write_trace(d / "sub" / "deeper.json", "c", 1);
  std::string error;
  const auto files = expand_trace_paths({"x.json", d.string()}, &error);
  ASSERT_EQ(files.size(), 3u) << error;
  EXPECT_EQ(files[0], "x.json");  // a file stays as given, even a missing one
  EXPECT_EQ(files[1], (d / "flopline-rank0.json").string());
  EXPECT_EQ(files[2], (d / "flopline-rank1.json").string());
  fs::remove_all(d);
}

TEST(TracePaths, ADirectoryWithoutTracesIsAnErrorThatNamesIt) {
  const fs::path d = fresh_dir("empty");
  std::string error;
  EXPECT_TRUE(expand_trace_paths({d.string()}, &error).empty());
  EXPECT_NE(error.find(d.string()), std::string::npos) << error;
  EXPECT_NE(error.find("no trace files"), std::string::npos) << error;
  fs::remove_all(d);
}

TEST(TracePaths, StatsOfADirectoryAddsItsFiles) {
  const fs::path d = fresh_dir("stats");
  write_trace(d / "r0.json", "gemm", 3);
  write_trace(d / "r1.json", "gemm", 5);
  std::ostringstream out, err;
  const std::vector<std::string> args = {"stats", d.string(), "--csv"};
  EXPECT_EQ(cli::run_cli(args, out, err), 0) << err.str();
  // One row, two instances, 8 us in all.
  EXPECT_NE(out.str().find("gemm,2,8000,"), std::string::npos) << out.str();
  std::ostringstream out2, err2;
  fs::remove(d / "r0.json");
  fs::remove(d / "r1.json");
  const std::vector<std::string> args2 = {"stats", d.string()};
  EXPECT_NE(cli::run_cli(args2, out2, err2), 0);
  EXPECT_NE(err2.str().find("no trace files"), std::string::npos) << err2.str();
  fs::remove_all(d);
}

// One bad file in a run's directory (a metadata.json beside the ranks, an empty file
// left by a rank killed early) is left out by name; the other ranks are summarized.
TEST(TracePaths, AnUnreadableFileInADirectoryIsLeftOutByName) {
  const fs::path d = fresh_dir("bad");
  write_trace(d / "r0.json", "gemm", 3);
  write_trace(d / "r1.json", "gemm", 5);
  std::ofstream(d / "metadata.json") << R"({"world_size": 2})";
  std::ofstream(d / "r2.json") << "";
  std::ostringstream out, err;
  EXPECT_EQ(cli::run_cli(std::vector<std::string>{"stats", d.string(), "--csv"}, out, err), 0)
      << err.str();
  EXPECT_NE(out.str().find("gemm,2,8000,"), std::string::npos) << out.str();
  EXPECT_NE(err.str().find("left out: " + (d / "r2.json").string()), std::string::npos)
      << err.str();
  std::ostringstream tout, terr;
  EXPECT_EQ(cli::run_cli(std::vector<std::string>{"stats", d.string()}, tout, terr), 0)
      << terr.str();
  EXPECT_NE(tout.str().find("Left out:   "), std::string::npos) << tout.str();
  // Named on the command line, the same file is an error: the user asked for it.
  std::ostringstream out2, err2;
  EXPECT_NE(cli::run_cli(std::vector<std::string>{"stats", (d / "r2.json").string(),
                                                  (d / "r0.json").string()},
                         out2, err2),
            0);
  // Nothing readable at all fails.
  fs::remove(d / "r0.json");
  fs::remove(d / "r1.json");
  std::ostringstream out3, err3;
  EXPECT_NE(cli::run_cli(std::vector<std::string>{"stats", d.string()}, out3, err3), 0);
  fs::remove_all(d);
}

// A file reached twice (a symbolic link, a hard link, a directory and a file in it) is
// read once, with a note.
TEST(TracePaths, AFileReachedTwiceIsReadOnce) {
  const fs::path d = fresh_dir("twice");
  write_trace(d / "run-123.json", "gemm", 3);
  fs::create_symlink("run-123.json", d / "latest.json");
  fs::create_hard_link(d / "run-123.json", d / "copy.json");
  std::string error;
  const TraceFiles found = find_trace_files({d.string(), (d / "run-123.json").string()}, &error);
  ASSERT_EQ(found.paths.size(), 1u) << error;
  EXPECT_EQ(found.notes.size(), 3u);
  std::ostringstream out, err;
  EXPECT_EQ(cli::run_cli(std::vector<std::string>{"stats", d.string(),
                                                  (d / "run-123.json").string(), "--csv"},
                         out, err),
            0)
      << err.str();
  EXPECT_NE(out.str().find("gemm,1,3000,"), std::string::npos) << out.str();
  EXPECT_NE(err.str().find("read once"), std::string::npos) << err.str();
  fs::remove_all(d);
}

// Files are read one at a time and released; what they add up to must not change: a
// directory of many small traces, and the default categories decided over all of them
// (one file has kernels, so the CPU-only file's slices are left out of --by name).
TEST(TracePaths, ManyFilesAddUpOneAtATime) {
  const fs::path d = fresh_dir("many");
  for (int i = 0; i < 300; ++i) {
    write_trace(d / (std::to_string(1000 + i) + ".json"), "gemm", 1 + i % 3);
  }
  std::ofstream(d / "cpu_only.json")
      << R"({"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1,"dur":9}]})";
  std::ostringstream out, err;
  EXPECT_EQ(cli::run_cli(std::vector<std::string>{"stats", d.string(), "--csv"}, out, err), 0)
      << err.str();
  // 100 files each of 1, 2 and 3 us.
  EXPECT_NE(out.str().find("gemm,300,600000,"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("aten::mm"), std::string::npos) << out.str();
  std::ostringstream cout_, cerr_;
  EXPECT_EQ(cli::run_cli(std::vector<std::string>{"stats", d.string(), "--by", "category", "--csv"},
                         cout_, cerr_),
            0);
  EXPECT_NE(cout_.str().find("cpu_op,1,9000,"), std::string::npos) << cout_.str();
  fs::remove_all(d);
}

}  // namespace
}  // namespace flopline::trace
