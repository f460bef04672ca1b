// What the reader does with input that is broken or not a trace: a clear error with
// the file, line:column and byte offset when nothing could be loaded; the events
// before the damage plus a "truncated at" warning otherwise; never a crash.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "flopline/trace/chrome_reader.h"
#include "reader_test_util.h"
#include "trace/chrome_reader_impl.h"

namespace flopline::trace {
namespace {

ReadResult read(std::string_view text) {
  return read_chrome_trace_text(text, "t.json");
}

using test::has_warning;
using test::skipped_for;

TEST(ReaderErrors, EmptyFile) {
  ReadResult r = read("");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error->reason, "file is empty");
  EXPECT_EQ(r.error->message(), "t.json: file is empty");
  ReadResult ws = read(" \n\t ");
  ASSERT_FALSE(ws.ok());
  EXPECT_NE(ws.error->reason.find("empty"), std::string::npos);
}

TEST(ReaderErrors, MissingFileNamesTheFile) {
  ReadResult r = read_chrome_trace_file("/nonexistent/dir/x.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error->file, "/nonexistent/dir/x.json");
  EXPECT_EQ(r.error->message().rfind("/nonexistent/dir/x.json: ", 0), 0u) << r.error->message();
}

TEST(ReaderErrors, NotJsonAtTopLevel) {
  ReadResult png = read(std::string("\x89PNG\r\n\x1a\n\0\0", 10));
  ASSERT_FALSE(png.ok());
  EXPECT_EQ(png.error->reason, "expected a JSON object or array at top level, found byte 0x89");
  EXPECT_EQ(png.error->offset, 0u);
  EXPECT_EQ(png.error->line, 1u);
  EXPECT_EQ(png.error->column, 1u);

  ReadResult zip = read("\n\n  PK\x03\x04");
  ASSERT_FALSE(zip.ok());
  EXPECT_EQ(zip.error->reason, "expected a JSON object or array at top level, found 'P'");
  EXPECT_EQ(zip.error->message(),
            "t.json:3:3 (byte 4): expected a JSON object or array at top level, found 'P'");

  ReadResult number = read("42");
  ASSERT_FALSE(number.ok());
  EXPECT_NE(number.error->reason.find("found '4'"), std::string::npos);
}

TEST(ReaderErrors, WrongTypes) {
  ReadResult r = read("{\"traceEvents\":5}");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error->reason, "traceEvents is a number, expected an array");
  EXPECT_EQ(r.error->offset, 15u);
  EXPECT_EQ(r.error->message(),
            "t.json:1:16 (byte 15): traceEvents is a number, expected an array");

  ReadResult s = read("{\"traceEvents\":\"x\"}");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error->reason, "traceEvents is a string, expected an array");

  ReadResult none = read("{\"kind\":\"cloud trace\",\"spans\":[]}");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error->reason.find("no \"traceEvents\""), std::string::npos);
}

TEST(ReaderErrors, EntriesThatAreNotObjects) {
  ReadResult r = read("[1, \"x\", [2]]");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error->reason.find("no trace events could be read: 3 entries"), std::string::npos)
      << r.error->reason;
  EXPECT_NE(r.error->reason.find("not a JSON object"), std::string::npos);
  EXPECT_EQ(r.trace.report.events_total, 3u);

  // Mixed: the object is loaded, the others counted.
  ReadResult mixed = read(R"([1, {"ph":"X","ts":1,"dur":2,"name":"a"}, null])");
  ASSERT_TRUE(mixed.ok());
  EXPECT_EQ(mixed.trace.report.events_loaded, 1u);
  EXPECT_EQ(skipped_for(mixed, "entry is not a JSON object"), 2u);
}

TEST(ReaderErrors, TruncatedInsideAStringBeforeAnyEventIsFatal) {
  ReadResult r = read("[{\"name\":\"abc");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error->reason, "unterminated string");
  EXPECT_EQ(r.error->offset, 9u);  // the opening quote
  EXPECT_EQ(r.error->message(), "t.json:1:10 (byte 9): unterminated string");
}

