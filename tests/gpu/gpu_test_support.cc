#include "gpu_test_support.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>

namespace flopline::gputest {

std::string gpu_test_out_dir(const std::string& fallback) {
  const char* d = std::getenv("FLOPLINE_GPU_TEST_OUT");
  std::string dir = d != nullptr && *d != '\0' ? d : fallback;
  mkdir(dir.c_str(), 0755);
  return dir;
}

RunResult run_under_flopline(const std::string& flopline_exe, const std::string& base,
                             const std::vector<std::string>& command,
                             const std::vector<std::string>& env,
                             const std::vector<std::string>& options) {
  std::remove((base + ".json").c_str());
  std::vector<std::string> argv = {flopline_exe, "run", "-o", base + ".json"};
  argv.insert(argv.end(), options.begin(), options.end());
  argv.push_back("--");
  argv.insert(argv.end(), command.begin(), command.end());
  RunResult r;
  r.result = run_command(argv, env);
  r.files = traces_named_in(r.result.out);
  std::FILE* log = std::fopen((base + ".log").c_str(), "w");
  if (log != nullptr) {
    std::fprintf(log, "exit %d\n--- stdout\n%s\n--- stderr\n%s\n", r.result.exit_code,
                 r.result.out.c_str(), r.result.err.c_str());
    std::fclose(log);
  }
  return r;
}

TraceView must_load(const std::string& path) {
  std::string error;
  auto v = load_trace(path, &error);
  EXPECT_TRUE(v.has_value()) << path << ": " << error;
  return v ? std::move(*v) : TraceView{};
}

std::string describe(const RunResult& r) {
  return "exit " + std::to_string(r.result.exit_code) + "\nstdout:\n" + r.result.out +
         "\nstderr:\n" + r.result.err;
}

}  // namespace flopline::gputest
