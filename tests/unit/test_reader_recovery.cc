// A syntax error in the middle of a file: reading goes on at the next event, the event
// it cut is counted as skipped, the warning says where and how much was skipped, and
// the counts cover the whole file. When reading cannot go on and most of the text was
// left unread, the read is an error. Also numbers out of range: a time the model cannot
// hold skips its event, a FLOP or byte count it cannot hold is dropped; both counted.
#include <gtest/gtest.h>

#include <string>

#include "flopline/trace/chrome_reader.h"
#include "reader_test_util.h"
#include "trace/chrome_reader_impl.h"

namespace flopline::trace {
namespace {

using test::has_warning;
using test::skipped_for;

std::string event(int i, std::string_view ts = {}) {
  return R"({"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":)" +
         (ts.empty() ? std::to_string(10 * i) : std::string(ts)) + R"(,"dur":2})";
}

// n events, one per line; event `bad` (when >= 0) written with `bad_text` instead.
std::string events(int n, int bad = -1, const std::string& bad_text = {}) {
  std::string s = "[\n";
  for (int i = 0; i < n; ++i) {
    if (i > 0) s += ",\n";
    s += i == bad ? bad_text : event(i);
  }
  return s + "\n]\n";
}

const char* kCutOff = "cut off by a syntax error or the end of the file";

TEST(ReaderRecovery, AHexNumberInEventTwoCostsOneEventOfAHundredThousand) {
  const std::string text = events(100002, 1, event(1, "0x10"));
  for (auto threading : {chrome::Threading::kNever, chrome::Threading::kAlways}) {
    const ReadResult r = chrome::read_text(text, "t.json", {}, threading);
    ASSERT_TRUE(r.ok()) << r.error->message();
    const TraceReport& rep = r.trace.report;
    EXPECT_EQ(rep.events_total, 100002u);
    EXPECT_EQ(rep.events_loaded, 100001u);
    EXPECT_EQ(skipped_for(r, kCutOff), 1u);
    const std::size_t x = text.find("0x10") + 1;
    const std::size_t next = text.find("{", x);
    EXPECT_TRUE(has_warning(r, "syntax error at byte " + std::to_string(x) +
                                   " (line 3:" + std::to_string(x - text.rfind('\n', x)) +
                                   "): expected ',' or '}', found 'x'; "
                                   "reading went on at the next event, byte " +
                                   std::to_string(next) + " (" + std::to_string(next - x) +
                                   " bytes skipped)"))
        << rep.warnings.front();
    EXPECT_EQ(rep.text_bytes, text.size());
    EXPECT_EQ(rep.text_bytes_unread, next - x);
  }
}

TEST(ReaderRecovery, MissingAndDoubledCommas) {
  std::string missing = events(10);
  missing.replace(missing.find("},\n{", missing.find("\"ts\":40")), 2, "}\n");
  const ReadResult m = read_chrome_trace_text(missing, "t.json");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m.trace.report.events_loaded, 10u);
  EXPECT_EQ(m.trace.report.events_total, 10u);
  EXPECT_TRUE(has_warning(m, "expected ',' or ']' after a trace event, found '{'"));

  std::string doubled = events(10);
  doubled.replace(doubled.find("},\n{", doubled.find("\"ts\":40")), 2, "},,");
  const ReadResult d = read_chrome_trace_text(doubled, "t.json");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d.trace.report.events_loaded, 10u);
  EXPECT_EQ(skipped_for(d, kCutOff), 1u);  // the empty entry between the commas
  EXPECT_TRUE(has_warning(d, "expected a value, found ','"));
}

TEST(ReaderRecovery, ManyErrorsAreListedUpToTenThenSummed) {
  std::string text = "[\n";
  for (int i = 0; i < 100; ++i)
    text += (i ? ",\n" : "") + (i % 5 == 2 ? event(i, "tru") : event(i));
  text += "\n]";
  const ReadResult r = read_chrome_trace_text(text, "t.json");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.trace.report.events_loaded, 80u);
  EXPECT_EQ(skipped_for(r, kCutOff), 20u);
  int listed = 0;
  for (const std::string& w : r.trace.report.warnings)
    listed += w.rfind("syntax error at byte", 0) == 0;
  EXPECT_EQ(listed, 10);
  EXPECT_TRUE(has_warning(r, "10 more syntax errors read past the same way"));
}

TEST(ReaderRecovery, AnErrorInTheFirstEventIsNotFatalWhenEventsFollow) {
  const ReadResult r = read_chrome_trace_text(events(5, 0, R"({"ph":"X","ts":@})"), "t.json");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.trace.report.events_loaded, 4u);
}

