// `flopline calibrate` without a GPU or the measuring program: --help answers from the
// command itself, the program is found where a build or an install puts it, and its
// absence is said, not crashed on.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "calibrate_command.h"
#include "cli_parse.h"
#include "cli_test_util.h"

namespace flopline::cli {
namespace {

using Args = std::vector<std::string>;
using testing::CliRun;
using testing::run_flopline;

TEST(CalibrateCommand, HelpNeedsNoMeasuringProgram) {
  for (const Args& a : {Args{"calibrate", "--help"}, Args{"calibrate", "-h"},
                        Args{"help", "calibrate"}, Args{"calibrate", "--size", "512", "--help"}}) {
    const CliRun r = run_flopline(a);
    EXPECT_EQ(r.rc, kExitOk) << a.back();
    EXPECT_EQ(r.out.rfind("usage: flopline calibrate", 0), 0u) << r.out;
    for (const char* opt : {"--device", "--size", "--reps", "-o PATH", "FLOPLINE_PEAKS_FILE"}) {
      EXPECT_NE(r.out.find(opt), std::string::npos) << opt;
    }
    EXPECT_TRUE(r.err.empty()) << r.err;
  }
}

TEST(CalibrateCommand, MissingProgramIsSaid) {
  // The test binary has no flopline-calibrate beside it (the lookup starts at
  // /proc/self/exe).
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe");
  ASSERT_FALSE(find_calibrate_program(self.string()));
  const CliRun r = run_flopline({"calibrate"});
  EXPECT_EQ(r.rc, kExitFailure);
  EXPECT_NE(r.err.find("flopline-calibrate not found"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST(CalibrateCommand, ProgramBesideOrInLibexec) {
  namespace fs = std::filesystem;
  const fs::path root =
      fs::temp_directory_path() / ("flopline-calibrate-test-" + std::to_string(getpid()));
  fs::create_directories(root / "bin");
  fs::create_directories(root / "libexec" / "flopline");
  const std::string exe = (root / "bin" / "flopline").string();
  EXPECT_FALSE(find_calibrate_program(exe));
  std::ofstream(root / "libexec" / "flopline" / "flopline-calibrate") << "x";
  EXPECT_EQ(find_calibrate_program(exe).value_or(""),
            (root / "libexec" / "flopline" / "flopline-calibrate").string());
  std::ofstream(root / "bin" / "flopline-calibrate") << "x";
  EXPECT_EQ(find_calibrate_program(exe).value_or(""),
            (root / "bin" / "flopline-calibrate").string());
  EXPECT_FALSE(find_calibrate_program(""));
  fs::remove_all(root);
}

}  // namespace
}  // namespace flopline::cli