TEST(ReaderErrors, TruncatedAfterEventsKeepsThem) {
  const std::string text =
      "[\n{\"ph\":\"X\",\"ts\":1,\"dur\":1,\"name\":\"a\"},\n{\"ph\":\"X\",\"ts\":2,\"dur\":1,"
      "\"name\":\"b\"},\n"
      "{\"ph\":\"X\",\"name\":\"cut";
  ReadResult r = read(text);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.trace.report.events_total, 3u);
  EXPECT_EQ(r.trace.report.events_loaded, 2u);
  EXPECT_EQ(skipped_for(r, "cut off by a syntax error or the end of the file"), 1u);
  const std::size_t quote = text.rfind('"');
  EXPECT_TRUE(has_warning(r, "truncated at byte " + std::to_string(quote) +
                                 " (line 4:" + std::to_string(quote - text.rfind('\n')) +
                                 "): unterminated string"))
      << r.trace.report.warnings.front();
  EXPECT_EQ(r.trace.slice_count(), 2u);
}

TEST(ReaderErrors, TruncatedMidNumberOrAfterKey) {
  for (const char* tail : {"{\"ph\":\"X\",\"ts\":", "{\"ph\":\"X\",\"ts\"",
                           "{\"ph\":\"X\",\"ts\":1", "{", "{\"ph\":\"X\",\"args\":{\"a\":[1,"}) {
    const std::string text = std::string("[{\"ph\":\"X\",\"ts\":1,\"name\":\"a\"},") + tail;
    ReadResult r = read(text);
    ASSERT_TRUE(r.ok()) << tail;
    EXPECT_EQ(r.trace.report.events_loaded, 1u) << tail;
    EXPECT_TRUE(has_warning(r, "truncated at byte")) << tail;
  }
}

TEST(ReaderErrors, SyntaxErrorBetweenEvents) {
  // Reading goes on at the event after the missing comma (test_reader_recovery.cc).
  ReadResult r = read(R"([{"ph":"X","ts":1,"name":"a"} {"ph":"X","ts":2}])");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.trace.report.events_loaded, 2u);
  EXPECT_TRUE(has_warning(r, "expected ',' or ']' after a trace event, found '{'"));

  ReadResult fatal = read(R"([{"ph":"X","ts":1,"name" "a"}])");
  ASSERT_FALSE(fatal.ok());
  EXPECT_EQ(fatal.error->reason, "expected ':' after an object key, found '\"'");
}

TEST(ReaderErrors, DeepNestingDoesNotCrash) {
  const std::string deep(100000, '[');
  ReadResult r = read(deep);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error->reason.find("nesting deeper than 1000"), std::string::npos) << r.error->reason;

  // Args nested past the limit cost their event; reading goes on at the next one.
  auto nested = [](int depth) {
    return R"([{"ph":"X","ts":1,"name":"a"},{"ph":"X","ts":2,"args":{"x":)" +
           std::string(depth, '[') + std::string(depth, ']') + "}}";
  };
  std::string after;
  for (int i = 0; i < 100; ++i) after += R"(,{"ph":"X","ts":3,"name":"c"})";
  ReadResult kept = read(nested(2000) + after + "]");
  ASSERT_TRUE(kept.ok()) << kept.error->message();
  EXPECT_EQ(kept.trace.report.events_loaded, 101u);
  EXPECT_TRUE(has_warning(kept, "nesting deeper than 1000"));
  // When that event holds most of the text, most of it was never read: an error.
  ReadResult most = read(nested(100000) + after + "]");
  ASSERT_FALSE(most.ok());
  EXPECT_NE(most.error->reason.find("nesting deeper than 1000"), std::string::npos);
  EXPECT_NE(most.error->reason.find("could not be read"), std::string::npos) << most.error->reason;

  std::string objects;
  for (int i = 0; i < 50000; ++i) objects += "{\"a\":";
  ReadResult obj = read(objects);
  EXPECT_FALSE(obj.ok());
}

TEST(ReaderErrors, GarbageInsideValues) {
  for (const char* text :
       {R"([{"ph":"X","ts":tru}])", R"([{"ph":"X","ts":1.}])", R"([{"ph":"X","ts":-}])",
        R"([{"ph":"X","ts":1e}])", R"([{"ph":"X" "ts":1}])", R"([{"ph":"X",,}])",
        R"([{"ph":"X","ts":1]])", "[\x01]"}) {
    ReadResult r = read(text);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_GT(r.error->line, 0u) << text;
    EXPECT_FALSE(r.error->reason.empty());
  }
}