TEST(ReaderRecovery, NothingUsableIsFatalAtTheFirstError) {
  const std::string text = R"([{"ph":"X","ts":@},{"ph":"X","ts":#}])";
  const ReadResult r = read_chrome_trace_text(text, "t.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error->offset, text.find('@'));
}

TEST(ReaderRecovery, MostOfTheTextUnreadIsFatalWithTheCount) {
  std::string text = events(3);
  text.resize(text.size() - 3);
  text += ",\n{\"ph\":\"X\",\"ts\":1,\"args\":[" + std::string(10000, '@') + "]}]";
  const ReadResult r = read_chrome_trace_text(text, "t.json");
  ASSERT_FALSE(r.ok());
  const std::size_t at = text.find('@');
  EXPECT_EQ(r.error->offset, at);
  EXPECT_NE(r.error->reason.find(std::to_string(text.size() - at).substr(0, 2)), std::string::npos);
  EXPECT_NE(r.error->reason.find("bytes of text ("), std::string::npos) << r.error->reason;
  EXPECT_NE(r.error->reason.find("could not be read past this and later errors"), std::string::npos)
      << r.error->reason;
  // Less than half: the events are kept, and the warning says how much was not read.
  std::string small = events(300);
  small.resize(small.size() - 3);
  small += ",\n{\"ph\":\"X\",\"ts\":1,\"args\":[@@@@]}]";
  const ReadResult k = read_chrome_trace_text(small, "t.json");
  ASSERT_TRUE(k.ok());
  EXPECT_EQ(k.trace.report.events_loaded, 300u);
  EXPECT_TRUE(
      has_warning(k, "; the 300 events before it were kept, the 7 bytes after it were not read"))
      << k.trace.report.warnings.back();
  EXPECT_EQ(k.trace.report.text_bytes_unread, 7u);
}

// ---- numbers out of range -------------------------------------------------------

TEST(ReaderRanges, DurationsTheModelCannotHoldSkipTheirEvent) {
  const ReadResult r = read_chrome_trace_text(
      R"([{"ph":"X","ts":1,"dur":1e18,"name":"a"},{"ph":"X","ts":1,"dur":1e400,"name":"b"},)"
      R"({"ph":"X","ts":9000000000000000,"dur":1000000000000000,"name":"c"},)"
      R"({"ph":"X","ts":1,"dur":"soon","name":"d"},{"ph":"X","ts":5,"dur":1e15,"name":"e"}])",
      "t.json");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(skipped_for(r, "\"dur\" out of range, nan or inf"), 3u);  // a, b, and c ends past int64
  EXPECT_EQ(r.trace.report.events_loaded, 2u);
  EXPECT_TRUE(has_warning(r, "1 X events whose dur is not a number (taken as 0)"));
}

TEST(ReaderRanges, SpansBetweenFarApartBeginAndEndSkipBoth) {
  const ReadResult r =
      read_chrome_trace_text(R"([{"ph":"B","ts":-9000000000000000,"pid":1,"tid":1,"name":"far"},)"
                             R"({"ph":"E","ts":9000000000000000,"pid":1,"tid":1},)"
                             R"({"ph":"b","ts":-9000000000000000,"cat":"c","id":1,"name":"async"},)"
                             R"({"ph":"e","ts":9000000000000000,"cat":"c","id":1,"name":"async"},)"
                             R"({"ph":"X","ts":1,"dur":1,"name":"near"}])",
                             "t.json");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(skipped_for(r, "\"dur\" out of range, nan or inf"), 4u);
  EXPECT_EQ(r.trace.report.events_loaded, 1u);
  EXPECT_EQ(r.trace.report.events_total, 5u);
}

TEST(ReaderRanges, CountsTheModelCannotHoldAreDroppedAndCounted) {
  const ReadResult r = read_chrome_trace_text(
      R"([{"ph":"X","ts":1,"dur":1,"name":"a","args":{"flops":1e400,"bytes":100}},)"
      R"({"ph":"X","ts":2,"dur":1,"name":"b","args":{"flops":-5}},)"
      R"({"ph":"X","ts":3,"dur":1,"name":"c","args":{"flops":NaN}},)"
      R"({"ph":"X","ts":4,"dur":1,"name":"d","args":{"flops":2e9}}])",
      "t.json");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.trace.report.events_loaded, 4u);
  EXPECT_TRUE(has_warning(r,
                          "3 events whose flops or bytes is negative, nan, inf, beyond the range "
                          "of a double or not a number"));
  int with_flops = 0;
  for (const Track& t : r.trace.tracks) {
    for (const auto& row : t.rows) {
      for (const Slice& s : row) {
        const SliceMetrics m = r.trace.metrics_of(s);
        if (m.flops >= 0) ++with_flops;
        if (r.trace.str(s.name) == "a") {
          EXPECT_EQ(m.bytes, 100);
        }
      }
    }
  }
  EXPECT_EQ(with_flops, 1);
}

}  // namespace
}  // namespace flopline::trace
