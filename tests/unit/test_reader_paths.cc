// Paths that are not plain trace files, and files that change while they are read:
// each gets a message saying what the path is, none hangs, crashes or reads without
// bound. Also the encodings flopline does not read, named by what the bytes look like,
// and running out of memory as an error naming the file.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <new>
#include <string>
#include <thread>

#include "file_test_util.h"
#include "flopline/trace/chrome_reader.h"
#include "trace/file_io.h"
#include "trace/mapped_file.h"

namespace flopline::trace {
namespace {

using test::any_contains;
using test::gzip_member;
using test::kernels_trace;
using test::TempDir;
using test::write_bytes;

// What `cat x | flopline stats /dev/stdin` is: an anonymous pipe, plain or gzip.
class PipeInput {
 public:
  explicit PipeInput(std::string bytes) : bytes_(std::move(bytes)) {
    ::signal(SIGPIPE, SIG_IGN);  // the reader may stop before the writer is done
    EXPECT_EQ(::pipe2(fd_, O_CLOEXEC), 0);
    writer_ = std::thread([this] {
      std::size_t done = 0;
      while (done < bytes_.size()) {
        const ssize_t n = ::write(fd_[1], bytes_.data() + done, bytes_.size() - done);
        if (n <= 0) break;  // the reader closed its end
        done += static_cast<std::size_t>(n);
      }
      ::close(fd_[1]);
    });
  }
  ~PipeInput() {
    ::close(fd_[0]);
    writer_.join();
  }
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_[0]); }

 private:
  std::string bytes_;
  int fd_[2] = {-1, -1};
  std::thread writer_;
};

std::string random_bytes(std::size_t n) {
  std::string s(n, '\0');
  std::uint64_t x = 88172645463325252ull;
  for (char& c : s) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    c = static_cast<char>(x >> 24);
  }
  return s;
}

// A writer that crashed can leave zero bytes where its last text should be: the events
// before them load, and the zeros are said, not read as a syntax error over half the file.
TEST(ReaderPaths, AZeroFilledTailIsNotText) {
  TempDir dir;
  std::string text = kernels_trace(3);
  text.resize(text.size() - 4);  // cut before the closing "]}"
  const std::string path = dir.file("crashed.json");
  write_bytes(path, text + std::string(text.size() * 2, '\0'));
  const ReadResult r = read_chrome_trace_file(path);
  ASSERT_TRUE(r.ok()) << r.error->message();
  EXPECT_EQ(r.trace.report.events_loaded, 3u);
  EXPECT_TRUE(any_contains(r.trace.report.warnings, "zero bytes at the end of the file"));
}

TEST(ReaderPaths, ADirectoryIsNamedAsOne) {
  TempDir dir;
  const ReadResult r = read_chrome_trace_file(dir.path().string());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error->message(), dir.path().string() + ": is a directory, not a trace file");
}

TEST(ReaderPaths, DevicesAreReadAsStreamsThatStopAtTheirFirstBytes) {
  const ReadResult zero = read_chrome_trace_file("/dev/zero");
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.error->message(),
            "/dev/zero:1:1 (byte 0): expected a JSON object or array at top level, found byte "
            "0x00: binary "
            "data (it starts with a NUL byte) (the path is a character device, read as a stream)");
  // Random bytes, even ones that start like JSON, are given up within their first KB.
  const ReadResult random = read_chrome_trace_file("/dev/urandom");
  ASSERT_FALSE(random.ok());
  EXPECT_LT(random.error->offset, 4096u);
  for (const char* start : {"[", "{"}) {  // as if the first random byte had been a bracket
    PipeInput in(start + random_bytes(32u << 20));
    const ReadResult r = read_chrome_trace_file(in.path());
    ASSERT_FALSE(r.ok());
    EXPECT_LT(r.trace.report.text_bytes, 2u << 20);
  }
  EXPECT_NE(random.error->reason.find("(the path is a character device, read as a stream)"),
            std::string::npos)
      << random.error->reason;
  const ReadResult null = read_chrome_trace_file("/dev/null");
  ASSERT_FALSE(null.ok());
  EXPECT_EQ(null.error->reason, "file is empty (the path is a character device, read as a stream)");
}

TEST(ReaderPaths, ProcFilesAreReadThoughTheirSizeIsZero) {
  const ReadResult r = read_chrome_trace_file("/proc/self/status");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error->reason,
            "expected a JSON object or array at top level, found 'N' (the path is a file whose "
            "size reads as "
            "0, read as a stream)");
}

