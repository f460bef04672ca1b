// Reading many trace files for the commands (profiler/cli/trace_loading.h): parsed ahead
// on several threads, used in order, with the same messages and the same stop at an
// unreadable file as one thread gives.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "trace_loading.h"

namespace flopline::cli {
namespace {

namespace fs = std::filesystem;

class TraceLoading : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::path(::testing::TempDir()) /
          ("flopline_trace_loading_" + std::to_string(::getpid()) + "_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  void TearDown() override { fs::remove_all(dir); }

  // A rank file with `kernels` kernels named "k<i>"; `bad` writes a file that is no trace.
  std::string write(const std::string& name, int kernels, bool bad = false) {
    const fs::path p = dir / name;
    std::ofstream f(p);
    if (bad) {
      f << "{\"traceEvents\": [ {\"ph\": ";
    } else {
      f << "{\"traceEvents\":[";
      for (int i = 0; i < kernels; ++i) {
        f << (i ? "," : "") << R"({"ph":"X","cat":"kernel","name":"k)" << i
          << R"(","pid":0,"tid":7,"ts":)" << i * 10 << R"(,"dur":5})";
      }
      f << "]}";
    }
    return p.string();
  }

  struct Seen {
    bool ok = false;
    std::vector<std::string> used;  // "path:events" in the order use() got them
    std::string err;
    std::vector<std::string> left_out;
  };
  static Seen load(const std::vector<std::string>& paths, const std::vector<bool>& skippable,
                   unsigned threads) {
    Seen s;
    std::ostringstream err;
    s.ok = for_each_trace(
        paths, err, skippable, &s.left_out,
        [&](LoadedTrace& lt) {
          s.used.push_back(lt.path + ":" + std::to_string(lt.trace->report.events_total));
        },
        threads);
    s.err = err.str();
    return s;
  }

  fs::path dir;
};

TEST_F(TraceLoading, ManyThreadsUseEveryFileInOrderAsOneThreadDoes) {
  std::vector<std::string> paths;
  std::vector<bool> skippable;
  for (int i = 0; i < 24; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "rank%02d.json", i);
    // A file that is no trace, found in a directory: left out, by name.
    paths.push_back(write(name, 1 + (i * 7) % 13, i == 5 || i == 17));
    skippable.push_back(true);
  }
  const Seen one = load(paths, skippable, 1);
  ASSERT_TRUE(one.ok) << one.err;
  ASSERT_EQ(one.used.size(), 22u);
  EXPECT_EQ(one.left_out, (std::vector<std::string>{paths[5], paths[17]}));
  for (unsigned threads : {2u, 4u, 8u, 64u}) {
    const Seen many = load(paths, skippable, threads);
    EXPECT_TRUE(many.ok) << threads;
    EXPECT_EQ(many.used, one.used) << threads;
    EXPECT_EQ(many.err, one.err) << threads;
    EXPECT_EQ(many.left_out, one.left_out) << threads;
  }
}

TEST_F(TraceLoading, AnUnreadableNamedFileStopsAtItWithAnyNumberOfThreads) {
  std::vector<std::string> paths;
  for (int i = 0; i < 12; ++i) {
    paths.push_back(write("f" + std::to_string(i) + ".json", 3, i == 6));
  }
  for (unsigned threads : {1u, 3u, 12u}) {
    const Seen s = load(paths, {}, threads);
    EXPECT_FALSE(s.ok) << threads;
    // The six files before it were used, none after.
    ASSERT_EQ(s.used.size(), 6u) << threads;
    EXPECT_EQ(s.used.back(), paths[5] + ":3");
    EXPECT_NE(s.err.find("f6.json"), std::string::npos) << s.err;
  }
  // Nothing readable at all.
  const Seen none = load({write("x.json", 0, true)}, {true}, 4);
  EXPECT_FALSE(none.ok);
  EXPECT_NE(none.err.find("no file could be read as a trace"), std::string::npos) << none.err;
}

TEST(ReadingThreads, TheVariableOrTheCoresAndNeverMoreThanTheFiles) {
  ::setenv("FLOPLINE_READ_THREADS", "3", 1);
  EXPECT_EQ(reading_threads(64), 3u);
  EXPECT_EQ(reading_threads(2), 2u);
  EXPECT_EQ(reading_threads(0), 1u);
  ::setenv("FLOPLINE_READ_THREADS", "zero", 1);  // not a number: the default
  const unsigned cores = reading_threads(1000);
  EXPECT_GE(cores, 1u);
  EXPECT_LE(cores, 16u);
  ::unsetenv("FLOPLINE_READ_THREADS");
  EXPECT_EQ(reading_threads(1000), cores);
}

}  // namespace
}  // namespace flopline::cli
