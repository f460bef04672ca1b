// Crash-safe output: each write goes to a fresh temporary file beside PATH, created
// exclusively, and is renamed over PATH only when whole. Failed writes say why and
// leave neither PATH nor a temporary file; devices are written in place.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "file_test_util.h"
#include "flopline/trace/atomic_file.h"

namespace flopline::trace {
namespace {

using test::TempDir;
using test::write_bytes;
namespace fs = std::filesystem;

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::size_t files_in(const fs::path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}

TEST(AtomicFile, EachWriterHasItsOwnTemporaryFileBesidePath) {
  TempDir dir;
  const std::string path = dir.file("out.json");
  AtomicFileWriter a, b;
  ASSERT_TRUE(a.open(path, false, 0)) << a.error();
  ASSERT_TRUE(b.open(path, false, 0)) << b.error();
  EXPECT_NE(a.temp_path(), b.temp_path());
  for (const AtomicFileWriter* w : {&a, &b}) {
    EXPECT_EQ(w->temp_path().rfind(path + ".", 0), 0u) << w->temp_path();
    EXPECT_TRUE(w->temp_path().ends_with(".tmp")) << w->temp_path();
  }
  // Interleaved: the last commit wins, whole; nothing else is left.
  ASSERT_TRUE(a.write(std::string(100000, 'a')));
  ASSERT_TRUE(b.write(std::string(50000, 'b')));
  ASSERT_TRUE(a.commit()) << a.error();
  ASSERT_TRUE(b.commit()) << b.error();
  EXPECT_EQ(read_all(path), std::string(50000, 'b'));
  EXPECT_EQ(files_in(dir.path()), 1u);
}

// A name of 250 bytes fits the file system, but not with the 21-byte temporary suffix:
// the temporary file takes a short name in the same directory.
TEST(AtomicFile, ANameNearTheLimitStillGetsItsTemporaryFile) {
  TempDir dir;
  const std::string path = dir.file(std::string(245, 'n') + ".json");
  AtomicFileWriter w;
  ASSERT_TRUE(w.open(path, false, 0)) << w.error();
  EXPECT_EQ(fs::path(w.temp_path()).parent_path(), fs::path(path).parent_path());
  EXPECT_LE(fs::path(w.temp_path()).filename().string().size(), 255u);
  ASSERT_TRUE(w.write("{}"));
  ASSERT_TRUE(w.commit()) << w.error();
  EXPECT_EQ(read_all(path), "{}");
  EXPECT_EQ(files_in(dir.path()), 1u);
}

TEST(AtomicFile, AnOutputPathIsCheckedBeforeTheWork) {
  TempDir dir;
  EXPECT_EQ(output_path_problem(dir.file("ok.png")), "");
  EXPECT_NE(output_path_problem(dir.file(std::string(300, 'n'))).find("the file name is too long"),
            std::string::npos);
  EXPECT_NE(output_path_problem(dir.file("missing/t.csv")).find("no such directory"),
            std::string::npos);
  EXPECT_NE(output_path_problem(dir.path().string()).find("is a directory"), std::string::npos);
  EXPECT_EQ(output_path_problem("/dev/null"), "");  // written in place
}

TEST(AtomicFile, ConcurrentWritersOfOnePathLeaveOneWholeFile) {
  TempDir dir;
  const std::string path = dir.file("race.json");
  const std::string x = std::string(1, '[') + std::string(300000, 'x') + "]";
  const std::string y = std::string(1, '[') + std::string(200000, 'y') + "]";
  auto writer = [&](const std::string& text) {
    for (int i = 0; i < 50; ++i) {
      std::string error;
      EXPECT_TRUE(write_file_atomic(path, text, false, 0, error)) << error;
    }
  };
  std::thread t1(writer, x), t2(writer, y);
  t1.join();
  t2.join();
  const std::string got = read_all(path);
  EXPECT_TRUE(got == x || got == y) << got.size();
  EXPECT_EQ(files_in(dir.path()), 1u);
}

TEST(AtomicFile, APlantedSymlinkAtTheOldFixedNameIsNotFollowed) {
  TempDir dir;
  const std::string path = dir.file("out.json");
  const std::string victim = dir.file("victim");
  write_bytes(victim, "precious");
  fs::create_symlink(victim, path + ".tmp");
  std::string error;
  ASSERT_TRUE(write_file_atomic(path, "{}", false, 0, error)) << error;
  EXPECT_EQ(read_all(victim), "precious");
  EXPECT_EQ(read_all(path), "{}");
  EXPECT_TRUE(fs::is_symlink(path + ".tmp"));
}

TEST(AtomicFile, PermissionsAreThoseOfANewFile) {
  TempDir dir;
  const std::string path = dir.file("perm.json");
  const mode_t old = ::umask(022);
  std::string error;
  EXPECT_TRUE(write_file_atomic(path, "{}", false, 0, error)) << error;
  ::umask(old);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST(AtomicFile, AFailedWriteSaysWhyAndLeavesTheOldFileAndNoTemporary) {
  TempDir dir;
  const std::string path = dir.file("keep.json");
  write_bytes(path, "old");
  // A file size limit makes writes past 64 KB fail (EFBIG) as a full disk would.
  ::signal(SIGXFSZ, SIG_IGN);
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  rlimit small = old;
  small.rlim_cur = 64 << 10;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string error;
  const bool ok = write_file_atomic(path, std::string(1 << 20, 'z'), false, 0, error);
  ::setrlimit(RLIMIT_FSIZE, &old);
  EXPECT_FALSE(ok);
  EXPECT_NE(error.find("File too large"), std::string::npos) << error;
  EXPECT_EQ(read_all(path), "old");
  EXPECT_EQ(files_in(dir.path()), 1u);
}

TEST(AtomicFile, DevicesAreWrittenInPlaceAndTheirErrorsReported) {
  std::string error;
  EXPECT_FALSE(write_file_atomic("/dev/full", std::string(1 << 16, 'z'), false, 0, error));
  EXPECT_EQ(error, "cannot write /dev/full: No space left on device");
  struct stat st {};
  ASSERT_EQ(::stat("/dev/full", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_TRUE(write_file_atomic("/dev/null", "{}", false, 0, error)) << error;
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));

  TempDir dir;
  EXPECT_FALSE(write_file_atomic(dir.path().string(), "{}", false, 0, error));
  EXPECT_EQ(error, "cannot write " + dir.path().string() + ": it is a directory");
}

}  // namespace
}  // namespace flopline::trace