TEST(ReaderPaths, ANamedPipeWithoutAWriterIsGivenUp) {
  TempDir dir;
  const std::string fifo = dir.file("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  InputOptions opt;
  opt.fifo_wait_ms = 200;
  FileText text;
  std::string error;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(read_file_text(fifo, opt, text, error));
  EXPECT_EQ(error, "is a named pipe (FIFO) and nothing was written to it in 0.2 s");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
}

TEST(ReaderPaths, ANamedPipeWithAWriterIsRead) {
  TempDir dir;
  const std::string fifo = dir.file("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string trace = kernels_trace(50);
  std::thread writer([&] {
    const int fd = ::open(fifo.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(::write(fd, trace.data(), trace.size()), static_cast<ssize_t>(trace.size()));
    ::close(fd);
  });
  const ReadResult r = read_chrome_trace_file(fifo);
  writer.join();
  ASSERT_TRUE(r.ok()) << r.error->message();
  EXPECT_EQ(r.trace.report.events_loaded, 50u);
}

TEST(ReaderPaths, PipesAreReadPlainOrGzip) {
  const std::string trace = kernels_trace(3000);
  for (const std::string& bytes : {trace, gzip_member(trace)}) {
    PipeInput in(bytes);
    const ReadResult r = read_chrome_trace_file(in.path());
    ASSERT_TRUE(r.ok()) << r.error->message();
    EXPECT_EQ(r.trace.report.events_loaded, 3000u);
    EXPECT_TRUE(r.trace.report.warnings.empty()) << r.trace.report.warnings.front();
  }
}

TEST(ReaderPaths, AStreamStopsAtTheLimit) {
  std::string text = kernels_trace(3000);
  text.resize(text.size() - 4);  // no "]}": the stream goes on with more events
  for (int i = 0; i < 20; ++i) {
    text += ',';
    text += kernels_trace(3000, 3000 * (i + 1)).substr(17);
  }
  PipeInput in(text);
  ReadOptions opt;
  opt.max_text_bytes = 200000;
  const ReadResult r = read_chrome_trace_file(in.path(), opt);
  ASSERT_TRUE(r.ok()) << r.error->message();
  EXPECT_GT(r.trace.report.events_loaded, 1000u);
  EXPECT_LT(r.trace.report.events_loaded, 3000u);
  EXPECT_EQ(r.trace.report.warnings.front(),
            "stopped after 200,000 bytes of text, the most flopline takes from a stream or a .gz "
            "(the limit "
            "asked for)");
}

TEST(ReaderPaths, EndlessZerosOnAPipeStopAtOnce) {
  PipeInput in(std::string(64u << 20, '\0'));
  const ReadResult r = read_chrome_trace_file(in.path());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error->reason.find("binary data (it starts with a NUL byte) (the path is a pipe"),
            std::string::npos)
      << r.error->reason;
}

// ---- a file cut while it is mapped ------------------------------------------------

TEST(MappedFile, PagesCutAwayReadAsZerosInsteadOfSigbus) {
  TempDir dir;
  const std::string path = dir.file("cut.bin");
  write_bytes(path, std::string(1u << 20, 'x'));
  const int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  MappedFile m;
  ASSERT_TRUE(m.map(fd, 1u << 20));
  EXPECT_EQ(m.text()[4096], 'x');
  EXPECT_FALSE(m.lost_pages());
  ASSERT_EQ(::ftruncate(fd, 100000), 0);
  const std::string_view t = m.text();
  EXPECT_EQ(t[1000], 'x');  // before the cut: still the file
  EXPECT_EQ(t[(1u << 20) - 1], '\0');
  EXPECT_EQ(t[500000], '\0');
  EXPECT_TRUE(m.lost_pages());
  ::close(fd);
}

std::string thousands(std::uint64_t v) {
  std::string digits = std::to_string(v), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

TEST(ReaderPaths, AFileCutWhileItIsReadKeepsWhatWasThere) {
  TempDir dir;
  const std::string path = dir.file("shrinking.json");
  const std::string text = kernels_trace(20000);
  write_bytes(path, text);
  ReadOptions opt;
  bool cut = false;
  opt.progress = [&](std::uint64_t, std::uint64_t, std::uint64_t) {
    if (!cut) cut = ::truncate(path.c_str(), static_cast<off_t>(text.size() * 3 / 4)) == 0;
    return true;
  };
  const ReadResult r = read_chrome_trace_file(path, opt);
  ASSERT_TRUE(cut);
  ASSERT_TRUE(r.ok()) << r.error->message();
  EXPECT_GT(r.trace.report.events_loaded, 10000u);
  EXPECT_LT(r.trace.report.events_loaded, 16000u);
  EXPECT_EQ(r.trace.report.warnings.front(),
            "the file shrank from " + thousands(text.size()) + " to " +
                thousands(text.size() * 3 / 4) +
                " bytes while it was read: the text after that was not there to read");
  EXPECT_TRUE(any_contains(r.trace.report.warnings, "truncated at byte"));
}

// ---- encodings and formats --------------------------------------------------------

std::string utf16(std::string_view ascii, bool big_endian) {
  std::string out;
  for (char c : ascii) {
    if (big_endian) out += '\0';
    out += c;
    if (!big_endian) out += '\0';
  }
  return out;
}

TEST(ReaderFormats, UnsupportedEncodingsAreNamed) {
  const std::string json = R"({"traceEvents":[]})";
  const struct {
    std::string bytes;
    const char* says;
  } cases[] = {
      {"\xff\xfe" + utf16(json, false),
       "the text is UTF-16 (little-endian, with a byte order mark)"},
      {utf16(json, false), "the text is UTF-16 (little-endian, no byte order mark)"},
      {"\xfe\xff" + utf16(json, true), "the text is UTF-16 (big-endian, with a byte order mark)"},
      {utf16(json, true), "the text is UTF-16 (big-endian, no byte order mark)"},
      {std::string("\xff\xfe\x00\x00{\0\0\0", 8),
       "the text is UTF-32 (little-endian, with a byte order mark)"},
      {std::string("\x00\x00\x00{\x00\x00\x00\x22", 8),
       "the text is UTF-32 (big-endian, no byte order mark)"},
  };
  for (const auto& c : cases) {
    const ReadResult r = read_chrome_trace_text(c.bytes, "enc.json");
    ASSERT_FALSE(r.ok()) << c.says;
    EXPECT_EQ(r.error->reason.rfind(c.says, 0), 0u) << r.error->reason;
    EXPECT_NE(r.error->reason.find("iconv"), std::string::npos) << r.error->reason;
    EXPECT_EQ(r.error->offset, 0u);
  }
}

TEST(ReaderFormats, CompressedFormatsFloplineDoesNotReadAreNamed) {
  const std::string found = "expected a JSON object or array at top level, found ";
  const struct {
    std::string bytes;
    std::string reason;
  } cases[] = {
      {"\x28\xb5\x2f\xfd rest",
       found + "'(': zstd-compressed data: flopline reads gzip only (zstd -d FILE)"},
      {std::string("\xfd\x37\x7a\x58\x5a\x00", 6) + "rest",
       found + "byte 0xfd: xz-compressed data: flopline reads gzip only (xz -d FILE)"},
      {"BZh91AY&SY",
       found + "'B': bzip2-compressed data: flopline reads gzip only (bzip2 -d FILE)"},
      {"x\x9c\xab\xae\x05\x00",
       found + "'x': zlib-compressed data without a gzip header: flopline reads gzip only"},
      {"\x04\x22\x4d\x18rest",
       found + "byte 0x04: lz4-compressed data: flopline reads gzip only (lz4 -d FILE)"},
  };
  for (const auto& c : cases) {
    const ReadResult r = read_chrome_trace_text(c.bytes, "c.json");
    ASSERT_FALSE(r.ok()) << c.reason;
    EXPECT_EQ(r.error->reason, c.reason);
  }
}

// ---- memory -----------------------------------------------------------------------

TEST(ReaderMemory, RunningOutIsAnErrorNamingTheFile) {
  TempDir dir;
  const std::string path = dir.file("big.json");
  write_bytes(path, kernels_trace(5000));
  ReadOptions opt;
  opt.progress = [](std::uint64_t, std::uint64_t, std::uint64_t) -> bool {
    throw std::bad_alloc();
  };
  const ReadResult r = read_chrome_trace_file(path, opt);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error->file, path);
  EXPECT_EQ(r.error->message().rfind(path + ": out of memory after reading ", 0), 0u)
      << r.error->message();
  EXPECT_NE(r.error->reason.find("the trace needs more memory than this process can have"),
            std::string::npos);

  write_bytes(path, gzip_member(kernels_trace(5000)));
  ReadOptions gz;
  gz.inflate_progress = [](std::uint64_t, std::uint64_t) -> bool { throw std::bad_alloc(); };
  const ReadResult g = read_chrome_trace_file(path, gz);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.error->message(), path + ": out of memory while reading the file");
}

}  // namespace
}  // namespace flopline::trace
