// gzip input: inflating in pieces, member after member, and what damage keeps. A .gz
// cut short, corrupt, or followed by a bad member gives what inflated before the
// damage with a warning saying where, as `zcat` does; the size trailer never decides
// an allocation; a bomb inflates only as far as it must.
#include <gtest/gtest.h>

#include <string>

#include "file_test_util.h"
#include "flopline/trace/chrome_reader.h"
#include "trace/file_io.h"
#include "trace/gzip_stream.h"

namespace flopline::trace {
namespace {

using test::any_contains;
using test::gzip_member;
using test::kernels_trace;
using test::TempDir;
using test::write_bytes;

std::string inflate_in_pieces(std::string_view gz, std::size_t piece, std::string& problem,
                              std::uint64_t limit = UINT64_MAX) {
  TextBuffer out;
  GzipInflater z(out, limit);
  bool stopped = false;
  for (std::size_t i = 0; i < gz.size() && !stopped; i += piece) {
    std::string_view in = gz.substr(i, piece);
    while (!in.empty() && !stopped) stopped = z.feed(in) == GzipInflater::State::kStopped;
  }
  z.finish();
  problem = z.problem();
  return std::string(out.view());
}

TEST(GzipInflater, WholeMembersInAnyPieces) {
  const std::string text = kernels_trace(300);
  const std::string two = gzip_member(text.substr(0, 1000)) + gzip_member(text.substr(1000));
  for (std::size_t piece : {1u, 2u, 7u, 4096u, 1u << 20}) {
    std::string problem;
    EXPECT_EQ(inflate_in_pieces(two, piece, problem), text) << piece;
    EXPECT_EQ(problem, "") << piece;
  }
}

TEST(GzipInflater, ZeroPaddingAfterTheLastMemberIsFine) {
  std::string problem;
  EXPECT_EQ(inflate_in_pieces(gzip_member("[1]") + std::string(512, '\0'), 100, problem), "[1]");
  EXPECT_EQ(problem, "");
}

TEST(GzipInflater, OtherBytesAfterAMemberEndTheDataWithAProblem) {
  const std::string gz = gzip_member("[1,2]");
  for (const std::string& tail :
       {std::string("garbage"), std::string("\x1f"), std::string("\x1f\x00", 2)}) {
    std::string problem;
    EXPECT_EQ(inflate_in_pieces(gz + tail, 3, problem), "[1,2]");
    EXPECT_EQ(problem, "what follows the gzip data at compressed byte " +
                           std::to_string(gz.size()) + " is not gzip (ignored)")
        << tail.size();
  }
}

TEST(GzipInflater, ACutMemberKeepsWhatInflated) {
  const std::string text = kernels_trace(2000);
  const std::string gz = gzip_member(text);
  std::string problem;
  const std::string got = inflate_in_pieces(gz.substr(0, gz.size() / 2), 4096, problem);
  EXPECT_GT(got.size(), text.size() / 4);
  EXPECT_EQ(text.compare(0, got.size(), got), 0);  // a prefix of the text
  EXPECT_EQ(problem, "the gzip data is cut off at compressed byte " +
                         std::to_string(gz.size() / 2) + " (the file is truncated)");
}

TEST(GzipInflater, CorruptDataKeepsWhatInflatedBeforeIt) {
  const std::string text = kernels_trace(2000);
  std::string gz = gzip_member(text);
  for (std::size_t i = gz.size() / 2; i < gz.size() / 2 + 64; ++i)
    gz[i] = static_cast<char>(~gz[i]);
  std::string problem;
  const std::string got = inflate_in_pieces(gz, 4096, problem);
  // Damaged data may inflate to a little garbage before zlib notices; what came before
  // the damage is the text.
  ASSERT_GT(got.size(), text.size() / 4);
  EXPECT_EQ(got.substr(0, text.size() / 4), text.substr(0, text.size() / 4));
  EXPECT_EQ(problem.rfind("the gzip data is corrupt at compressed byte ", 0), 0u) << problem;
}

TEST(GzipInflater, StopsAtTheLimitButNotForATrailerAlone) {
  const std::string text(100000, ' ');
  const std::string gz = gzip_member(text);
  std::string problem;
  EXPECT_EQ(inflate_in_pieces(gz, 10, problem, 4096).size(), 4096u);
  EXPECT_NE(problem.find("more than the limit of 4096 bytes"), std::string::npos) << problem;
  // Exactly the limit: the rest of the member is its trailer, not more text.
  EXPECT_EQ(inflate_in_pieces(gz, 10, problem, text.size()), text);
  EXPECT_EQ(problem, "");
}

// ---- through the file path ---------------------------------------------------------

TEST(ReaderGzip, AFileCutInHalfLoadsTheFirstHalfWithWarnings) {
  TempDir dir;
  const std::string text = kernels_trace(5000);
  const std::string gz = gzip_member(text);
  const std::string path = dir.file("half.json.gz");
  write_bytes(path, gz.substr(0, gz.size() / 2));
  const ReadResult r = read_chrome_trace_file(path);
  ASSERT_TRUE(r.ok()) << r.error->message();
  EXPECT_GT(r.trace.report.events_loaded, 1500u);
  EXPECT_LT(r.trace.report.events_loaded, 5000u);
  const auto& w = r.trace.report.warnings;
  ASSERT_FALSE(w.empty());
  EXPECT_EQ(w.front().rfind("the gzip data is cut off at compressed byte " +
                                std::to_string(gz.size() / 2) + " (the file is truncated); the ",
                            0),
            0u)
      << w.front();
  EXPECT_TRUE(any_contains(w, "truncated at byte")) << w.back();
}

TEST(ReaderGzip, ASyntaxErrorNearTheStartIsReadPastAsInPlainText) {
  TempDir dir;
  const std::string path = dir.file("hex.json.gz");
  std::string text = kernels_trace(3000);
  text.replace(text.find("\"ts\":10,"), 8, "\"ts\":0x10,");
  write_bytes(path, gzip_member(text));
  const ReadResult r = read_chrome_trace_file(path);
  ASSERT_TRUE(r.ok()) << r.error->message();
  EXPECT_EQ(r.trace.report.events_loaded, 2999u);
  EXPECT_EQ(r.trace.report.events_total, 3000u);
}

TEST(ReaderGzip, AGoodMemberFollowedByABadOneKeepsTheGoodOne) {
  TempDir dir;
  const std::string path = dir.file("members.json.gz");
  const std::string good = gzip_member(kernels_trace(100));
  write_bytes(path, good + "\x1f\x8b\x07\x01 compression method 7 does not exist");
  const ReadResult r = read_chrome_trace_file(path);
  ASSERT_TRUE(r.ok()) << r.error->message();
  EXPECT_EQ(r.trace.report.events_loaded, 100u);
  const std::string& w = r.trace.report.warnings.front();
  EXPECT_EQ(w.rfind("the gzip data is corrupt at compressed byte ", 0), 0u) << w;
  EXPECT_NE(
      w.find("(unknown compression method); the 7,298 bytes of text inflated before it were read"),
      std::string::npos)
      << w;

  write_bytes(path, good + "trailing text");
  const ReadResult t = read_chrome_trace_file(path);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t.trace.report.events_loaded, 100u);
  EXPECT_TRUE(any_contains(t.trace.report.warnings, "is not gzip (ignored)"));
}

TEST(ReaderGzip, TenBytesThatClaimFourGigabytesAreAnErrorAndAllocateLittle) {
  TempDir dir;
  const std::string path = dir.file("tiny.gz");
  write_bytes(path, std::string("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff", 10));
  const ReadResult r = read_chrome_trace_file(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error->message(), path +
                                    ": the gzip data is cut off at compressed byte 10 (the file is "
                                    "truncated); nothing could be inflated");

  // A whole member whose size trailer lies: 4 GB claimed for "[]".
  std::string liar = gzip_member("[]");
  liar.replace(liar.size() - 4, 4, "\xff\xff\xff\xff");
  write_bytes(path, liar);
  FileText text;
  std::string error;
  ASSERT_TRUE(read_file_text(path, {}, text, error)) << error;
  EXPECT_EQ(text.text(), "[]");
  EXPECT_LE(text.buffer.capacity(), 1u << 20);  // grown as data inflated, not as claimed
  ASSERT_EQ(text.warnings.size(), 1u);
  EXPECT_NE(text.warnings[0].find("incorrect length check"), std::string::npos) << text.warnings[0];
}

TEST(ReaderGzip, PlausibleTrailersOnlySizeTheFirstAllocation) {
  TempDir dir;
  const std::string path = dir.file("big.json.gz");
  const std::string text = kernels_trace(20000);
  write_bytes(path, gzip_member(text));
  FileText got;
  std::string error;
  ASSERT_TRUE(read_file_text(path, {}, got, error)) << error;
  EXPECT_EQ(got.text(), text);
  EXPECT_TRUE(got.warnings.empty());
  EXPECT_LT(got.buffer.capacity(), 2 * text.size() + (1u << 20));
}

TEST(ReaderGzip, ABombOfZerosStopsAtItsFirstBytes) {
  TempDir dir;
  const std::string path = dir.file("bomb.gz");
  write_bytes(path, gzip_member(std::string(64u << 20, '\0'), 9));
  FileText text;
  std::string error;
  ASSERT_TRUE(read_file_text(path, {}, text, error)) << error;
  EXPECT_LE(text.buffer.size(), 4u << 20);  // one read's worth, not 64 MB
  const ReadResult r = read_chrome_trace_file(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error->reason,
            "expected a JSON object or array at top level, found byte 0x00: binary data (it starts "
            "with a "
            "NUL byte)");
}

TEST(ReaderGzip, TextPastTheLimitIsCutWithAWarning) {
  TempDir dir;
  const std::string path = dir.file("wide.json.gz");
  const std::string events = kernels_trace(1000);
  const std::string text =
      events.substr(0, events.size() - 4) + ",\n" + std::string(8u << 20, ' ') + "]}";
  write_bytes(path, gzip_member(text));
  ReadOptions opt;
  opt.max_text_bytes = 1u << 20;
  const ReadResult r = read_chrome_trace_file(path, opt);
  ASSERT_TRUE(r.ok()) << r.error->message();
  EXPECT_EQ(r.trace.report.events_loaded, 1000u);
  EXPECT_EQ(
      r.trace.report.warnings.front(),
      "stopped after 1,048,576 bytes of text, the most flopline takes from a stream or a .gz (the "
      "limit asked for)");
}

TEST(ReaderGzip, CompressedTwiceIsNamed) {
  TempDir dir;
  const std::string path = dir.file("twice.json.gz");
  write_bytes(path, gzip_member(gzip_member(kernels_trace(10))));
  const ReadResult r = read_chrome_trace_file(path);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error->reason.find("gzip data inside the text: the file was compressed twice"),
            std::string::npos)
      << r.error->reason;
}

}  // namespace
}  // namespace flopline::trace