TEST(ReaderErrors, CancelFromProgress) {
  std::string text = "[";
  for (int i = 0; i < 200000; ++i) text += R"({"ph":"X","ts":1,"dur":1,"name":"a"},)";
  text += "]";
  int calls = 0;
  ReadOptions opt;
  opt.progress = [&](std::uint64_t done, std::uint64_t total, std::uint64_t) {
    EXPECT_LE(done, total);
    return ++calls < 2;
  };
  ReadResult r = read_chrome_trace_text(text, "big.json", opt);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error->reason, "cancelled");
  EXPECT_EQ(calls, 2);
}

TEST(ReaderErrors, ProgressReachesTheEnd) {
  std::string text = "[";
  for (int i = 0; i < 300000; ++i) text += R"({"ph":"X","ts":1,"dur":1,"name":"a"},)";
  text += "]";
  std::uint64_t last_done = 0;
  std::uint64_t last_events = 0;
  int calls = 0;
  ReadOptions opt;
  opt.progress = [&](std::uint64_t done, std::uint64_t total, std::uint64_t events) {
    EXPECT_GE(done, last_done);
    EXPECT_EQ(total, text.size());
    last_done = done;
    last_events = events;
    ++calls;
    return true;
  };
  ReadResult r = read_chrome_trace_text(text, "big.json", opt);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(last_done, text.size());
  EXPECT_EQ(last_events, 300000u);
  EXPECT_GE(calls, 3);  // about every 4 MB of 11 MB, and at the end
}

// A parsing thread is used on large inputs; the model must not depend on it.
TEST(ReaderErrors, ThreadedAndSequentialReadsAgree) {
  std::string text = R"({"traceEvents":[)";
  for (int i = 0; i < 20000; ++i) {
    const std::string n = std::to_string(i);
    text += R"({"ph":"X","cat":"cpu_op","name":"op)" + std::to_string(i % 7) +
            R"(","pid":1,"tid":")" + std::to_string(i % 3) + R"(","ts":)" + n +
            R"(.5,"dur":0.25,"args":{"i":)" + n + "}},";
    text += R"({"ph":"s","id":)" + n + R"(,"pid":1,"tid":)" + std::to_string(i % 3) + R"(,"ts":)" +
            n + R"(.6,"cat":"ac2g","name":"ac2g"},)";
    text += R"({"ph":"f","id":)" + n + R"(,"pid":0,"tid":7,"ts":)" + n +
            R"(.7,"cat":"ac2g","name":"\u0061c2g","bp":"e"},)";
    text += R"({"ph":"X","cat":"kernel","name":"k\n)" + std::to_string(i % 5) +
            R"(","pid":0,"tid":7,"ts":)" + n + R"(.7,"dur":0.1},)";
  }
  text += R"(7,{"ph":"X","ts":1,"name":"cut)";
  for (const auto& input : {text, text + "\"}]}"}) {
    ReadResult a = chrome::read_text(input, "x", {}, chrome::Threading::kNever);
    ReadResult b = chrome::read_text(input, "x", {}, chrome::Threading::kAlways);
    ASSERT_TRUE(a.ok());
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(a.trace.report.events_total, b.trace.report.events_total);
    EXPECT_EQ(a.trace.report.events_loaded, b.trace.report.events_loaded);
    EXPECT_EQ(a.trace.report.skip_reasons, b.trace.report.skip_reasons);
    EXPECT_EQ(a.trace.report.warnings, b.trace.report.warnings);
    ASSERT_EQ(a.trace.tracks.size(), b.trace.tracks.size());
    for (std::size_t t = 0; t < a.trace.tracks.size(); ++t) {
      const Track& x = a.trace.tracks[t];
      const Track& y = b.trace.tracks[t];
      ASSERT_EQ(x.rows.size(), y.rows.size());
      for (std::size_t r = 0; r < x.rows.size(); ++r) {
        ASSERT_EQ(x.rows[r].size(), y.rows[r].size());
        for (std::size_t i = 0; i < x.rows[r].size(); ++i) {
          EXPECT_EQ(x.rows[r][i].start, y.rows[r][i].start);
          EXPECT_EQ(a.trace.str(x.rows[r][i].name), b.trace.str(y.rows[r][i].name));
        }
      }
    }
    ASSERT_EQ(a.trace.flows.size(), 20000u);
    ASSERT_EQ(b.trace.flows.size(), 20000u);
    EXPECT_EQ(std::count_if(b.trace.flows.begin(), b.trace.flows.end(),
                            [](const Flow& f) { return f.joined(); }),
              20000);
  }
}

}  // namespace
}  // namespace flopline::trace
