// Helpers for the tests that go through real files: a scratch folder per test
// process, writing bytes, gzip members, and traces of N kernel events.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace flopline::trace::test {

namespace fs = std::filesystem;

// A folder of its own for each test (tests run as separate processes under ctest).
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("flopline_test_" + std::to_string(::getpid()) + "_" +
            (info ? std::string(info->test_suite_name()) + "_" + info->name() : std::string("x")));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string file(std::string_view name) const { return (dir_ / name).string(); }
  const fs::path& path() const { return dir_; }

 private:
  fs::path dir_;
};

inline void write_bytes(const std::string& path, std::string_view bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// One complete gzip member holding `text`.
inline std::string gzip_member(std::string_view text, int level = 6) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&zs, static_cast<uLong>(text.size())) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = static_cast<uInt>(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// {"traceEvents":[ n kernels k0..k(n-1), one per line, 10 us apart ]}
inline std::string kernels_trace(int n, int first = 0) {
  std::string s = "{\"traceEvents\":[\n";
  for (int i = first; i < first + n; ++i) {
    if (i > first) s += ",\n";
    s += "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k" + std::to_string(i) +
         "\",\"pid\":0,\"tid\":7,\"ts\":" + std::to_string(10 * i) + ",\"dur\":2}";
  }
  s += "\n]}\n";
  return s;
}

inline bool any_contains(const std::vector<std::string>& lines, std::string_view text) {
  for (const std::string& l : lines) {
    if (l.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace flopline::trace::test
