// Truncation sweeps: a trace cut at every byte, in the array and object forms and gzip
// (one member and two), never crashes the reader, and a cut trace that loads keeps
// exactly its complete events (a written trace that a crash cut short must give back
// everything it holds, and nothing half-read). Generated here, no fixtures.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "file_test_util.h"
#include "flopline/trace/chrome_reader.h"

namespace flopline::trace {
namespace {

using test::gzip_member;
using test::TempDir;
using test::write_bytes;

struct Form {
  std::string text;
  std::vector<std::size_t> event_ends;  // offset just past each event's closing '}'
};

// Six kernel events, one per line, as flopline writes them, in an array or an object.
Form make_form(bool object) {
  Form f;
  f.text = object ? "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n" : "[\n";
  for (int i = 0; i < 6; ++i) {
    if (i > 0) f.text += ",\n";
    f.text += "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k" + std::to_string(i) +
              "\",\"pid\":0,\"tid\":7,\"ts\":" + std::to_string(10 * i) +
              ".5,\"dur\":2.25,\"args\":{\"grid\":[1,2,3],\"flops\":" + std::to_string(1000 + i) +
              "}}";
    f.event_ends.push_back(f.text.size());
  }
  f.text += object ? "\n],\"baseTimeNanoseconds\":1700000000000000000}\n" : "\n]\n";
  return f;
}

std::size_t complete_before(const Form& f, std::size_t cut) {
  std::size_t n = 0;
  for (std::size_t end : f.event_ends) n += end <= cut;
  return n;
}

void sweep_text(bool object) {
  const Form f = make_form(object);
  for (std::size_t cut = 0; cut <= f.text.size(); ++cut) {
    const ReadResult r = read_chrome_trace_text(std::string_view(f.text).substr(0, cut), "cut");
    const std::size_t complete = complete_before(f, cut);
    if (!r.ok()) {
      // Refused only where nothing complete was there to keep.
      EXPECT_EQ(complete, 0u) << "cut at " << cut << ": " << r.error->message();
      continue;
    }
    EXPECT_EQ(r.trace.report.events_loaded, complete) << "cut at " << cut;
  }
}

TEST(ReaderTruncation, TheArrayFormKeepsExactlyItsCompleteEvents) {
  sweep_text(false);
}

TEST(ReaderTruncation, TheObjectFormKeepsExactlyItsCompleteEvents) {
  sweep_text(true);
}

// Cut gzip streams: what inflated is some prefix of the text, so the events kept never
// decrease as the cut moves on, never exceed those complete in the text, and are all
// of them for the whole stream.
void sweep_gzip(const std::string& compressed, const Form& f, std::size_t members) {
  TempDir dir;
  const std::string path = dir.file("cut.json.gz");
  std::uint64_t last = 0;
  for (std::size_t cut = 0; cut <= compressed.size(); ++cut) {
    write_bytes(path, compressed.substr(0, cut));
    const ReadResult r = read_chrome_trace_file(path);
    if (!r.ok()) continue;
    const std::uint64_t n = r.trace.report.events_loaded;
    EXPECT_LE(n, members * f.event_ends.size()) << "cut at " << cut;
    EXPECT_GE(n, last) << "cut at " << cut;
    last = n;
  }
  EXPECT_EQ(last, members * f.event_ends.size());
}

TEST(ReaderTruncation, AGzipStreamCutAnywhereKeepsWhatInflated) {
  const Form f = make_form(false);
  sweep_gzip(gzip_member(f.text, 9), f, 1);
}

TEST(ReaderTruncation, TwoGzipMembersCutAnywhereKeepWhatInflated) {
  // One trace written as two members (an append): the text of the first ends mid-array.
  const Form f = make_form(false);
  const std::size_t half = f.event_ends[2] + 2;  // after the third event and its ",\n"
  const std::string two = gzip_member(std::string_view(f.text).substr(0, half), 9) +
                          gzip_member(std::string_view(f.text).substr(half), 9);
  sweep_gzip(two, f, 1);
}

}  // namespace
}  // namespace flopline::trace
